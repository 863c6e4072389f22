"""What the app computes from an attention record, kept for the next request: the one cache of the Attention tab's
figures (tabs.attention.page), the views they draw (tabs.attention.views: value-weighted norms, patterns merged into
words, a verse's gold links), logit lenses (tabs.attention.lens) and patchings (tabs.attention.patching)."""
from __future__ import annotations

import threading
from collections import OrderedDict

from limits import VIEWS_KEPT


class RecordCache:
    """Values computed from a record, keyed on (the record, `key`), least recently used out past `size` entries.

    An entry holds its record, so the record's id is not reused while it is cached (records are never modified
    after they are made); a record that merely has a cached record's old id is not a hit.
    """

    def __init__(self, size: int = VIEWS_KEPT):
        self.size, self._entries, self._lock = size, OrderedDict(), threading.Lock()

    def get(self, record, key, compute):
        """The value cached for (record, key), or compute() (called outside the lock), cached and returned."""
        key = (id(record), key)
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None and hit[0] is record:
                self._entries.move_to_end(key)
                return hit[1]
        value = compute()
        with self._lock:
            self._entries[key] = (record, value)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return value
