"""The paper's fixed positional encoding (section 3.5) and the learned alternative it compares (Table 3, row E).

Both are absolute: a vector per position, added to the token embeddings before the first layer.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

BASE = 10000.0  # the paper's wavelength base; RoPE's frequencies (rotary.py) use the same one


LAYOUTS = ("interleaved", "halves")  # interleaved: the paper's sin, cos, sin, ...; halves: Marian's sines | cosines


def sinusoidal_table(max_len: int, d_model: int, layout: str = "interleaved") -> Tensor:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d_model)),  PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model))   (section 3.5)

    `layout="halves"` keeps the same waves in another order, Marian's (and fairseq's): the sines in the first half
    of the dimensions, the cosines in the second,
        PE(pos, i) = sin(pos / 10000^(2i/d_model)),  PE(pos, d_model/2 + i) = cos(pos / 10000^(2i/d_model)).
    Returns a (max_len, d_model) tensor. An odd d_model drops the last cosine column.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"sinusoidal_layout: must be one of {LAYOUTS}, got {layout!r}")
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]  # (max_len, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (ceil(d_model / 2),)
    angle = pos / BASE ** (two_i / d_model)  # (max_len, ceil(d_model / 2))
    sines, cosines = torch.sin(angle), torch.cos(angle[:, : d_model // 2])
    if layout == "halves":
        return torch.cat([sines, cosines], dim=1).float()  # (max_len, d_model)
    table = torch.zeros(max_len, d_model, dtype=torch.float64)
    table[:, 0::2] = sines
    table[:, 1::2] = cosines
    return table.float()


class SinusoidalPositionalEncoding(nn.Module):
    """Adds the fixed sinusoidal table. A buffer, not a parameter: it moves with .to() and is not trained."""

    def __init__(self, max_len: int, d_model: int, layout: str = "interleaved"):
        super().__init__()
        self.register_buffer("table", sinusoidal_table(max_len, d_model, layout), persistent=False)

    def forward(self, x: Tensor, start: int = 0) -> Tensor:
        return x + self.table[start: start + x.size(1)]  # (B, T, d_model)


class LearnedPositionalEncoding(nn.Module):
    """Adds a trained vector per position, the alternative the paper compares in Table 3, row (E)."""

    def __init__(self, max_len: int, d_model: int):
        super().__init__()
        self.table = nn.Parameter(torch.empty(max_len, d_model))

    def forward(self, x: Tensor, start: int = 0) -> Tensor:
        return x + self.table[start: start + x.size(1)]  # (B, T, d_model)
