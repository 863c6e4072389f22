"""Scaled dot-product attention and multi-head attention (section 3.2 of the paper).

Dimension letters: B batch, H query heads, G key/value heads (H for MHA, 1 for MQA), T query length,
S key length, d_k = d_model / H the size of one head.

Relative positions enter here, not at the embedding: RoPE (transformer/positions/rotary.py) rotates queries and keys,
ALiBi (transformer/positions/alibi.py) adds a bias to the scores. Multi-head latent attention is in latent_attention.py,
what a layer keeps between decoding steps in kv_cache.py.
"""
from __future__ import annotations

import math
from typing import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .dropout import dropout
from .kv_cache import KVCache
from .points import Point
from .positions import ALiBi, RelativePosition, RotaryEmbedding


def scaled_dot_product_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None,
                                 dropout_p: float = 0.0, bias: Tensor | None = None, scale: float | None = None,
                                 pattern: Callable[[Tensor], Tensor] | None = None) -> tuple[Tensor, Tensor]:
    """Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V        (equation 1)

    q: (B, H, T, d_k); k: (B, H, S, d_k); v: (B, H, S, d_v); mask: bool, True = may attend, broadcastable to
    (B, H, T, S); bias: added to the scaled scores before the softmax (ALiBi), broadcastable to (B, H, T, S).
    Returns the output (B, H, T, d_v) and the attention weights (B, H, T, S).
    Masked positions get exactly zero weight; a row with nothing to attend to gets all zeros (not NaN).
    `scale` replaces 1 / sqrt(d_k) when q's size is not the d_k to scale by (MLA's absorbed decoding).
    `pattern` (a Point) sees the weights after the softmax, before dropout and the product with V: what it returns
    is used.
    """
    scale = 1 / math.sqrt(q.size(-1)) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale  # (B, H, T, S)
    if bias is not None:
        scores = scores + bias
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)  # (B, H, T, S); all -inf rows -> 0
    if pattern is not None:
        weights = pattern(weights)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p)  # attention dropout, as in PyTorch and the Annotated Transformer
    return weights @ v, weights  # (B, H, T, d_v), (B, H, T, S)


def causal_mask(T: int, S: int | None = None, device=None) -> Tensor:
    """(1, 1, T, S) bool, True where query t may attend to key s: s <= t + (S - T).

    With S > T (a KV cache holding S - T earlier positions) the queries are the last T positions.
    """
    S = T if S is None else S
    return torch.ones(T, S, dtype=torch.bool, device=device).tril(diagonal=S - T)[None, None]  # (1, 1, T, S)


def padding_mask(ids: Tensor, pad_id: int) -> Tensor:
    """(B, 1, 1, S) bool, True at real tokens, False at padding: no query attends to a pad key."""
    return (ids != pad_id)[:, None, None, :]  # (B, 1, 1, S)


def attend(module: nn.Module, q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, *, is_causal: bool,
           dropout_p: float, bias: Tensor | None = None, scale: float | None = None) -> Tensor:
    """Equation 1 for every head, through our own scaled_dot_product_attention when the weights are wanted (by a
    `points` block reading or writing the module's `pattern` point), else through PyTorch's fused kernel.
    q (B, H, T, d); k (B, G, S, d), v (B, G, S, d_v) with G dividing H (GQA/MQA share each key/value head between
    H/G query heads). Returns (B, H, T, d_v).

    Training with dropout on a CPU also takes our path: there PyTorch's kernel falls back to the same math, but
    draws its dropout mask with the slow generator transformer/dropout.py avoids."""
    T, S = q.size(2), k.size(2)
    explicit = (dropout_p > 0.0 and q.device.type == "cpu") or module.pattern.wanted()
    if is_causal and T == 1:
        is_causal = False  # one new query may see every cached position
    if is_causal and (explicit or bias is not None or mask is not None or S != T):
        causal = causal_mask(T, S, device=q.device)
        mask, is_causal = (causal if mask is None else mask & causal), False
    if explicit:
        group = q.size(1) // k.size(1)
        if group > 1:
            k = k.repeat_interleave(group, dim=1)  # (B, H, S, d)
            v = v.repeat_interleave(group, dim=1)  # (B, H, S, d_v)
        return scaled_dot_product_attention(q, k, v, mask, dropout_p, bias, scale, module.pattern)[0]
    if bias is not None:  # the fused kernel takes one float mask: the bias, with -inf where attention is forbidden
        bias = bias.to(q.dtype)
        mask = bias if mask is None else bias.masked_fill(~mask, float("-inf"))
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p, is_causal=is_causal,
                                          scale=scale, enable_gqa=k.size(1) != q.size(1))  # (B, H, T, d_v)


