"""Token embeddings and positional encodings (sections 3.4 and 3.5 of the paper)."""
from __future__ import annotations

import math

import torch
from torch import Tensor, nn


def sinusoidal_table(max_len: int, d_model: int) -> Tensor:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d_model)),  PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model))   (section 3.5)

    Returns a (max_len, d_model) tensor. An odd d_model drops the last cosine column.
    """
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]  # (max_len, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (ceil(d_model / 2),)
    angle = pos / 10000 ** (two_i / d_model)  # (max_len, ceil(d_model / 2))
    table = torch.zeros(max_len, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return table.float()


class TokenEmbedding(nn.Module):
    """"In the embedding layers, we multiply those weights by sqrt(d_model)"   (section 3.4)

    `scale=False` leaves them unscaled, as GPT-2 does.
    """

    def __init__(self, vocab_size: int, d_model: int, scale: bool = True):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(vocab_size, d_model))
        self.scale = math.sqrt(d_model) if scale else None

    def forward(self, ids: Tensor) -> Tensor:
        x = nn.functional.embedding(ids, self.weight)  # (B, T) -> (B, T, d_model)
        return x if self.scale is None else x * self.scale


class SinusoidalPositionalEncoding(nn.Module):
    """Adds the fixed sinusoidal table. A buffer, not a parameter: it moves with .to() and is not trained."""

    def __init__(self, max_len: int, d_model: int):
        super().__init__()
        self.register_buffer("table", sinusoidal_table(max_len, d_model), persistent=False)

    def forward(self, x: Tensor, start: int = 0) -> Tensor:
        return x + self.table[start: start + x.size(1)]  # (B, T, d_model)


class LearnedPositionalEncoding(nn.Module):
    """Adds a trained vector per position, the alternative the paper compares in Table 3, row (E)."""

    def __init__(self, max_len: int, d_model: int):
        super().__init__()
        self.table = nn.Parameter(torch.empty(max_len, d_model))

    def forward(self, x: Tensor, start: int = 0) -> Tensor:
        return x + self.table[start: start + x.size(1)]  # (B, T, d_model)


def positional_encoding(kind: str, max_len: int, d_model: int) -> nn.Module | None:
    """The module adding absolute positions to the embeddings, or None for relative schemes (RoPE and ALiBi act
    inside attention: transformer/rotary.py, transformer/alibi.py)."""
    absolute = {"sinusoidal": SinusoidalPositionalEncoding, "learned": LearnedPositionalEncoding}
    return absolute[kind](max_len, d_model) if kind in absolute else None
