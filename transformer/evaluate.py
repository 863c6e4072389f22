"""Metrics of trained models: exact match on a task, how anti-diagonal `reverse` attention is, perplexity and nats
per character."""
from __future__ import annotations

import math
import random
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from .analysis import (best_head, head_scores, previous_token, random_token_ids, repeated_sequence_scores,
                       repeated_sequences)
from .data import Task, pad
from .generate import greedy_batch
from .model import Transformer
from .probe import record_ids
from .tokenization import UNK_ID


@torch.no_grad()
def exact_match(model: Transformer, tokenizer, task: Task, n: int = 1000, seed: int = 12345,
                batch_size: int = 250) -> float:
    """Fraction of n fresh examples whose greedy output equals the target exactly."""
    rng, cfg, hits = random.Random(seed), model.config, 0
    pairs = [task.sample(rng) for _ in range(n)]
    for i in range(0, n, batch_size):
        chunk = pairs[i: i + batch_size]
        src = pad([tokenizer.encode(s) + [cfg.eos_id] for s, _ in chunk], cfg.pad_id).to(model.device)
        outputs = greedy_batch(model, src, task.max_target_len + 1)
        hits += sum(tokenizer.decode(out) == t for out, (_, t) in zip(outputs, chunk))
    return hits / n


@torch.no_grad()
def reverse_anti_diagonality(model: Transformer, tokenizer, task: Task, n: int = 200, seed: int = 777) -> float:
    """For `reverse`: the anti-diagonal score (`transformer.analysis.anti_diagonal` on the text positions, the same
    definition as the app's overview) of the best cross-attention head of the last decoder layer, averaged over n
    fresh examples read with their true targets. 1.0 = output letter i puts all its weight on source letter m-1-i."""
    cfg, rng = model.config, random.Random(seed)
    total = torch.zeros(cfg.n_heads)
    for _ in range(n):
        source, target = task.sample(rng)
        pattern = record_ids(model, tokenizer, tokenizer.encode(source) + [cfg.eos_id],
                             tokenizer.encode(target)).patterns["cross"]
        total += head_scores(pattern.weights[-1:], pattern.query_text, pattern.key_text)["anti-diagonal"][0]
    return float(total.max() / n)


@dataclass(frozen=True)
class TextLoss:
    """Next-token cross-entropy of a text, summed over every predicted token, with the characters those tokens
    stand for: loss per token and perplexity depend on the tokenizer; nats per character compares char and BPE."""

    nats: float  # total over the predicted tokens
    tokens: int
    chars: int

    @property
    def loss_per_token(self) -> float:
        return self.nats / self.tokens

    @property
    def perplexity(self) -> float:
        """exp(mean loss per token): per token of this tokenizer."""
        return math.exp(self.loss_per_token)

    @property
    def nats_per_char(self) -> float:
        return self.nats / self.chars


@torch.no_grad()
def text_loss(model: Transformer, tokenizer, text: str, block_size: int | None = None,
              batch_size: int = 32) -> TextLoss:
    """Cross-entropy of `text` in one pass: the text is cut into consecutive windows of block_size tokens, each read
    from its start; every token after the first is predicted once (its window's earlier tokens as context)."""
    block_size = block_size or model.config.max_len
    ids = torch.tensor(tokenizer.encode(text))
    n_windows = (len(ids) - 1) // block_size
    if n_windows == 0:
        raise ValueError(f"the text is too short: it needs more than block_size + 1 = {block_size + 1} tokens, "
                         f"it has {len(ids)}")
    starts = [i * block_size for i in range(n_windows)]
    total = 0.0
    for i in range(0, len(starts), batch_size):
        x = torch.stack([ids[s: s + block_size] for s in starts[i: i + batch_size]]).to(model.device)  # (B, T)
        y = torch.stack([ids[s + 1: s + 1 + block_size] for s in starts[i: i + batch_size]]).to(model.device)
        logits = model(x).logits.float()  # (B, T, V)
        total += F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), reduction="sum").item()
    scored = ids[1: 1 + n_windows * block_size].tolist()  # every predicted token, once
    n_chars = sum(1 if i == UNK_ID else len(tokenizer.id_to_token(i)) for i in scored)  # <unk> stood for one char
    return TextLoss(total, len(scored), n_chars)


