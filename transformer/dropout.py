"""Dropout (section 5.4), with a keep-mask that is cheap to draw on any CPU.

"We apply dropout to the output of each sub-layer, before it is added to the sub-layer input and normalized. In
addition, we apply dropout to the sums of the embeddings and the positional encodings" (section 5.4). In training
each element is zeroed with probability P_drop and the survivors are scaled by 1 / (1 - P_drop), so the expected
value of every element is unchanged; at evaluation dropout is the identity.

Why not `nn.Dropout`: on CPU its mask comes from ATen's `bernoulli_`, which uses MKL's parallel generator on Intel
CPUs only. Elsewhere (this project's AMD machine) it draws a 64-bit double per element from mt19937 on one thread:
5.0 ns per element, 23-25% of a training step (bench/RESULTS.md, section 1). Here the mask compares 16-bit random
integers with a threshold, and one 64-bit draw from the same generator gives four of them (0.8 ns per element;
the draws are 4.4% of the same step). So `p` is rounded to a multiple of 1/65536 (0.1 becomes 6554/65536 =
0.100006), and the survivors are scaled by 1 / (1 - that p), which keeps the expectation exact. Everything comes
from torch's default generator: `torch.manual_seed` decides every mask, and a seeded run is reproducible (but its
masks differ from `nn.Dropout`'s, so runs seeded before this module existed are not re-created bit for bit).

On other devices (CUDA ...) and under `torch.compile`, `F.dropout` is fast already, and is used as it is.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

LEVELS = 1 << 16  # the mask's random numbers are 16-bit: p is rounded to a multiple of 1 / LEVELS


def effective_p(p: float) -> float:
    """The drop probability the CPU mask realises: p rounded to the nearest multiple of 1/65536."""
    _check_p(p)
    return round(p * LEVELS) / LEVELS


def keep_mask(shape: tuple[int, ...], p: float) -> Tensor:
    """A bool CPU tensor of `shape`, each element True (kept) with probability 1 - effective_p(p), independently."""
    _check_p(p)
    drops = round(p * LEVELS)  # how many of the LEVELS equally likely values are dropped
    if drops == LEVELS:
        return torch.zeros(shape, dtype=torch.bool)
    n = math.prod(shape)
    words = torch.empty((n + 3) // 4, dtype=torch.int64).random_(-2 ** 63, None)  # (ceil(n/4),) 64 random bits each
    uniform = words.view(torch.int16)[:n].view(shape)  # shape, uniform on -32768 .. 32767
    return uniform >= drops - LEVELS // 2  # the lowest `drops` values are dropped


def dropout(x: Tensor, p: float, training: bool = True) -> Tensor:
    """Zero each element of x with probability p and scale the rest by 1 / (1 - p); the identity (x itself) when
    not training or p == 0. On CPU p is effective_p(p). Any shape: (B, T, d_model), (B, H, T, S) weights ..."""
    _check_p(p)
    if not training or p == 0.0:
        return x
    if x.device.type != "cpu" or torch.compiler.is_compiling():
        return F.dropout(x, p, training=True)
    drops = round(p * LEVELS)
    if drops == 0:
        return x  # p < 1/131072 rounds to no dropout
    if drops == LEVELS:
        return x * 0.0
    scale = LEVELS / (LEVELS - drops)  # 1 / (1 - effective_p)
    keep = keep_mask(x.shape, p)
    if x.dtype in (torch.float32, torch.float64):
        return x * keep.to(x.dtype).mul_(scale)  # one multiply of x forward and of its gradient backward
    # bf16/fp16 cannot hold the scale (bf16(1/0.9) = 1.109375, 0.16% low): keep, then scale in float, round once
    return (x * keep.to(x.dtype)).mul_(scale)


class Dropout(nn.Dropout):
    """nn.Dropout with the keep-mask of `dropout` above (same `p`, `train()`/`eval()`, and still an nn.Dropout)."""

    def __init__(self, p: float = 0.5):
        _check_p(p)  # nn.Dropout lets NaN through
        super().__init__(p)

    def forward(self, x: Tensor) -> Tensor:
        return dropout(x, self.p, self.training)


def _check_p(p: float) -> None:
    if not 0.0 <= p <= 1.0:  # also rejects NaN
        raise ValueError(f"dropout probability p must be between 0 and 1, got {p}")
