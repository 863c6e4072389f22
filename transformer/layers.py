"""The layers of the encoder and the decoder (section 3.1), composed from one residual sub-layer block."""
from __future__ import annotations

from functools import partial
from typing import Callable

import torch.nn.functional as F
from torch import Tensor, nn

from .attention import KVCache, MultiHeadAttention, RelativePosition
from .config import TransformerConfig
from .dropout import Dropout
from .gated_feedforward import SwiGLU
from .latent_attention import MultiHeadLatentAttention
from .norms import make_norm
from .points import Point


ACTIVATION_FUNCTIONS = {"relu": F.relu, "gelu": F.gelu,
                        "gelu_tanh": partial(F.gelu, approximate="tanh"),  # GPT-2's GELU: the tanh approximation
                        "silu": F.silu}  # SiLU(x) = x sigmoid(x), Marian's "swish"


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2        (equation 2; GELU or SiLU instead of max(0, .) as options)"""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, activation: str = "relu", bias: bool = True):
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff, bias=bias)
        self.w_2 = nn.Linear(d_ff, d_model, bias=bias)
        self.activation = ACTIVATION_FUNCTIONS[activation]
        self.dropout = Dropout(dropout)
        self.out = Point()  # the FFN's output (transformer/points.py)

    def forward(self, x: Tensor) -> Tensor:
        return self.out(self.w_2(self.dropout(self.activation(self.w_1(x)))))  # (B, T, d_ff) -> (B, T, d_model)


class SublayerConnection(nn.Module):
    """LayerNorm(x + Sublayer(x))   (section 3.1), with dropout on the sub-layer output (section 5.4).

    `norm_first=True` gives the pre-norm variant x + Sublayer(LayerNorm(x)) used by GPT-2 and most later models.
    `norm` replaces the LayerNorm (Llama's RMSNorm: transformer/norms.py).
    """

    def __init__(self, d_model: int, dropout: float, norm_first: bool, eps: float = 1e-5,
                 norm: nn.Module | None = None):
        super().__init__()
        self.norm = nn.LayerNorm(d_model, eps=eps) if norm is None else norm
        self.dropout = Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: Tensor, sublayer: Callable[[Tensor], Tensor]) -> Tensor:
        if self.norm_first:
            return x + self.dropout(sublayer(self.norm(x)))
        return self.norm(x + self.dropout(sublayer(x)))


def _attention(cfg: TransformerConfig, position: RelativePosition = None
               ) -> MultiHeadAttention | MultiHeadLatentAttention:
    """The attention sub-layer `cfg.attention` names; `position` (RoPE or ALiBi) only for self-attention."""
    if cfg.attention == "mla":
        return MultiHeadLatentAttention(cfg.d_model, cfg.n_heads, cfg.kv_latent_dim, dropout=cfg.dropout,
                                        bias=cfg.attention_bias, position=position)
    return MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.n_kv_heads, dropout=cfg.dropout,
                              bias=cfg.attention_bias, position=position)


def _feed_forward(cfg: TransformerConfig) -> FeedForward | SwiGLU | None:
    """The layer's FFN (equation 2, or SwiGLU for `cfg.ffn` "swiglu"), or None for an attention-only layer
    (`cfg.attention_only`: no FFN sub-layer at all)."""
    if cfg.attention_only:
        return None
    if cfg.ffn == "swiglu":
        return SwiGLU(cfg.d_model, cfg.d_ff, cfg.dropout, bias=cfg.ffn_bias)
    return FeedForward(cfg.d_model, cfg.d_ff, cfg.dropout, cfg.activation, bias=cfg.ffn_bias)


def _sublayers(cfg: TransformerConfig, n: int) -> nn.ModuleList:
    """n residual sub-layer blocks with the config's dropout, norm placement and norm."""
    return nn.ModuleList(SublayerConnection(cfg.d_model, cfg.dropout, cfg.norm_first, cfg.layer_norm_eps,
                                            norm=make_norm(cfg)) for _ in range(n))


class EncoderLayer(nn.Module):
    """Multi-head self-attention, then the position-wise feed-forward network, each in a SublayerConnection.

    With `cfg.attention_only` the layer is its attention sub-layer alone. `position`: the model's RoPE or ALiBi.
    Named points (transformer/points.py): resid_pre, resid_mid (after self-attention), resid_post.
    """

    def __init__(self, cfg: TransformerConfig, position: RelativePosition = None):
        super().__init__()
        self.resid_pre = Point()  # named points in the order the forward pass visits them
        self.self_attn = _attention(cfg, position)
        self.resid_mid = Point()
        self.ffn = _feed_forward(cfg)
        self.resid_post = Point()
        self.sublayers = _sublayers(cfg, 1 if self.ffn is None else 2)

    def forward(self, x: Tensor, mask: Tensor | None) -> Tensor:
        x = self.resid_pre(x)  # (B, S, d_model)
        x = self.resid_mid(self.sublayers[0](x, lambda h: self.self_attn(h, h, h, mask)))
        if self.ffn is not None:
            x = self.sublayers[1](x, self.ffn)
        return self.resid_post(x)  # (B, S, d_model)


class DecoderLayer(nn.Module):
    """Masked self-attention, then attention over the encoder output, then the feed-forward network.

    With `cross_attention=False` it is the block of a decoder-only (GPT-style) model: the same layer
    without its middle sub-layer. With `cfg.attention_only` it has no feed-forward sub-layer either.
    Named points (transformer/points.py): resid_pre, resid_mid (after self-attention), resid_cross (after
    cross-attention, when it has one), resid_post.
    """

    def __init__(self, cfg: TransformerConfig, cross_attention: bool = True, position: RelativePosition = None):
        super().__init__()
        self.resid_pre = Point()  # named points in the order the forward pass visits them
        self.self_attn = _attention(cfg, position)
        self.resid_mid = Point()
        self.cross_attn = _attention(cfg) if cross_attention else None
        self.resid_cross = Point() if cross_attention else None
        self.ffn = _feed_forward(cfg)
        self.resid_post = Point()
        self.sublayers = _sublayers(cfg, 1 + (self.cross_attn is not None) + (self.ffn is not None))

    def forward(self, x: Tensor, tgt_mask: Tensor | None, memory: Tensor | None = None,
                memory_mask: Tensor | None = None, cache: tuple[KVCache, KVCache | None] | None = None) -> Tensor:
        """x (B, T, d_model) -> (B, T, d_model). With a KV cache, x holds only the new positions."""
        self_cache, cross_cache = cache if cache is not None else (None, None)
        x = self.resid_pre(x)
        x = self.resid_mid(self.sublayers[0](x, lambda h: self.self_attn(h, h, h, tgt_mask, is_causal=True,
                                                                         cache=self_cache)))
        if self.cross_attn is not None:
            x = self.resid_cross(self.sublayers[1](x, lambda h: self.cross_attn(h, memory, memory, memory_mask,
                                                                                cache=cross_cache)))
        if self.ffn is not None:
            x = self.sublayers[-1](x, self.ffn)
        return self.resid_post(x)  # (B, T, d_model)