def split_heads(x: Tensor, heads: int) -> Tensor:
    """(B, L, heads * d) -> (B, heads, L, d): one slice of the projection per head (a view, no copy)."""
    B, L, _ = x.shape
    return x.view(B, L, heads, -1).transpose(1, 2)  # (B, heads, L, d)


def relative_bias(position: RelativePosition, T: int, S: int) -> Tensor | None:
    """ALiBi's bias (H, T, S) for T queries that are the last of S positions; None for any other scheme."""
    return position(T, S) if isinstance(position, ALiBi) else None


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O,  head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)

    (section 3.2.2). With n_kv_heads < n_heads, groups of query heads share one key/value head:
    grouped-query attention (GQA), or multi-query attention (MQA) for n_kv_heads = 1.
    `position` (self-attention only): a RotaryEmbedding rotates q and k by their positions, an ALiBi adds its
    distance penalty to the scores.

    W^Q, W^K and W^V are stored as one matrix, `in_proj` (as in torch.nn.MultiheadAttention and GPT-2's c_attn):
    its rows are W^Q's H d_k outputs, then W^K's G d_k, then W^V's G d_k. Self-attention (query, key and value
    the same tensor) then projects with one matrix product instead of three; cross-attention uses the W^Q rows on
    the decoder and the W^K, W^V rows on the encoder output. `W_Q`, `W_K`, `W_V`, `W_O` give the paper's
    matrices as views (d_model x H d_k and so on), `head_weights(i)` head i's W_i^Q, W_i^K, W_i^V.
    """

    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int | None = None, dropout: float = 0.0,
                 bias: bool = False, position: RelativePosition = None):
        super().__init__()
        n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads
        if d_model % n_heads or n_heads % n_kv_heads:
            raise ValueError(f"d_model={d_model}, n_heads={n_heads}, n_kv_heads={n_kv_heads} do not divide evenly")
        self.n_heads, self.n_kv_heads, self.d_k = n_heads, n_kv_heads, d_model // n_heads
        self.dropout = dropout
        self.sizes = (n_heads * self.d_k, n_kv_heads * self.d_k, n_kv_heads * self.d_k)  # rows of W^Q, W^K, W^V
        self.in_proj = nn.Linear(d_model, sum(self.sizes), bias=bias)  # [W^Q; W^K; W^V] as rows
        self.out_proj = nn.Linear(n_heads * self.d_k, d_model, bias=bias)  # W^O
        self.position = position  # shared by the layers; its buffers are not saved (they are recomputed)
        # named points (transformer/points.py documents each one's shape)
        self.q_input, self.k_input, self.v_input = Point(), Point(), Point()
        self.q, self.k, self.v, self.pattern, self.z, self.out = Point(), Point(), Point(), Point(), Point(), Point()
        self._register_load_state_dict_pre_hook(_fuse_legacy_hook)

    def projection_blocks(self) -> tuple[Tensor, Tensor, Tensor]:
        """W^Q, W^K, W^V as nn.Linear stores them, (out, d_model) each: row views of `in_proj.weight`."""
        return self.in_proj.weight.split(self.sizes, dim=0)

    @property
    def W_Q(self) -> Tensor:
        """The paper's W^Q for all heads, (d_model, H d_k); columns i d_k .. (i+1) d_k are W_i^Q. A view."""
        return self.projection_blocks()[0].t()

    @property
    def W_K(self) -> Tensor:
        """W^K, (d_model, G d_k): one block of d_k columns per key/value head. A view."""
        return self.projection_blocks()[1].t()

    @property
    def W_V(self) -> Tensor:
        """W^V, (d_model, G d_k): one block of d_k columns per key/value head. A view."""
        return self.projection_blocks()[2].t()

    @property
    def W_O(self) -> Tensor:
        """W^O, (H d_k, d_model): rows i d_k .. (i+1) d_k take head i's output. A view."""
        return self.out_proj.weight.t()

    def head_weights(self, i: int) -> dict[str, Tensor]:
        """Head i's W_i^Q, W_i^K, W_i^V (d_model, d_k) and its rows of W^O (d_k, d_model); with GQA/MQA, W_i^K and
        W_i^V are those of the key/value head that query head i reads."""
        g = i // (self.n_heads // self.n_kv_heads)  # the key/value head of query head i
        cols = lambda w, j: w[:, j * self.d_k:(j + 1) * self.d_k]  # noqa: E731
        return {"W_Q": cols(self.W_Q, i), "W_K": cols(self.W_K, g), "W_V": cols(self.W_V, g),
                "W_O": self.W_O[i * self.d_k:(i + 1) * self.d_k]}

    def project(self, query: Tensor, key: Tensor | None, value: Tensor | None
                ) -> tuple[Tensor, Tensor | None, Tensor | None]:
        """Q = query W^Q, K = key W^K, V = value W^V (with their biases if any): (B, T, H d_k), (B, S, G d_k) x 2.
        One matrix product when query, key and value are one tensor (self-attention); key=None skips K and V
        (cross-attention keys already in the cache)."""
        w, b = self.in_proj.weight, self.in_proj.bias
        rows = lambda lo, hi=None: (w[lo:hi], None if b is None else b[lo:hi])  # noqa: E731  W and b rows lo..hi
        n_q, n_k = self.sizes[0], self.sizes[0] + self.sizes[1]
        if key is None:
            return F.linear(query, *rows(0, n_q)), None, None
        if query is key and key is value:
            return F.linear(query, w, b).split(self.sizes, dim=-1)  # one GEMM: (B, T, (H + 2G) d_k)
        q = F.linear(query, *rows(0, n_q))
        if key is value:  # cross-attention: K and V of the memory in one GEMM
            k, v = F.linear(key, *rows(n_q)).split(self.sizes[1:], dim=-1)
        else:
            k, v = F.linear(key, *rows(n_q, n_k)), F.linear(value, *rows(n_k))
        return q, k, v

    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None, *,
                is_causal: bool = False, cache: KVCache | None = None) -> Tensor:
        """query: (B, T, d_model); key, value: (B, S, d_model); mask: bool, True = may attend.

        `is_causal` adds the causal mask (built only on the explicit path; the fused kernel skips it).
        Returns the output (B, T, d_model). Passes its named points (transformer/points.py): q_input, k_input,
        v_input, q, k, v, pattern (the weights (B, H, T, S): read it to see them), z, out.
        """
        B, T, _ = query.shape
        start = len(cache) if cache is not None and not cache.static else 0  # position of the first new query
        cached = cache is not None and cache.static and len(cache) > 0  # cross-attention keys already projected
        query = self.q_input(query)
        if not cached:
            key, value = self.k_input(key), self.v_input(value)  # the same tensor as query unless one is written
        q, k, v = self.project(query, None if cached else key, None if cached else value)
        q = split_heads(q, self.n_heads)  # (B, H, T, d_k)
        if cached:
            k, v = cache.k, cache.v  # (B, G, S, d_k): cross-attention keys, projected at the first step
        else:
            k = split_heads(k, self.n_kv_heads)  # (B, G, S, d_k)
            v = split_heads(v, self.n_kv_heads)  # (B, G, S, d_k)
            if isinstance(self.position, RotaryEmbedding):  # self-attention: keys sit at the queries' positions
                q, k = self.position(q, start), self.position(k, start)  # rotated, same shapes
            k, v = self.k(k), self.v(v)
            if cache is not None:
                k, v = cache.append(k, v)  # (B, G, L + S, d_k) each
        out = attend(self, self.q(q), k, v, mask, is_causal=is_causal, dropout_p=self.dropout if self.training else 0.0,
                     bias=relative_bias(self.position, T, k.size(2)))  # (B, H, T, d_k)
        z = self.z(out.transpose(1, 2))  # (B, T, H, d_k): each head's output
        return self.out(self.out_proj(z.reshape(B, T, self.n_heads * self.d_k)))  # (B, T, d_model)


