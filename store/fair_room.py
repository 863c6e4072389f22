"""Whose thing goes when a store shared by every client is full: the one rule of store.user_models (trained models)
and store.exports (downloads). Room is made from the client holding the most, and among its things the one used
longest ago: a client flooding a store pushes out its own things long before anyone else's."""
from __future__ import annotations

from collections import Counter
from typing import Hashable, Iterable


def fullest_oldest(held: Iterable[tuple[str, float, Hashable]], keep: Hashable = None) -> Hashable:
    """Of `held` ((client, when last used, item) for everything a store holds): the item to remove, never `keep`:
    the client holding the most (all its items counted), then its item used longest ago. ValueError when there is
    no such item."""
    held = list(held)
    counts = Counter(client for client, _, _ in held)
    candidates = [(counts[client], -used, index) for index, (client, used, item) in enumerate(held) if item != keep]
    if not candidates:
        raise ValueError("nothing to make room from")
    return held[max(candidates)[2]][2]
