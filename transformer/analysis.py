"""Numbers that describe what an attention head does, computed from its weights (T queries x S keys).

Each score takes one head's weights as a (T, S) tensor whose rows sum to 1 (or 0 for a fully masked row).
"""
from __future__ import annotations

import torch
from torch import Tensor


def entropy(w: Tensor) -> float:
    """Mean over queries of -sum_s w log w, in nats: 0 = looks at one key, log S = looks everywhere equally."""
    return float(-(w * w.clamp_min(1e-12).log()).sum(-1).mean())


def mean_distance(w: Tensor) -> float:
    """Mean over queries of sum_s w[t, s] |s - t|: how far, in positions, a head looks."""
    T, S = w.shape
    dist = (torch.arange(S)[None, :] - torch.arange(T)[:, None]).abs().to(w.dtype)  # (T, S)
    return float((w * dist).sum(-1).mean())


def _band(w: Tensor, columns: Tensor) -> float:
    rows = torch.arange(len(columns))
    valid = (columns >= 0) & (columns < w.size(1))
    return float(w[rows[valid], columns[valid]].sum() / len(columns)) if len(columns) else 0.0


def diagonal(w: Tensor) -> float:
    """Mean weight on key t for query t (copying, or attending to itself)."""
    return _band(w, torch.arange(w.size(0)))


def anti_diagonal(w: Tensor) -> float:
    """Mean weight on key S-1-t for query t (reading the input backwards)."""
    return _band(w, w.size(1) - 1 - torch.arange(w.size(0)))


def previous_token(w: Tensor) -> float:
    """Mean weight on key t-1 for queries t >= 1 (a previous-token head)."""
    return _band(w[1:], torch.arange(w.size(0) - 1)) if w.size(0) > 1 else 0.0


HEAD_SCORES = {"entropy": entropy, "mean distance": mean_distance, "diagonal": diagonal,
               "anti-diagonal": anti_diagonal, "previous token": previous_token}


def head_scores(weights: Tensor) -> dict[str, Tensor]:
    """Every score for every head: weights (L, H, T, S) -> {score name: (L, H)}."""
    L, H = weights.shape[:2]
    return {name: torch.tensor([[fn(weights[l, h].float()) for h in range(H)] for l in range(L)])
            for name, fn in HEAD_SCORES.items()}


def argmax_hit_rate(w: Tensor, expected: Tensor) -> float:
    """Fraction of queries t whose strongest key is expected[t]."""
    return float((w.argmax(-1) == expected).float().mean())
