"""The one factory of a model's position scheme: which module adds absolute positions to the embeddings, and which
one every self-attention layer shares for relative positions. Exactly one of the two is not None."""
from __future__ import annotations

from dataclasses import dataclass

from torch import nn

from ..config import TransformerConfig
from .alibi import ALiBi
from .rotary import RotaryEmbedding
from .sinusoidal import LearnedPositionalEncoding, SinusoidalPositionalEncoding

RelativePosition = RotaryEmbedding | ALiBi | None


@dataclass
class PositionScheme:
    absolute: nn.Module | None  # sinusoidal / learned: added to the token embeddings, (B, T, d_model)
    relative: RelativePosition  # RoPE / ALiBi: acts inside attention, on queries and keys or on the scores


def position_scheme(cfg: TransformerConfig) -> PositionScheme:
    """The position modules of a model with config `cfg`: the paper's sinusoidal table (in `cfg.sinusoidal_layout`)
    or learned vectors (added once, to the embeddings), or RoPE over d_k (MLA: over its decoupled d_R part) or
    ALiBi's per-head slopes (one module every self-attention layer shares)."""
    if cfg.pos_encoding == "sinusoidal":
        return PositionScheme(SinusoidalPositionalEncoding(cfg.max_len, cfg.d_model, cfg.sinusoidal_layout), None)
    if cfg.pos_encoding == "learned":
        return PositionScheme(LearnedPositionalEncoding(cfg.max_len, cfg.d_model), None)
    if cfg.pos_encoding == "rope":
        return PositionScheme(None, RotaryEmbedding(cfg.d_rope or cfg.d_k, cfg.max_len, cfg.rope_theta, cfg.rope_layout))
    if cfg.pos_encoding == "alibi":
        return PositionScheme(None, ALiBi(cfg.n_heads))
    raise ValueError(f"pos_encoding: no position scheme named {cfg.pos_encoding!r}")
