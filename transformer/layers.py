"""The layers of the encoder and the decoder (section 3.1), composed from one residual sub-layer block."""
from __future__ import annotations

from functools import partial
from typing import Callable

import torch.nn.functional as F
from torch import Tensor, nn

from .attention import KVCache, MultiHeadAttention, RelativePosition
from .config import TransformerConfig
from .dropout import Dropout
from .latent_attention import MultiHeadLatentAttention


ACTIVATION_FUNCTIONS = {"relu": F.relu, "gelu": F.gelu,
                        "gelu_tanh": partial(F.gelu, approximate="tanh")}  # GPT-2's GELU: the tanh approximation


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2        (equation 2; GELU instead of max(0, .) as an option)"""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, activation: str = "relu"):
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.activation = ACTIVATION_FUNCTIONS[activation]
        self.dropout = Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        return self.w_2(self.dropout(self.activation(self.w_1(x))))  # (B, T, d_ff) -> (B, T, d_model)


class SublayerConnection(nn.Module):
    """LayerNorm(x + Sublayer(x))   (section 3.1), with dropout on the sub-layer output (section 5.4).

    `norm_first=True` gives the pre-norm variant x + Sublayer(LayerNorm(x)) used by GPT-2 and most later models.
    The sub-layer returns (output, attention weights or None); the weights pass through untouched.
    """

    def __init__(self, d_model: int, dropout: float, norm_first: bool, eps: float = 1e-5):
        super().__init__()
        self.norm = nn.LayerNorm(d_model, eps=eps)
        self.dropout = Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: Tensor, sublayer: Callable[[Tensor], tuple[Tensor, Tensor | None]]):
        if self.norm_first:
            out, weights = sublayer(self.norm(x))
            return x + self.dropout(out), weights
        out, weights = sublayer(x)
        return self.norm(x + self.dropout(out)), weights


def _attention(cfg: TransformerConfig, position: RelativePosition = None
               ) -> MultiHeadAttention | MultiHeadLatentAttention:
    """The attention sub-layer `cfg.attention` names; `position` (RoPE or ALiBi) only for self-attention."""
    if cfg.attention == "mla":
        return MultiHeadLatentAttention(cfg.d_model, cfg.n_heads, cfg.kv_latent_dim, dropout=cfg.dropout,
                                        bias=cfg.attention_bias, position=position)
    return MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.n_kv_heads, dropout=cfg.dropout,
                              bias=cfg.attention_bias, position=position)


def _feed_forward(cfg: TransformerConfig) -> FeedForward | None:
    """The layer's FFN, or None for an attention-only layer (`cfg.attention_only`: no FFN sub-layer at all)."""
    return None if cfg.attention_only else FeedForward(cfg.d_model, cfg.d_ff, cfg.dropout, cfg.activation)


class EncoderLayer(nn.Module):
    """Multi-head self-attention, then the position-wise feed-forward network, each in a SublayerConnection.

    With `cfg.attention_only` the layer is its attention sub-layer alone. `position`: the model's RoPE or ALiBi.
    """

    def __init__(self, cfg: TransformerConfig, position: RelativePosition = None):
        super().__init__()
        self.self_attn = _attention(cfg, position)
        self.ffn = _feed_forward(cfg)
        n_sublayers = 1 if self.ffn is None else 2
        self.sublayers = nn.ModuleList(SublayerConnection(cfg.d_model, cfg.dropout, cfg.norm_first, cfg.layer_norm_eps)
                                       for _ in range(n_sublayers))

    def forward(self, x: Tensor, mask: Tensor | None, need_weights: bool = False,
                head_mask: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        x, weights = self.sublayers[0](x, lambda h: self.self_attn(h, h, h, mask, need_weights, head_mask=head_mask))
        if self.ffn is not None:
            x, _ = self.sublayers[1](x, lambda h: (self.ffn(h), None))
        return x, weights  # (B, S, d_model), (B, H, S, S) or None


class DecoderLayer(nn.Module):
    """Masked self-attention, then attention over the encoder output, then the feed-forward network.

    With `cross_attention=False` it is the block of a decoder-only (GPT-style) model: the same layer
    without its middle sub-layer. With `cfg.attention_only` it has no feed-forward sub-layer either.
    """

    def __init__(self, cfg: TransformerConfig, cross_attention: bool = True, position: RelativePosition = None):
        super().__init__()
        self.self_attn = _attention(cfg, position)
        self.cross_attn = _attention(cfg) if cross_attention else None
        self.ffn = _feed_forward(cfg)
        n_sublayers = 1 + (self.cross_attn is not None) + (self.ffn is not None)
        self.sublayers = nn.ModuleList(SublayerConnection(cfg.d_model, cfg.dropout, cfg.norm_first, cfg.layer_norm_eps)
                                       for _ in range(n_sublayers))

    def forward(self, x: Tensor, tgt_mask: Tensor | None, memory: Tensor | None = None,
                memory_mask: Tensor | None = None, need_weights: bool = False,
                cache: tuple[KVCache, KVCache | None] | None = None,
                head_mask: tuple[Tensor | None, Tensor | None] = (None, None)):
        """Returns (x (B, T, d_model), self weights (B, H, T, T_k) or None, cross weights (B, H, T, S) or None).
        T_k is the number of keys self-attention read: T, or with a KV cache the cached positions plus these T.
        `head_mask` = (self-attention heads, cross-attention heads), each (H,) with 0 for a switched-off head."""
        self_cache, cross_cache = cache if cache is not None else (None, None)
        self_heads, cross_heads = head_mask
        x, self_w = self.sublayers[0](x, lambda h: self.self_attn(
            h, h, h, tgt_mask, need_weights, is_causal=True, cache=self_cache, head_mask=self_heads))
        cross_w = None
        if self.cross_attn is not None:
            x, cross_w = self.sublayers[1](x, lambda h: self.cross_attn(
                h, memory, memory, memory_mask, need_weights, cache=cross_cache, head_mask=cross_heads))
        if self.ffn is not None:
            x, _ = self.sublayers[-1](x, lambda h: (self.ffn(h), None))
        return x, self_w, cross_w
