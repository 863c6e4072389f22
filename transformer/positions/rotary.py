"""Rotary position embedding, RoPE (Su et al. 2021, "RoFormer", section 3.4).

Instead of adding a position vector to the token embedding, RoPE rotates each query and key of a head by an
angle that grows with its position. Dimensions are taken in pairs (x_2i, x_2i+1); pair i at position m turns by

    theta_i = 10000^(-2i/d_k),    angle(m, i) = m * theta_i                    (RoFormer equation 15)

    [x'_2i  ]   [cos m theta_i  -sin m theta_i] [x_2i  ]
    [x'_2i+1] = [sin m theta_i   cos m theta_i] [x_2i+1]                       (RoFormer equation 34)

Rotations compose, so the score of a query at m and a key at n depends only on m - n:
<R_m q, R_n k> = <q, R_(n-m) k>. The frequencies are those of the paper's sinusoidal table (section 3.5), per head.

Which dimensions form pair i is a layout choice. RoFormer pairs neighbours (x_2i, x_2i+1) (`rotate`, layout
"interleaved"); Llama's code in `transformers` pairs the two halves of the head, (x_i, x_i+d_k/2) (`rotate_halves`,
layout "halves", written there as x cos + rotate_half(x) sin). The two are the same rotation of permuted dimensions:
a model trained with one needs that one to read its weights. The "halves" layout also computes its angles as
`transformers` does, in float32 (`rope_angles_float32`), so a model from there gives its own outputs to the last
bit: at position 128 the float64 angles already move a Llama's logits by 2e-5.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

from .sinusoidal import BASE as ROPE_BASE  # the sinusoidal table's base: the same frequencies, per head


def rope_frequencies(d_k: int, base: float = ROPE_BASE) -> Tensor:
    """theta_i = base^(-2i/d_k) for i = 0 .. d_k/2 - 1: (d_k / 2,) radians per position."""
    if d_k % 2:
        raise ValueError(f"RoPE rotates pairs of dimensions: d_k must be even, got {d_k}")
    two_i = torch.arange(0, d_k, 2, dtype=torch.float64)  # (d_k / 2,)
    return base ** (-two_i / d_k)


def rope_angles(positions: Tensor, d_k: int, base: float = ROPE_BASE) -> Tensor:
    """angle(m, i) = m * theta_i: (len(positions), d_k / 2), in radians (float64, so long positions stay exact)."""
    return positions.to(torch.float64)[:, None] * rope_frequencies(d_k, base)[None, :]  # (T, d_k / 2)


def rope_angles_float32(positions: Tensor, d_k: int, base: float = ROPE_BASE) -> Tensor:
    """angle(m, i) = m * theta_i with theta_i and the product rounded to float32, as `transformers` computes them
    (its inv_freq = 1 / base^(2i / d_k)): (len(positions), d_k / 2)."""
    if d_k % 2:
        raise ValueError(f"RoPE rotates pairs of dimensions: d_k must be even, got {d_k}")
    theta = 1.0 / (base ** (torch.arange(0, d_k, 2, dtype=torch.int64).float() / d_k))  # (d_k / 2,) float32
    return positions.float()[:, None] * theta[None, :]  # (T, d_k / 2)


def rotate(x: Tensor, angles: Tensor) -> Tensor:
    """Rotate each pair (x_2i, x_2i+1) of the last dimension by its angle.

    x: (..., T, d_k); angles: (T, d_k / 2). Returns a tensor shaped like x, in x's dtype.
    """
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)  # (T, d_k / 2)
    x_even, x_odd = x[..., 0::2], x[..., 1::2]  # (..., T, d_k / 2) each
    out = torch.stack([x_even * cos - x_odd * sin,
                       x_even * sin + x_odd * cos], dim=-1)  # (..., T, d_k / 2, 2)
    return out.flatten(-2)  # (..., T, d_k): pairs back in their places


def rotate_halves(x: Tensor, angles: Tensor) -> Tensor:
    """Rotate each pair (x_i, x_i+d_k/2) of the last dimension by its angle (the layout of `transformers`' Llama).

        x'_i        = x_i cos(m theta_i) - x_i+d_k/2 sin(m theta_i)
        x'_i+d_k/2  = x_i sin(m theta_i) + x_i+d_k/2 cos(m theta_i)

    x: (..., T, d_k); angles: (T, d_k / 2). Returns a tensor shaped like x, in x's dtype.
    """
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)  # (T, d_k / 2)
    first, second = x.chunk(2, dim=-1)  # (..., T, d_k / 2) each
    return torch.cat([first * cos - second * sin, first * sin + second * cos], dim=-1)  # (..., T, d_k)


LAYOUTS = {"interleaved": (rotate, rope_angles), "halves": (rotate_halves, rope_angles_float32)}


class RotaryEmbedding(nn.Module):
    """Rotates queries and keys of every head by their positions (one module shared by the layers that use it).

    The cos/sin of positions below `max_len` are computed once; longer sequences get theirs computed on the fly,
    so a model may run past the length it was trained on. `base` is theta's base (`rope_theta`), `layout` which
    dimensions are paired ("interleaved", RoFormer's; "halves", Llama's).
    """

    def __init__(self, d_k: int, max_len: int, base: float = ROPE_BASE, layout: str = "interleaved"):
        super().__init__()
        self.d_k, self.base = d_k, base
        self.rotate, self.angle_rule = LAYOUTS[layout]
        self.register_buffer("angles", self.angle_rule(torch.arange(max_len), d_k, base).float(),
                             persistent=False)  # (max_len, d_k / 2)

    def angles_for(self, start: int, length: int) -> Tensor:
        """Angles of positions start .. start + length - 1: (length, d_k / 2)."""
        if start + length <= self.angles.size(0):
            return self.angles[start: start + length]
        positions = torch.arange(start, start + length, device=self.angles.device)
        return self.angle_rule(positions, self.d_k, self.base).to(self.angles.device, torch.float32)

    def forward(self, x: Tensor, start: int = 0) -> Tensor:
        """x: (B, H, T, d_k), the queries or keys of positions start .. start + T - 1."""
        return self.rotate(x, self.angles_for(start, x.size(-2)))


def rotated_dot_products(q: Tensor, k: Tensor, distances: Tensor, base: float = ROPE_BASE) -> Tensor:
    """<R_m q, R_n k> for n - m = each distance: how RoPE alone changes a query-key score with distance.

    q, k: (d_k,); distances: (N,). With q = k the score is largest at distance 0 and, for the long-term decay
    RoFormer describes (section 3.4.3), falls off in an oscillating envelope as |distance| grows.
    """
    d_k = q.numel()
    rq = rotate(q[None].double(), rope_angles(torch.zeros(1), d_k, base))  # position 0: unchanged
    rk = rotate(k[None].double().expand(len(distances), d_k), rope_angles(distances, d_k, base))  # (N, d_k)
    return (rk @ rq[0]).float()  # (N,)
