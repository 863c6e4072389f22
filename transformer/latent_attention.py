"""Multi-head latent attention, MLA (DeepSeek-AI 2024, "DeepSeek-V2", section 2.1).

Multi-head attention caches a key and a value per head and position. MLA caches one small latent vector per
position instead, shared by all heads, and rebuilds every head's key and value from it:

    c_t^KV = W^DKV h_t                 the latent, d_c numbers: all the cache keeps    (DeepSeek-V2 equation 9)
    k_t^C  = W^UK c_t^KV               the heads' keys, n_h x d_k                       (equation 10)
    v_t^C  = W^UV c_t^KV               the heads' values, n_h x d_k                     (equation 11)
    q_t    = W^Q h_t                   queries as in multi-head attention (DeepSeek-V2-Lite does not compress them)

RoPE cannot rotate k^C (the rotation would have to be applied after the up-projection, so the cached latent
would no longer suffice); MLA adds a small decoupled rotary part instead, a key shared by the heads:

    q_t^R = RoPE(W^QR h_t),  k_t^R = RoPE(W^KR h_t)                                     (equations 14-15, d_R each)
    q_t,i = [q_t,i^C; q_t,i^R],  k_t,i = [k_t,i^C; k_t^R]                               (equations 16-17)
    o_t,i = sum_j softmax_j(q_t,i . k_j,i / sqrt(d_k + d_R)) v_j,i^C,   u_t = W^O [o_t,1; ...; o_t,n_h]   (18-19)

The cache then holds c^KV and k^R: (d_c + d_R) numbers per position and layer, against 2 n_h d_k for MHA.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

from .attention import KVCache, RelativePosition, attend, relative_bias, split_heads
from .points import Point
from .positions import RotaryEmbedding


class MultiHeadLatentAttention(nn.Module):
    """MLA with a latent of `kv_latent_dim` (d_c) numbers per position; with a RotaryEmbedding as `position`
    (built for d_R = its size) it adds the decoupled rotary query and key. The same interface as
    MultiHeadAttention; keys and values both come from `key` (the latent is one vector for both)."""

    def __init__(self, d_model: int, n_heads: int, kv_latent_dim: int, dropout: float = 0.0, bias: bool = False,
                 position: RelativePosition = None):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        self.n_heads, self.d_k, self.kv_latent_dim = n_heads, d_model // n_heads, kv_latent_dim
        self.dropout = dropout
        self.q_proj = nn.Linear(d_model, n_heads * self.d_k, bias=bias)  # W^Q
        self.kv_down = nn.Linear(d_model, kv_latent_dim, bias=False)  # W^DKV
        self.k_up = nn.Linear(kv_latent_dim, n_heads * self.d_k, bias=bias)  # W^UK
        self.v_up = nn.Linear(kv_latent_dim, n_heads * self.d_k, bias=bias)  # W^UV
        self.out_proj = nn.Linear(n_heads * self.d_k, d_model, bias=bias)  # W^O
        self.position = position
        self.d_rope = position.d_k if isinstance(position, RotaryEmbedding) else 0  # d_R
        if self.d_rope:
            self.q_rope = nn.Linear(d_model, n_heads * self.d_rope, bias=bias)  # W^QR
            self.k_rope = nn.Linear(d_model, self.d_rope, bias=bias)  # W^KR: one rotary key for every head
        # named points (transformer/points.py): no v_input, since keys and values both come from `key`
        self.q_input, self.k_input = Point(), Point()
        self.q, self.k, self.v, self.pattern, self.z, self.out = Point(), Point(), Point(), Point(), Point(), Point()

    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None, *,
                is_causal: bool = False, cache: KVCache | None = None) -> Tensor:
        """query: (B, T, d_model); key: (B, S, d_model) (`value` is the same sequence and is not read).
        Returns the output (B, T, d_model); every head's weights (B, H, T, S) are its `pattern` point.
        Decoding with a cache attends in latent space unless a `points` block reads or writes q, k, v or pattern."""
        B, T, _ = query.shape
        H = self.n_heads
        start = len(cache) if cache is not None and not cache.static else 0  # position of the first new query
        query = self.q_input(query)
        q = split_heads(self.q_proj(query), H)  # (B, H, T, d_k)
        if cache is not None and cache.static and len(cache):
            kept = cache.tensors()  # cross-attention: the encoder output's latent, made at the first step
        else:
            key = self.k_input(key)
            kept = [self.kv_down(key)[:, None]]  # (B, 1, S, d_c): c^KV
            if self.d_rope:
                kept.append(self.position(self.k_rope(key)[:, None], start))  # (B, 1, S, d_R): k^R, rotated
            if cache is not None:
                kept = cache.append(*kept)  # (B, 1, L + S, d_c), (B, 1, L + S, d_R)
        S = kept[0].size(2)
        bias = relative_bias(self.position, T, S)
        q_rope = self.position(split_heads(self.q_rope(query), H), start) if self.d_rope else None  # (B, H, T, d_R)
        explicit = self.training or any(p.wanted() for p in (self.q, self.k, self.v, self.pattern))
        if cache is not None and not explicit:
            out = self._attend_in_latent_space(q, q_rope, kept, mask, is_causal, bias)  # (B, H, T, d_k)
        else:
            latent = kept[0][:, 0]  # (B, S, d_c)
            k = split_heads(self.k_up(latent), H)  # (B, H, S, d_k): k^C
            v = split_heads(self.v_up(latent), H)  # (B, H, S, d_k): v^C
            if self.d_rope:
                q = torch.cat([q, q_rope], dim=-1)  # (B, H, T, d_k + d_R)
                k = torch.cat([k, kept[1].expand(B, H, S, self.d_rope)], dim=-1)  # (B, H, S, d_k + d_R)
            out = attend(self, self.q(q), self.k(k), self.v(v), mask, is_causal=is_causal,
                         dropout_p=self.dropout if self.training else 0.0, bias=bias)  # (B, H, T, d_k)
        z = self.z(out.transpose(1, 2))  # (B, T, H, d_k): each head's output
        return self.out(self.out_proj(z.reshape(B, T, H * self.d_k)))  # (B, T, d_model)

    def _attend_in_latent_space(self, q: Tensor, q_rope: Tensor | None, kept: list[Tensor], mask: Tensor | None,
                                is_causal: bool, bias: Tensor | None) -> Tensor:
        """Decoding with the cache, without rebuilding S keys and values at every step: W^UK is absorbed into the
        queries and W^UV applied after the weighted sum (DeepSeek-V2, section 2.1.2). For head i and cached c_j,

            q_i . k_j,i = q_i . (W_i^UK c_j + b_i^UK) = (W_i^UK^T q_i) . c_j + q_i . b_i^UK
            sum_j w_ij v_j,i = W_i^UV (sum_j w_ij c_j) + b_i^UV

        q_i . b_i^UK is the same for every key, so the softmax ignores it, and the weights sum to 1. The heads then
        share one "key" per position, the latent itself: multi-query attention in d_c dimensions.
        q (B, H, T, d_k); q_rope (B, H, T, d_R) or None; kept: the latent (B, 1, S, d_c) and the rotary key.
        Returns every head's output (B, H, T, d_k), as the explicit path would.
        """
        H, d_k, d_c = self.n_heads, self.d_k, self.kv_latent_dim
        q_latent = torch.einsum("bhtd,hdc->bhtc", q, self.k_up.weight.view(H, d_k, d_c))  # (B, H, T, d_c)
        k = v = kept[0]  # (B, 1, S, d_c)
        if self.d_rope:
            q_latent = torch.cat([q_latent, q_rope], dim=-1)  # (B, H, T, d_c + d_R)
            k = torch.cat([kept[0], kept[1]], dim=-1)  # (B, 1, S, d_c + d_R)
        out_latent = attend(self, q_latent, k, v, mask, is_causal=is_causal, dropout_p=0.0, bias=bias,
                            scale=(d_k + self.d_rope) ** -0.5)  # (B, H, T, d_c)
        out = torch.einsum("bhtc,hdc->bhtd", out_latent, self.v_up.weight.view(H, d_k, d_c))  # (B, H, T, d_k)
        return out if self.v_up.bias is None else out + self.v_up.bias.view(1, H, 1, d_k)