LEGACY_PROJECTIONS = ("q_proj", "k_proj", "v_proj")  # the separate W^Q, W^K, W^V of checkpoints before in_proj


def fuse_legacy_projections(state: dict, combine: Callable[[list], object]) -> dict:
    """Rename a state dict (or a safetensors header) written when W^Q, W^K, W^V were three modules: every
    `<prefix>.q_proj.<p>`, `k_proj.<p>`, `v_proj.<p>` triple becomes one `<prefix>.in_proj.<p>`, built by
    `combine([q, k, v])` (torch.cat of the tensors, or the fused shape of header entries). MLA's q_proj has no
    k_proj beside it and is left alone. The one rule both loading paths use."""
    out = dict(state)
    for name in state:
        prefix, _, param = name.rpartition(".")
        if not prefix.endswith(".q_proj") and prefix != "q_proj":
            continue
        base = prefix[: -len("q_proj")]
        triple = [f"{base}{proj}.{param}" for proj in LEGACY_PROJECTIONS]
        if all(n in state for n in triple):
            out[f"{base}in_proj.{param}"] = combine([state[n] for n in triple])
            for n in triple:
                del out[n]
    return out


def _fuse_legacy_hook(state_dict, prefix, *args, **kwargs):
    """load_state_dict pre-hook: an old state dict's q_proj/k_proj/v_proj become this module's in_proj."""
    own = {k: v for k, v in state_dict.items() if k.startswith(prefix) and k[len(prefix):].split(".")[0]
           in LEGACY_PROJECTIONS}
    if own:
        for k in own:
            del state_dict[k]
        state_dict.update(fuse_legacy_projections(own, torch.cat))
