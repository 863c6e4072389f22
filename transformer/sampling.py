"""What a decoding step draws from (transformer.generate): the next token's distribution, its temperature and its
top-k and nucleus (top-p) filters, and its most likely tokens."""
from __future__ import annotations

import torch
from torch import Tensor


def filter_top_k(logits: Tensor, k: int) -> Tensor:
    """Keep the k largest logits of the last dimension, set the rest to -inf."""
    kth = torch.topk(logits, min(k, logits.size(-1)), dim=-1).values[..., -1:]  # (..., 1)
    return logits.masked_fill(logits < kth, float("-inf"))


def filter_top_p(logits: Tensor, p: float) -> Tensor:
    """Nucleus filtering: keep the smallest set of most likely tokens whose probability mass is >= p."""
    sorted_logits, order = torch.sort(logits, descending=True, dim=-1)
    probs = sorted_logits.softmax(-1)
    mass_before = probs.cumsum(-1) - probs  # mass of the tokens ranked above each one
    drop_sorted = mass_before >= p  # the first token always stays (mass_before = 0)
    drop = drop_sorted.scatter(-1, order, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))


def distribution(logits: Tensor, strategy: str, temperature: float, top_k: int | None, top_p: float | None) -> Tensor:
    """The distribution the next token is drawn from (vocab_size,): softmax of the logits, for sampling divided by
    the temperature and filtered (top-k, then top-p); greedy and beam search read the plain softmax."""
    if strategy == "sample" and temperature > 0:
        logits = logits / temperature
        if top_k is not None:
            logits = filter_top_k(logits, top_k)
        if top_p is not None:
            logits = filter_top_p(logits, top_p)
    return logits.softmax(-1)


def most_likely(probs: Tensor, n: int = 5) -> list[tuple[int, float]]:
    """The n most likely tokens of a distribution (vocab_size,), (id, prob), best first."""
    values, ids = probs.topk(min(n, probs.numel()))
    return list(zip(ids.tolist(), values.tolist()))