def nats_per_char(model: Transformer, tokenizer, text: str, block_size: int | None = None,
                  batch_size: int = 32) -> float:
    """Cross-entropy of `text` in nats per character (`text_loss`): total nats / number of characters."""
    return text_loss(model, tokenizer, text, block_size, batch_size).nats_per_char


@torch.no_grad()
def previous_token_scores(model: Transformer, tokenizer, text: str, length: int = 128) -> torch.Tensor:
    """(layers, heads) share of attention on position t-1, on the first `length` tokens of text."""
    ids = torch.tensor([tokenizer.encode(text)[: min(length, model.config.max_len)]], device=model.device)
    maps = model(ids, return_attention=True).attention.decoder_self
    return torch.tensor([[previous_token(layer[0, h].float()) for h in range(layer.size(1))] for layer in maps])


def bits(nats: float) -> float:
    return nats / math.log(2)


@torch.no_grad()
def in_context_accuracy(model: Transformer, vocab_size: int | None = None, seq_len: int | None = None,
                        n_seqs: int = 200, seed: int = 0) -> tuple[float, float]:
    """Greedy next-token accuracy of a decoder-only model on n random distinct tokens repeated twice (the sequences
    of `analysis.repeated_sequences`): (on the first copy, on the second copy).

    First copy: the tokens at positions 1..n-1, which nothing in the context predicts (chance: about 1 / the number
    of tokens drawn from). Second copy: positions n+1..2n-1, each the token that followed the earlier occurrence of
    the token before it (what an induction head predicts). Position n, where the repeat starts, counts in neither.
    """
    tokens = repeated_sequences(model, vocab_size, seq_len, n_seqs, seed)  # (B, 2n)
    n = tokens.size(1) // 2
    hits = model(tokens[:, :-1]).logits.argmax(-1) == tokens[:, 1:]  # (B, 2n - 1); column i scores position i + 1
    return float(hits[:, : n - 1].float().mean()), float(hits[:, n:].float().mean())


def induction_metrics(model: Transformer, seq_len: int | None = None, n_seqs: int = 200, seed: int = 2024) -> dict:
    """What the `induction` checkpoint's card states, measured on n_seqs fresh repeated random sequences: the best
    previous-token head and the best induction head ("layer.head" and score), every head's detector scores, and
    the in-context accuracy on each copy beside chance (1 / the number of tokens drawn from)."""
    tokens = repeated_sequences(model, seq_len=seq_len, n_seqs=n_seqs, seed=seed)
    seq_len = tokens.size(1) // 2
    scores = repeated_sequence_scores(model, seq_len=seq_len, n_seqs=n_seqs, seed=seed)
    first, second = in_context_accuracy(model, seq_len=seq_len, n_seqs=n_seqs, seed=seed)
    n_ids = len(random_token_ids(model.config))
    prev_head, prev = best_head(scores["previous token"])
    ind_head, ind = best_head(scores["induction"])
    table = {name.replace(" ", "_") + "_score": [[round(v, 3) for v in row] for row in s.tolist()]
             for name, s in scores.items()}
    return {"previous_token_head": prev_head, "previous_token_head_score": round(prev, 3),
            "induction_head": ind_head, "induction_head_score": round(ind, 3),
            "in_context_accuracy_first_copy": round(first, 3), "in_context_accuracy_second_copy": round(second, 3),
            "chance_accuracy": round(1 / n_ids, 3),
            "measured_on": f"{n_seqs} fresh sequences of {seq_len} random distinct tokens repeated twice (seed {seed})",
            **table}
