"""Attention with Linear Biases, ALiBi (Press, Smith and Lewis 2022, "Train Short, Test Long", section 3).

No position vector is added anywhere. Each head h adds a fixed penalty, proportional to the distance between a
query i and a key j, to the attention scores before the softmax:

    softmax(q_i K^T / sqrt(d_k) + m_h * [-(i - 1), ..., -2, -1, 0])                (section 3)

The slopes m_h form a geometric sequence: for n heads (a power of two) it starts at 2^(-8/n) and multiplies by
2^(-8/n) each head (8 heads: 1/2, 1/4, ..., 1/256). For other head counts the paper takes the slopes of the
nearest smaller power of two and then every other slope of the next one. Because nothing depends on an absolute
position, a model trained on length L runs on longer inputs.
"""
from __future__ import annotations

import math

import torch
from torch import Tensor, nn


def alibi_slopes(n_heads: int) -> Tensor:
    """The head-specific slopes m_1 .. m_n of the paper: (n_heads,)."""
    if n_heads < 1:
        raise ValueError(f"n_heads must be >= 1, got {n_heads}")

    def geometric(n: int) -> list[float]:
        start = 2 ** (-8 / n)
        return [start ** (h + 1) for h in range(n)]

    if math.log2(n_heads).is_integer():
        return torch.tensor(geometric(n_heads))
    closest = 2 ** math.floor(math.log2(n_heads))
    extra = geometric(2 * closest)[0::2][: n_heads - closest]
    return torch.tensor(geometric(closest) + extra)


def alibi_bias(slopes: Tensor, query_positions: Tensor, key_positions: Tensor) -> Tensor:
    """-m_h * |i - j| for every head h, query position i and key position j: (H, T, S).

    For a causal decoder (j <= i) this is the paper's -m_h (i - j); keys after the query are masked anyway.
    An encoder (both directions) gets the same penalty for the same distance either way.
    """
    distance = (query_positions[:, None] - key_positions[None, :]).abs()  # (T, S)
    return -slopes[:, None, None] * distance[None].to(slopes.dtype)  # (H, T, S)


class ALiBi(nn.Module):
    """The bias of every head for queries at positions start .. start + T - 1 over keys 0 .. S - 1."""

    def __init__(self, n_heads: int):
        super().__init__()
        self.register_buffer("slopes", alibi_slopes(n_heads), persistent=False)  # (H,)

    def forward(self, T: int, S: int, start: int | None = None) -> Tensor:
        """(H, T, S). `start` None: the queries are the last T of the S positions (self-attention with a cache)."""
        start = S - T if start is None else start
        device = self.slopes.device
        return alibi_bias(self.slopes, torch.arange(start, start + T, device=device), torch.arange(S, device=device))
