"""What the app computes from an attention record, kept for the next request: the one cache of the Attention tab's
figures (tabs.attention.page), the views they draw (tabs.attention.views: value-weighted norms, patterns merged into
words, a verse's gold links), logit lenses (tabs.attention.lens) and patchings (tabs.attention.patching).

A count alone does not bound such a cache: an entry keeps its record alive, and a record's size is its model's
(layers x heads x 64 x 64 weights per kind of attention: 0.64 MiB for translate-en-es, 2.3 MiB for GPT-2 small), so
512 figures of 512 distinct records could hold gigabytes. Each cache also has a byte budget (limits.RECORD_CACHE_BYTES):
what its values and the records they keep alive hold in arrays and text (`held_bytes`), each record counted once.
A record's q, k and v (three times its bytes, read by its value norms and Q.K steps) are not in the record: they are
kept by model and input in a SharedValues with the same byte budget (tabs.attention.record.INSIDES).

A class asks for the same thing at once: thirty students press one demo, and every request misses the cache
together. Each cache computes a value once however many ask for it at the same moment (SingleFlight: the first
computes, the others wait for its value), so a burst of N identical requests costs one computation, not one per
request that found the cache empty (bench/class_load.py counts them)."""
from __future__ import annotations

import sys
import threading
from collections import OrderedDict

from limits import RECORD_CACHE_BYTES, VIEWS_KEPT


def held_bytes(value, _seen: set | None = None) -> int:
    """The bytes `value` holds in arrays and text, what grows with a model's size and an input's length: tensors'
    and numpy arrays' buffers, strings and bytes, and pandas frames, found through containers, dataclasses and
    objects' attributes (each object counted once); Python's own small objects are left out."""
    seen = set() if _seen is None else _seen
    total, stack = 0, [value]
    while stack:  # without recursion: a deep value cannot exhaust the stack
        item = stack.pop()
        if item is None or isinstance(item, (bool, int, float, type)) or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, (str, bytes, bytearray)):
            total += sys.getsizeof(item)
        elif hasattr(item, "untyped_storage"):  # a torch tensor (its storage: a view of a slice holds all of it)
            total += item.untyped_storage().nbytes()
        elif hasattr(item, "nbytes") and hasattr(item, "dtype"):  # a numpy array
            total += int(item.nbytes)
        elif hasattr(item, "memory_usage") and hasattr(item, "columns"):  # a pandas frame
            total += int(item.memory_usage(deep=True).sum())
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
        elif hasattr(item, "__dict__"):
            stack.extend(vars(item).values())
    return total


class SingleFlight:
    """Calls for one key made while its computation runs wait for that computation and get its value (or its
    exception) instead of computing again; a key is forgotten as soon as its computation ends, so nothing is kept
    here (a cache keeps values: compute() stores its value before the waiters are let go)."""

    def __init__(self):
        self._lock, self._flights = threading.Lock(), {}  # key -> [done event, value, exception]

    def run(self, key, compute):
        with self._lock:
            flight = self._flights.get(key)
            first = flight is None
            if first:
                flight = self._flights[key] = [threading.Event(), None, None]
        if not first:
            flight[0].wait()
            if flight[2] is not None:
                raise flight[2]
            return flight[1]
        try:
            flight[1] = compute()
        except BaseException as e:
            flight[2] = e
            raise
        finally:
            with self._lock:
                del self._flights[key]
            flight[0].set()
        return flight[1]


class SharedValues:
    """Values by key for everyone (the attention records of the shipped checkpoints, a record's q, k and v), least
    recently used out past `size` or, given `max_bytes`, past that many bytes held (held_bytes of the values; a
    value larger than the whole budget is returned but not kept); each computed once however many ask at once
    (SingleFlight)."""

    def __init__(self, size: int, max_bytes: int | None = None):
        self.size, self.max_bytes, self._values, self._lock = size, max_bytes, OrderedDict(), threading.Lock()
        self.bytes, self._flights = 0, SingleFlight()  # bytes: what the values hold now, counted with max_bytes

    def __len__(self) -> int:
        return len(self._values)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
            self.bytes = 0

    def _kept(self, key):
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return True, self._values[key][0]
        return False, None

    def get(self, key, compute):
        """The value kept for `key`, or compute()'s (one call for every caller asking meanwhile), kept."""
        found, value = self._kept(key)
        return value if found else self._flights.run(key, lambda: self._computed(key, compute))

    def _computed(self, key, compute):
        found, value = self._kept(key)  # a computation that ended just before this flight began kept it
        if found:
            return value
        value = compute()
        value_bytes = 0 if self.max_bytes is None else held_bytes(value)
        with self._lock:
            if self.max_bytes is not None and value_bytes > self.max_bytes:
                return value
            self._values[key] = (value, value_bytes)
            self.bytes += value_bytes
            while len(self._values) > self.size or (self.max_bytes is not None and self.bytes > self.max_bytes):
                self.bytes -= self._values.popitem(last=False)[1][1]
        return value


class RecordCache:
    """Values computed from a record, keyed on (the record, `key`), least recently used out past `size` entries or
    past `max_bytes` held (held_bytes of the values and of their records, each record once); a value larger than
    the whole budget is returned but not kept.

    An entry holds its record, so the record's id is not reused while it is cached (records are never modified
    after they are made); a record that merely has a cached record's old id is not a hit. Requests for one entry
    made while it is computed wait for that computation (SingleFlight).
    """

    def __init__(self, size: int = VIEWS_KEPT, max_bytes: int = RECORD_CACHE_BYTES):
        self.size, self.max_bytes, self._entries, self._lock = size, max_bytes, OrderedDict(), threading.Lock()
        self._records: dict[int, list] = {}  # id(record) -> [entries of it, its bytes]
        self.bytes = 0  # what the entries hold now: their values' bytes and their records', each once
        self._flights = SingleFlight()  # keyed as the entries: a record in flight is alive, its id not reused

    def _hit(self, record, key) -> tuple[bool, object]:
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None and hit[0] is record:
                self._entries.move_to_end(key)
                return True, hit[1]
        return False, None

    def get(self, record, key, compute):
        """The value cached for (record, key), or compute() (called outside the lock, once for every caller asking
        meanwhile), cached and returned."""
        key = (id(record), key)
        found, value = self._hit(record, key)
        return value if found else self._flights.run(key, lambda: self._computed(record, key, compute))

    def _computed(self, record, key, compute):
        found, value = self._hit(record, key)  # a computation that ended just before this flight began cached it
        if found:
            return value
        value = compute()
        value_bytes = held_bytes(value)
        with self._lock:
            known = self._records.get(id(record))  # an id counted here is this record's: an entry keeps it alive
            record_bytes = known[1] if known is not None else held_bytes(record)
            if value_bytes + record_bytes > self.max_bytes:
                return value
            if key in self._entries:
                self._drop(key)
            self._entries[key] = (record, value, value_bytes)
            counted = self._records.setdefault(id(record), [0, record_bytes])
            self.bytes += value_bytes + (record_bytes if counted[0] == 0 else 0)
            counted[0] += 1
            while len(self._entries) > self.size or self.bytes > self.max_bytes:
                self._drop(next(iter(self._entries)))
        return value

    def _drop(self, key) -> None:
        record, _, value_bytes = self._entries.pop(key)
        counted = self._records[id(record)]
        counted[0] -= 1
        self.bytes -= value_bytes
        if counted[0] == 0:
            self.bytes -= counted[1]
            del self._records[id(record)]
