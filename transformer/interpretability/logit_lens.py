"""The logit lens (nostalgebraist 2020): what the decoder would predict if it stopped after each layer.

The residual stream after the embedding and after each decoder layer goes through the model's final LayerNorm (a
pre-norm model has one; GPT-2's ln_f) and the unembedding, exactly as the last layer's does to give the logits,
so the last row is the model's own prediction and the earlier rows show it forming. In a post-norm model (the
paper's) every layer already ends with its own LayerNorm and there is no final one: each row reads that layer's
normalised output through the unembedding directly (`through_final_norm` is False).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from ..encoding import run_ids
from ..model import Transformer
from ..points import point_name, points
from .probe import run_record


@dataclass
class LogitLens:
    """Rows: the embedding, then each decoder layer; columns: the decoder's positions (what each one reads).

    Each cell holds the row's top token and its probability; `final` is the model's own top token at each position
    (the last row's), and `final_probs` its probability in every row: how early the model settles on it."""

    rows: list[str]  # "embedding", "layer 0", ...
    position_tokens: list[str]  # the token each decoder position reads
    top_ids: Tensor  # (rows, T)
    top_tokens: list[list[str]]  # (rows, T)
    top_probs: Tensor  # (rows, T)
    final_ids: Tensor  # (T,)
    final_tokens: list[str]
    final_probs: Tensor  # (rows, T): probability of final_ids[t] in each row
    through_final_norm: bool  # False for a post-norm model (no final LayerNorm; each layer ends with one)


def decoder_residuals(model: Transformer, input_ids: list[int], target_ids: list[int] | None = None
                      ) -> tuple[list[int], list[Tensor]]:
    """(the decoder's input ids, the residual stream (T, d_model) after the embedding and after each decoder layer)
    of one forward pass: a decoder-only model reads `input_ids`; an encoder-decoder model encodes `input_ids` (the
    source with its </s>) and its decoder reads <s> + `target_ids`."""
    cfg = model.config
    if cfg.is_encoder_only:
        raise ValueError("the logit lens reads a decoder's next-token predictions, and an encoder-only model (BERT) "
                         "has no decoder")
    names = [point_name("decoder", 0, "resid_pre")] + [point_name("decoder", i, "resid_post")
                                                          for i in range(cfg.n_decoder_layers)]
    with torch.no_grad(), points(read=names) as seen:
        run_record(model, input_ids, target_ids)  # the record's one pass; the decoder reads <s> + target, or the input
    return run_ids(cfg, input_ids, target_ids)[0][-1], [seen[n][0] for n in names]


def lens_logits(model: Transformer, residual: Tensor) -> Tensor:
    """(T, d_model) -> (T, vocab_size): the final norm (Identity for post-norm) and the unembedding."""
    with torch.no_grad():
        return model.lm_head(model.decoder_norm(residual))


def logit_lens(model: Transformer, tokenizer, input_ids: list[int], target_ids: list[int] | None = None
               ) -> LogitLens:
    """The logit lens of one input (see decoder_residuals for what the decoder reads). One row at a time, so GPT-2's
    50,257-token vocabulary never holds more than one row's logits."""
    dec_in, residuals = decoder_residuals(model, input_ids, target_ids)
    name = tokenizer.id_to_token
    final_ids = lens_logits(model, residuals[-1]).argmax(-1)  # (T,): the model's own top token at each position
    top_ids, top_probs, final_probs = [], [], []
    for residual in residuals:
        probs = torch.softmax(lens_logits(model, residual).float(), -1)  # (T, V)
        top = probs.max(-1)
        top_ids.append(top.indices)
        top_probs.append(top.values)
        final_probs.append(probs.gather(-1, final_ids[:, None])[:, 0])
    top_ids_t = torch.stack(top_ids).cpu()  # (rows, T)
    return LogitLens(rows=["embedding"] + [f"layer {i}" for i in range(len(residuals) - 1)],
                     position_tokens=[name(i) for i in dec_in], top_ids=top_ids_t,
                     top_tokens=[[name(int(i)) for i in row] for row in top_ids_t],
                     top_probs=torch.stack(top_probs).cpu(), final_ids=final_ids.cpu(),
                     final_tokens=[name(int(i)) for i in final_ids], final_probs=torch.stack(final_probs).cpu(),
                     through_final_norm=not isinstance(model.decoder_norm, torch.nn.Identity))
