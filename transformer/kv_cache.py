"""The key/value cache of one attention layer between decoding steps (transformer.generate): what it keeps, grown
in place. Dimension letters as in attention.py: B batch, G key/value heads, L cached positions, d_k one head's size.
"""
from __future__ import annotations

from torch import Tensor


class KVCache:
    """What one attention layer keeps between decoding steps, along the position axis (dim 2) of each tensor:
    keys and values (B, G, L, d_k) for multi-head attention, the latent (and rotary key) for MLA.

    Self-attention appends the new positions at every step. The storage is preallocated and doubles when full,
    so a step writes only its own positions instead of copying the whole cache (`torch.cat` each step made the
    cost per token grow with the length). Cross-attention (`static=True`) projects the encoder output once and
    reuses it. Only the G key/value heads are stored, so GQA/MQA caches are H/G smaller.
    """

    MIN_CAPACITY = 64  # positions reserved at the first append

    def __init__(self, k: Tensor | None = None, v: Tensor | None = None, static: bool = False):
        self.static = static
        self._storage: list[Tensor] = []  # one (B, *, capacity, *) tensor per kept quantity
        self.length = 0
        if k is not None:
            self.append(*(t for t in (k, v) if t is not None))

    def __len__(self) -> int:
        return self.length

    def tensors(self) -> list[Tensor]:
        """The kept tensors over the filled positions (views, no copy)."""
        return [s[:, :, :self.length] for s in self._storage]

    @property
    def k(self) -> Tensor | None:
        return self.tensors()[0] if self._storage else None

    @property
    def v(self) -> Tensor | None:
        return self.tensors()[1] if len(self._storage) > 1 else None

    def append(self, *new: Tensor) -> list[Tensor]:
        """Store the new positions (each tensor (B, *, T, *)) after the kept ones; returns every kept position."""
        T = new[0].size(2)
        needed = self.length + T
        capacity = self._storage[0].size(2) if self._storage else 0
        if needed > capacity:
            capacity = max(needed, 2 * capacity, self.MIN_CAPACITY)
            grown = []
            for i, x in enumerate(new):
                shape = list(x.shape)
                shape[2] = capacity
                storage = x.new_empty(shape)  # (B, *, capacity, *)
                if self._storage:
                    storage[:, :, :self.length] = self._storage[i][:, :, :self.length]
                grown.append(storage)
            self._storage = grown
        for storage, x in zip(self._storage, new):
            storage[:, :, self.length:needed] = x
        self.length = needed
        return self.tensors()

    def nbytes(self) -> int:
        """Bytes of the filled positions (what the cache holds, not what it has reserved)."""
        return sum(t.numel() * t.element_size() for t in self.tensors())

    def reorder(self, index: Tensor) -> None:
        """Select batch rows (beam search keeps the caches of the surviving beams)."""
        self._storage = [s.index_select(0, index) for s in self._storage]
