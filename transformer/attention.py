"""Scaled dot-product attention and multi-head attention (section 3.2 of the paper).

Dimension letters: B batch, H query heads, G key/value heads (H for MHA, 1 for MQA), T query length,
S key length, d_k = d_model / H the size of one head.
"""
from __future__ import annotations

import math
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def scaled_dot_product_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None,
                                 dropout_p: float = 0.0) -> tuple[Tensor, Tensor]:
    """Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V        (equation 1)

    q: (B, H, T, d_k); k, v: (B, H, S, d_k); mask: bool, True = may attend, broadcastable to (B, H, T, S).
    Returns the output (B, H, T, d_k) and the attention weights (B, H, T, S).
    Masked positions get exactly zero weight; a row with nothing to attend to gets all zeros (not NaN).
    """
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (B, H, T, S)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)  # (B, H, T, S); all -inf rows -> 0
    if dropout_p > 0.0:
        weights = F.dropout(weights, dropout_p)
    return weights @ v, weights  # (B, H, T, d_k), (B, H, T, S)


def causal_mask(T: int, S: int | None = None, device=None) -> Tensor:
    """(1, 1, T, S) bool, True where query t may attend to key s: s <= t + (S - T).

    With S > T (a KV cache holding S - T earlier positions) the queries are the last T positions.
    """
    S = T if S is None else S
    return torch.ones(T, S, dtype=torch.bool, device=device).tril(diagonal=S - T)[None, None]  # (1, 1, T, S)


def padding_mask(ids: Tensor, pad_id: int) -> Tensor:
    """(B, 1, 1, S) bool, True at real tokens, False at padding: no query attends to a pad key."""
    return (ids != pad_id)[:, None, None, :]  # (B, 1, 1, S)


_CAPTURE: ContextVar[dict | None] = ContextVar("attention_capture", default=None)


@contextmanager
def capture_projections():
    """Within this block, in this thread only, every MultiHeadAttention call records what it computed: per head
    q (B, H, T, d_k), k and v (B, H, S, d_k) and the mask it applied, keyed by the module (a list per module, one
    entry per call). Nothing is stored on the modules, so other users of a shared model are not affected."""
    store: dict = {}
    token = _CAPTURE.set(store)
    try:
        yield store
    finally:
        _CAPTURE.reset(token)


@dataclass
class KVCache:
    """Keys and values of one attention layer kept between decoding steps, (B, G, L, d_k) each.

    Self-attention appends one position per step. Cross-attention (`static=True`) projects the encoder
    output once and reuses it. Only the G key/value heads are stored, so GQA/MQA caches are H/G smaller.
    """

    k: Tensor | None = None
    v: Tensor | None = None
    static: bool = False

    def __len__(self) -> int:
        return 0 if self.k is None else self.k.size(2)

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (self.k, self.v) if t is not None)

    def reorder(self, index: Tensor) -> None:
        """Select batch rows (beam search keeps the caches of the surviving beams)."""
        if self.k is not None:
            self.k, self.v = self.k.index_select(0, index), self.v.index_select(0, index)


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O,  head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)

    (section 3.2.2). With n_kv_heads < n_heads, groups of query heads share one key/value head:
    grouped-query attention (GQA), or multi-query attention (MQA) for n_kv_heads = 1.
    """

    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int | None = None, dropout: float = 0.0,
                 bias: bool = True):
        super().__init__()
        n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads
        if d_model % n_heads or n_heads % n_kv_heads:
            raise ValueError(f"d_model={d_model}, n_heads={n_heads}, n_kv_heads={n_kv_heads} do not divide evenly")
        self.n_heads, self.n_kv_heads, self.d_k = n_heads, n_kv_heads, d_model // n_heads
        self.dropout = dropout
        self.q_proj = nn.Linear(d_model, n_heads * self.d_k, bias=bias)
        self.k_proj = nn.Linear(d_model, n_kv_heads * self.d_k, bias=bias)
        self.v_proj = nn.Linear(d_model, n_kv_heads * self.d_k, bias=bias)
        self.out_proj = nn.Linear(n_heads * self.d_k, d_model, bias=bias)

    def _split_heads(self, x: Tensor, heads: int) -> Tensor:
        B, L, _ = x.shape
        return x.view(B, L, heads, self.d_k).transpose(1, 2)  # (B, heads, L, d_k)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None,
                need_weights: bool = False, *, is_causal: bool = False, cache: KVCache | None = None,
                head_mask: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        """query: (B, T, d_model); key, value: (B, S, d_model); mask: bool, True = may attend.

        `is_causal` adds the causal mask (built only on the explicit path; the fused kernel skips it).
        `head_mask` (H,): 1 keeps a head, 0 switches it off (head ablation): its output head_i is zeroed before
        Concat(head_1, ..., head_h) W^O, so the layer runs as if that head were not there.
        Returns the output (B, T, d_model) and, if `need_weights`, the weights (B, H, T, S), else None.
        """
        B, T, _ = query.shape
        q = self._split_heads(self.q_proj(query), self.n_heads)  # (B, H, T, d_k)
        if cache is not None and cache.static and cache.k is not None:
            k, v = cache.k, cache.v  # (B, G, S, d_k): cross-attention keys, projected at the first step
        else:
            k = self._split_heads(self.k_proj(key), self.n_kv_heads)  # (B, G, S, d_k)
            v = self._split_heads(self.v_proj(value), self.n_kv_heads)  # (B, G, S, d_k)
            if cache is not None:
                if cache.k is not None:
                    k = torch.cat([cache.k, k], dim=2)  # (B, G, L + S, d_k)
                    v = torch.cat([cache.v, v], dim=2)
                cache.k, cache.v = k, v
        if is_causal and T == 1:
            is_causal = False  # one new query may see every cached position
        dropout_p = self.dropout if self.training else 0.0
        if need_weights:
            if is_causal:
                causal = causal_mask(T, k.size(2), device=q.device)
                mask = causal if mask is None else mask & causal
            group = self.n_heads // self.n_kv_heads
            k = k.repeat_interleave(group, dim=1)  # (B, H, S, d_k)
            v = v.repeat_interleave(group, dim=1)  # (B, H, S, d_k)
            captured = _CAPTURE.get()
            if captured is not None:
                captured.setdefault(self, []).append((q, k, v, mask))
            out, weights = scaled_dot_product_attention(q, k, v, mask, dropout_p)
        else:
            if is_causal and (mask is not None or k.size(2) != T):
                causal = causal_mask(T, k.size(2), device=q.device)
                mask, is_causal = (causal if mask is None else mask & causal), False
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p, is_causal=is_causal,
                                                 enable_gqa=self.n_kv_heads != self.n_heads)  # (B, H, T, d_k)
            weights = None
        if head_mask is not None:
            out = out * head_mask.to(out.dtype).view(1, -1, 1, 1)  # (B, H, T, d_k): ablated heads give 0
        out = out.transpose(1, 2).reshape(B, T, self.n_heads * self.d_k)  # (B, T, d_model)
        return self.out_proj(out), weights
