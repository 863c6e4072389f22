"""The layers of the encoder and the decoder (section 3.1), composed from one residual sub-layer block."""
from __future__ import annotations

from typing import Callable

import torch.nn.functional as F
from torch import Tensor, nn

from .attention import KVCache, MultiHeadAttention
from .config import TransformerConfig


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2        (equation 2; GELU instead of max(0, .) as an option)"""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, activation: str = "relu"):
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.activation = F.relu if activation == "relu" else F.gelu
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        return self.w_2(self.dropout(self.activation(self.w_1(x))))  # (B, T, d_ff) -> (B, T, d_model)


class SublayerConnection(nn.Module):
    """LayerNorm(x + Sublayer(x))   (section 3.1), with dropout on the sub-layer output (section 5.4).

    `norm_first=True` gives the pre-norm variant x + Sublayer(LayerNorm(x)) used by GPT-2 and most later models.
    The sub-layer returns (output, attention weights or None); the weights pass through untouched.
    """

    def __init__(self, d_model: int, dropout: float, norm_first: bool):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: Tensor, sublayer: Callable[[Tensor], tuple[Tensor, Tensor | None]]):
        if self.norm_first:
            out, weights = sublayer(self.norm(x))
            return x + self.dropout(out), weights
        out, weights = sublayer(x)
        return self.norm(x + self.dropout(out)), weights


def _attention(cfg: TransformerConfig) -> MultiHeadAttention:
    return MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.n_kv_heads, dropout=cfg.dropout)


class EncoderLayer(nn.Module):
    """Multi-head self-attention, then the position-wise feed-forward network, each in a SublayerConnection."""

    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.self_attn = _attention(cfg)
        self.ffn = FeedForward(cfg.d_model, cfg.d_ff, cfg.dropout, cfg.activation)
        self.sublayers = nn.ModuleList(SublayerConnection(cfg.d_model, cfg.dropout, cfg.norm_first) for _ in range(2))

    def forward(self, x: Tensor, mask: Tensor | None, need_weights: bool = False) -> tuple[Tensor, Tensor | None]:
        x, weights = self.sublayers[0](x, lambda h: self.self_attn(h, h, h, mask, need_weights))
        x, _ = self.sublayers[1](x, lambda h: (self.ffn(h), None))
        return x, weights  # (B, S, d_model), (B, H, S, S) or None


class DecoderLayer(nn.Module):
    """Masked self-attention, then attention over the encoder output, then the feed-forward network.

    With `cross_attention=False` it is the block of a decoder-only (GPT-style) model: the same layer
    without its middle sub-layer.
    """

    def __init__(self, cfg: TransformerConfig, cross_attention: bool = True):
        super().__init__()
        self.self_attn = _attention(cfg)
        self.cross_attn = _attention(cfg) if cross_attention else None
        self.ffn = FeedForward(cfg.d_model, cfg.d_ff, cfg.dropout, cfg.activation)
        n_sublayers = 3 if cross_attention else 2
        self.sublayers = nn.ModuleList(
            SublayerConnection(cfg.d_model, cfg.dropout, cfg.norm_first) for _ in range(n_sublayers))

    def forward(self, x: Tensor, tgt_mask: Tensor | None, memory: Tensor | None = None,
                memory_mask: Tensor | None = None, need_weights: bool = False,
                cache: tuple[KVCache, KVCache | None] | None = None):
        """Returns (x (B, T, d_model), self weights (B, H, T, T') or None, cross weights (B, H, T, S) or None)."""
        self_cache, cross_cache = cache if cache is not None else (None, None)
        x, self_w = self.sublayers[0](x, lambda h: self.self_attn(
            h, h, h, tgt_mask, need_weights, is_causal=True, cache=self_cache))
        cross_w = None
        if self.cross_attn is not None:
            x, cross_w = self.sublayers[1](x, lambda h: self.cross_attn(
                h, memory, memory, memory_mask, need_weights, cache=cross_cache))
        x, _ = self.sublayers[-1](x, lambda h: (self.ffn(h), None))
        return x, self_w, cross_w
