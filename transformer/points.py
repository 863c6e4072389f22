"""Named points: the one way to read and write the model's insides (like TransformerLens's HookPoint).

A `Point` is an identity that knows its name. Modules own them as attributes (`self.pattern = Point()` in
MultiHeadAttention); a point's name is its path in `model.named_modules()`, set once when the Transformer is built
(`name_points`), so names follow the paper's parts and the module tree. `model.point_names()` lists a model's.

    with points(read=["decoder.1.self_attn.pattern", "decoder.0.resid_post"],
                write={"decoder.0.self_attn.z": lambda z: patched_z}) as seen:
        out = model(tokens)
    seen["decoder.1.self_attn.pattern"]     # the tensor at that point (after any write to it)

The names, with i a layer, B batch, S source length, T decoder length (self-attention in the encoder: S queries),
H query heads, G key/value heads (H for MHA), d_k the size of one head, d_model the residual stream:

    {stack}.{i}.resid_pre           (B, T, d_model)  the residual stream entering layer i (stack: encoder, decoder)
    {stack}.{i}.resid_mid           (B, T, d_model)  after the self-attention sub-layer
    decoder.{i}.resid_cross         (B, T, d_model)  after the cross-attention sub-layer (encoder-decoder only)
    {stack}.{i}.resid_post          (B, T, d_model)  leaving layer i (the last sub-layer's output)
    {stack}.{i}.ffn.out             (B, T, d_model)  the feed-forward output, before dropout and the residual sum
    {attn}.q_input                  (B, T, d_model)  what W^Q reads  (attn: {stack}.{i}.self_attn, decoder.{i}.cross_attn)
    {attn}.k_input, {attn}.v_input  (B, S, d_model)  what W^K, W^V read (self-attention: one tensor with q_input
                                                     unless one of them is written; MLA has no v_input)
    {attn}.q                        (B, H, T, d_k)   the queries, after RoPE (MLA with RoPE: d_k + d_R)
    {attn}.k, {attn}.v              (B, G, S, d_k)   the keys (after RoPE) and values; MLA: (B, H, S, d_k + d_R), (B, H, S, d_k)
    {attn}.pattern                  (B, H, T, S)     softmax(q k^T / sqrt(d_k)): the attention weights
    {attn}.z                        (B, T, H, d_k)   each head's output per position, before W^O
    {attn}.out                      (B, T, d_model)  after W^O
    final                           (B, T, d_model)  the decoder's output after the final norm: what the
                                                     unembedding reads (T = 1 for a `last_only` decoding step)

With a KV cache, each decoding step visits the points with its new positions only (T = 1), and `k`, `v` are the
new keys and values before they join the cache, so a write to them is kept by the cache; cross-attention's `k`,
`v`, `k_input`, `v_input` are visited at the first step only (later steps reuse the cache). MLA's `q`, `k`, `v` are
those of the explicit path, rebuilt from the cached latent over every position. A point visited more than once in
one block (decoding steps) keeps its last tensor in `seen`.

A block with `stop_at` (a point's name) ends the forward pass right after that point is visited (its write and
read done), as TransformerLens's `stop_at_layer` and nnsight's `stop()` do: what comes after it (later layers, the
unembedding) is never computed. The model's call then returns nothing: the block ends there, quietly, so nothing
written after that call inside the block runs; read what you need from `seen` after the block.

    with points(read=["decoder.1.self_attn.z"], stop_at="decoder.1.self_attn.z") as seen:
        model(tokens)                       # stops inside layer 1's self-attention
    z = seen["decoder.1.self_attn.z"]

Scoped to a call, never stored on modules: `points` sets a ContextVar, so other threads and other requests using
one shared model never see this block's reads or writes. Blocks nest: the outer block's write and read happen
first, then the inner's. With no block active a point costs one ContextVar lookup, and attention takes PyTorch's
fused kernel unless someone reads or writes `pattern`. Reads and writes are part of the autograd graph: a write
function of a tensor that requires grad passes gradients back to it, and `seen[name].retain_grad()` before
`backward()` gives the gradient at a point.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Collection, Iterator, Mapping

from torch import Tensor, nn

Read = Collection[str] | Callable[[str], bool]
Write = Mapping[str, Callable[[Tensor], Tensor]]


class _Stop(Exception):
    """Raised at a block's `stop_at` point, caught by that block only: it ends the forward pass there."""

    def __init__(self, scope: _Scope):
        super().__init__(f"the forward pass stopped at {scope.stop_at}")
        self.scope = scope


