"""The same model on two inputs: how much each head's attention changed (a minimal pair such as "The keys to the
cabinet is" / "are").

The change of one head is the Jensen-Shannon divergence, in bits (0 = the same attention, 1 = no key in common),
between its rows on the two inputs, averaged over the positions the inputs share: the first min(T_a, T_b) queries
over the first min(S_a, S_b) keys. A row is renormalised over those shared keys; a causal row of a shared query
already lies inside them, so for a decoder nothing is cut.
"""
from __future__ import annotations

import torch
from torch import Tensor

from .probe import AttentionPattern


def jensen_shannon(p: Tensor, q: Tensor) -> Tensor:
    """JS(p, q) = (KL(p || m) + KL(q || m)) / 2 with m = (p + q) / 2, in bits, over the last dimension (each a
    distribution); symmetric, 0 exactly when p == q, at most 1."""
    m = (p + q) / 2

    def kl(a: Tensor) -> Tensor:
        return torch.where(a > 0, a * (a.clamp_min(1e-30) / m.clamp_min(1e-30)).log2(), torch.zeros_like(a)).sum(-1)

    return ((kl(p) + kl(q)) / 2).clamp_min(0.0)


def _shared_rows(weights: Tensor, n_q: int, n_k: int) -> Tensor:
    """(L, H, n_q, n_k): the rows of the shared queries over the shared keys, each renormalised to sum to 1."""
    rows = weights[..., :n_q, :n_k].float()
    return rows / rows.sum(-1, keepdim=True).clamp_min(1e-30)


def head_divergence(a: AttentionPattern, b: AttentionPattern) -> Tensor:
    """(L, H): the mean Jensen-Shannon divergence (bits) between each head's attention on the two inputs, over
    their shared query positions (see the module's docstring). Both patterns must be of one kind and one model."""
    if a.kind != b.kind or a.shape != b.shape:
        raise ValueError(f"compare one kind of attention of one model: got {a.kind} {a.shape} and {b.kind} {b.shape}")
    n_q = min(len(a.query_tokens), len(b.query_tokens))
    n_k = min(len(a.key_tokens), len(b.key_tokens))
    return jensen_shannon(_shared_rows(a.weights, n_q, n_k), _shared_rows(b.weights, n_q, n_k)).mean(-1)  # (L, H)


def differing_positions(a: list[str], b: list[str]) -> list[int]:
    """The positions (of the shared length) where two token lists differ, then any positions only one has."""
    n = min(len(a), len(b))
    return [i for i in range(n) if a[i] != b[i]] + list(range(n, max(len(a), len(b))))
