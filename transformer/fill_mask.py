"""Fill the mask: what an encoder-only (BERT-style) model predicts for each [MASK] of a text."""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from .encoding import with_eos
from .model import HeadMask, Transformer


@dataclass
class MaskGuess:
    """The top candidates for one [MASK]: its position in the model's input ([CLS] is position 0) and
    (token, token id, probability) from the most likely down."""

    position: int
    candidates: list[tuple[str, int, float]]


@torch.no_grad()
def fill_mask(model: Transformer, tokenizer, text: str, top_k: int = 5) -> list[MaskGuess]:
    """P(token | every other token of [CLS] text [SEP]) at each [MASK] of `text`: softmax of the masked-LM logits
    there, its `top_k` tokens. Raises ValueError for a model that is not encoder-only, a text without the mask
    token, or a text longer than the model's positions."""
    if not model.config.is_encoder_only:
        raise ValueError(f"fill the mask needs an encoder-only (BERT-style) model; this one is {model.config.arch}")
    if not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= model.config.vocab_size:
        raise ValueError(f"top_k: must be an integer in [1, {model.config.vocab_size}], got {top_k!r}")
    ids = with_eos(tokenizer.encode(text), model.config)  # [CLS] text [SEP]
    positions = [i for i, t in enumerate(ids) if t == tokenizer.mask_id]
    if not positions:
        raise ValueError(f"write {tokenizer.mask_token} where a word is missing: the text has no mask token")
    if len(ids) > model.config.max_len:
        raise ValueError(f"the text is {len(ids)} tokens with [CLS] and [SEP]; this model reads at most "
                         f"{model.config.max_len}")
    logits = model(torch.tensor([ids], device=model.device)).logits[0]  # (S, vocab_size)
    probs = logits[positions].softmax(-1)  # (masks, vocab_size)
    top = probs.topk(top_k, dim=-1)
    return [MaskGuess(p, [(tokenizer.id_to_token(int(i)), int(i), float(q)) for q, i in zip(values, indices)])
            for p, values, indices in zip(positions, top.values, top.indices)]


@torch.no_grad()
def masked_one_at_a_time(model: Transformer, tokenizer, ids: list[int], head_mask: HeadMask | None = None
                         ) -> tuple[list[int], float]:
    """Each token between [CLS] and [SEP] of `ids` hidden in turn (written [MASK]), all in one batch: the model's
    guess for each, and the mean of -log P(the hidden token | every other token) in nats (the pseudo-log-likelihood
    of Salazar et al. 2020, negated and averaged): how well an encoder-only model reads the text back."""
    if len(ids) < 3:
        raise ValueError("give a text of at least one token between [CLS] and [SEP]")
    x = torch.tensor(ids, device=model.device)  # (S,)
    positions = torch.arange(1, len(ids) - 1, device=model.device)  # (P,): the text tokens
    batch = x.repeat(len(positions), 1)  # (P, S)
    batch[torch.arange(len(positions)), positions] = tokenizer.mask_id  # row i hides position i + 1
    logits = model(batch, head_mask=head_mask).logits.float()[torch.arange(len(positions)), positions]  # (P, V)
    return logits.argmax(-1).tolist(), F.cross_entropy(logits, x[positions]).item()
