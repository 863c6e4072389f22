"""Token embeddings (section 3.4 of the paper). Positional encodings live in transformer/positions/."""
from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .positions.sinusoidal import sinusoidal_table  # noqa: F401  (the public path: transformer.embeddings.sinusoidal_table)


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


class TokenTypes(nn.Module):
    """BERT's token-type (segment) embeddings: one vector per type, added to each token's embedding. Every input
    here is one text, segment A, so row 0 is added to every position. (Devlin et al. 2019, section 3)"""

    def __init__(self, type_vocab_size: int, d_model: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(type_vocab_size, d_model))

    def forward(self, x: Tensor) -> Tensor:
        return x + self.weight[0]  # (B, T, d_model): segment A