class _Scope:
    """One `points` block: what it reads (names or a predicate), what it writes, what it has seen, and the point
    after which it stops the forward pass (or None)."""

    def __init__(self, read: Read, write: Write, outer: _Scope | None, stop_at: str | None = None):
        self.listed = set(write) | (set() if callable(read) else set(read))  # names to check against the model
        self.listed |= {stop_at} if stop_at is not None else set()
        self.reads = read if callable(read) else frozenset(read).__contains__
        self.write, self.outer, self.seen, self.stop_at = dict(write), outer, {}, stop_at

    def wants(self, name: str) -> bool:
        """Whether this block or an outer one reads, writes or stops at `name`."""
        return (name in self.write or self.reads(name) or name == self.stop_at
                or (self.outer is not None and self.outer.wants(name)))

    def visit(self, name: str, x: Tensor) -> Tensor:
        if self.outer is not None:
            x = self.outer.visit(name, x)
        change = self.write.get(name)
        if change is not None:
            new = change(x)
            if not isinstance(new, Tensor) or new.shape != x.shape:
                raise ValueError(f"the write to {name} must return a tensor of shape {tuple(x.shape)}, got "
                                 f"{tuple(new.shape) if isinstance(new, Tensor) else type(new).__name__}")
            x = new
        if self.reads(name):
            self.seen[name] = x
        if name == self.stop_at:
            raise _Stop(self)
        return x

    def unknown(self, known: Collection[str]) -> list[str]:
        names = self.listed.difference(known)
        return sorted(names | (set(self.outer.unknown(known)) if self.outer is not None else set()))


_ACTIVE: ContextVar[_Scope | None] = ContextVar("points", default=None)


@contextmanager
def points(read: Read = (), write: Write | None = None, stop_at: str | None = None) -> Iterator[dict[str, Tensor]]:
    """Within this block, in this thread (or task) only, the named points in `read` (a list of names, or a predicate
    `lambda name: ...`) are kept in the dict it yields, and each point in `write` has its tensor replaced by
    `write[name](tensor)` (same shape); the forward pass ends right after the point `stop_at`, and with it the
    block (the module's docstring). A model run in the block raises ValueError naming any listed name it does not
    have (predicates are not checked)."""
    scope = _Scope(read, write or {}, _ACTIVE.get(), stop_at)
    token = _ACTIVE.set(scope)
    try:
        yield scope.seen
    except _Stop as stop:
        if stop.scope is not scope:  # an outer block's stop: it ends that block
            raise
    finally:
        _ACTIVE.reset(token)


def point_name(stack: str, layer: int, name: str) -> str:
    """The name of the point `name` of layer `layer` of `stack` ("encoder" or "decoder"): a residual or FFN point
    (resid_pre, resid_mid, resid_cross, resid_post, ffn.out) or, through `transformer.heads.AttentionKind.point`,
    an attention module's (self_attn.z, cross_attn.pattern, ...). The one place a point's name is written
    (tests/test_one_owner.py checks it)."""
    return f"{stack}.{layer}.{name}"


def check(known: Collection[str]) -> None:
    """Raise ValueError naming every name the active blocks list that is not in `known` (a model's point names)."""
    scope = _ACTIVE.get()
    if scope is not None:
        unknown = scope.unknown(known)
        if unknown:
            raise ValueError(f"no such point in this model: {', '.join(unknown)} (model.point_names() lists them)")


class Point(nn.Module):
    """An identity that knows its name: returns its input, or, inside a `points` block that reads or writes its
    name, the written tensor (and keeps it for the block). Called directly, not through nn.Module's hooks, so an
    inactive point costs one ContextVar lookup."""

    def __init__(self):
        super().__init__()
        self.name = ""

    def forward(self, x: Tensor) -> Tensor:
        scope = _ACTIVE.get()
        return x if scope is None else scope.visit(self.name, x)

    __call__ = forward

    def wanted(self) -> bool:
        """Whether an active block reads or writes this point (attention then builds its weights explicitly)."""
        scope = _ACTIVE.get()
        return scope is not None and scope.wants(self.name)

    def extra_repr(self) -> str:
        return self.name


def name_points(root: nn.Module) -> list[str]:
    """Name every Point under `root` by its path in `root.named_modules()`; returns the names in module order.

    Each point is also made a plain attribute of its owner, so the forward pass finds it without going through
    nn.Module.__getattr__ (~2 us a lookup on this machine, a dozen points a layer: 4% of a small model's decoding
    step); it stays a registered submodule for named_modules."""
    names = []
    for owner_name, owner in root.named_modules():
        for attr, module in owner.named_children():
            if isinstance(module, Point):
                module.name = f"{owner_name}.{attr}" if owner_name else attr
                owner.__dict__[attr] = module
    for name, module in root.named_modules():
        if isinstance(module, Point):
            names.append(name)
    return names
