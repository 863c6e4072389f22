"""The cache of what the app computes from a record (store.record_cache.RecordCache, behind the Attention tab's
figures, value norms and logit lens): a hit is the cached object itself, least recently used out past `size`, and a
new record that happens to get a dropped record's id is not served the old record's values."""
from __future__ import annotations

import gc
import weakref

from store.record_cache import RecordCache


class Record:
    """A stand-in for an attention record: only its identity matters to the cache."""


class Counting:
    """compute() for a key: a fresh object each call, and how many calls there were."""

    def __init__(self):
        self.calls = 0

    def __call__(self):
        self.calls += 1
        return object()


def test_a_hit_is_the_same_object_and_is_not_recomputed():
    cache, record, compute = RecordCache(4), Record(), Counting()
    first = cache.get(record, "lens", compute)
    assert cache.get(record, "lens", compute) is first and compute.calls == 1
    other_key = cache.get(record, ("one", "cross", 0, 0), compute)  # another key of the same record: computed
    assert other_key is not first and compute.calls == 2
    assert cache.get(Record(), "lens", compute) is not first and compute.calls == 3  # another record: computed


def test_least_recently_used_goes_first_past_size():
    """size 3: after a, b, c, touching a, then adding d drops b (the least recently used), and nothing else."""
    cache, compute = RecordCache(3), Counting()
    a, b, c, d = Record(), Record(), Record(), Record()
    values = {r: cache.get(r, "k", compute) for r in (a, b, c)}
    assert cache.get(a, "k", compute) is values[a]  # a is now the most recently used
    values[d] = cache.get(d, "k", compute)
    assert compute.calls == 4
    for r in (a, c, d):
        assert cache.get(r, "k", compute) is values[r]
    assert compute.calls == 4
    assert cache.get(b, "k", compute) is not values[b] and compute.calls == 5  # b was dropped: computed again


def test_a_new_record_with_a_cached_id_is_not_a_hit():
    """The entry holds its record, so CPython cannot hand its id to a new record while it is cached; a record that
    still gets a cached key's id (the entry's record replaced here to simulate it) is computed, not served."""
    cache, compute, record = RecordCache(4), Counting(), Record()
    old = cache.get(record, "k", compute)
    impostor = Record()
    cache._entries[(id(impostor), "k")] = cache._entries.pop((id(record), "k"))  # the old value under the new id
    fresh = cache.get(impostor, "k", compute)
    assert fresh is not old and compute.calls == 2
    assert cache.get(impostor, "k", compute) is fresh and compute.calls == 2


def test_an_entry_keeps_its_record_alive():
    """What keeps a cached id from being reused: the record lives as long as its entry, and no longer."""
    cache, record = RecordCache(1), Record()
    cache.get(record, "k", Counting())
    alive = weakref.ref(record)
    del record
    gc.collect()
    assert alive() is not None
    cache.get(Record(), "k", Counting())  # pushes the entry out (size 1)
    gc.collect()
    assert alive() is None
