"""The cache of what the app computes from a record (store.record_cache.RecordCache, behind the Attention tab's
figures, value norms and logit lens): a hit is the cached object itself, least recently used out past `size` or past
its byte budget, and a new record that happens to get a dropped record's id is not served the old record's values.

Regression (issue 30, item 8, what was left): the caches were bounded by count only, and an entry keeps its record
alive: 512 figures of long translate-en-es inputs hold about 300 MiB of JSON and records (a GPT-2 small record alone
is 7 MiB). Oracle for the bytes: a tensor's numel x element size, summed by hand."""
from __future__ import annotations

import gc
import weakref

import torch

from store.record_cache import RecordCache, SharedValues, held_bytes

TRANSLATE_MAPS = (4, 4, 65, 65)  # a 2,000-character translate-en-es record: each kind's (L, H, T, S), cut to 64 tokens
MAP_BYTES = 4 * 4 * 65 * 65 * 4  # float32


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


class LongRecord:
    """A stand-in for the record of a long translate-en-es input: its three kinds' weights, as the record holds them."""

    def __init__(self):
        self.patterns = {kind: torch.rand(TRANSLATE_MAPS) for kind in ("encoder self", "decoder self", "cross")}


def test_held_bytes_counts_arrays_and_text_once():
    record = LongRecord()
    assert held_bytes(record) >= 3 * MAP_BYTES and held_bytes(record) < 3 * MAP_BYTES + 4096
    tensor = record.patterns["cross"]
    assert held_bytes((tensor, [tensor], {"again": tensor})) < MAP_BYTES + 200  # one tensor, found three times
    assert held_bytes(tensor[0, 0]) == MAP_BYTES  # a view holds its whole storage
    assert 1000 <= held_bytes("x" * 1000) < 1100


def test_a_cache_filled_with_long_input_records_stays_under_its_byte_budget():
    """Invariant: 40 long records with 3 figures' worth (0.25 MiB) each, into a cache of 512 places and 8 MiB: after
    every insertion what it holds (its values and its records, each record once, summed again here) is within the
    budget, and the count does not reach the places (the bytes bound it); the entries left are the last ones."""
    budget, value_bytes = 8 << 20, 1 << 18
    cache = RecordCache(512, max_bytes=budget)
    records = [LongRecord() for _ in range(40)]
    for record in records:
        for key in range(3):
            cache.get(record, key, lambda: torch.zeros(value_bytes // 4))
            entries = list(cache._entries.values())
            live = {id(r): r for r, _, _ in entries}
            held = sum(held_bytes(r) for r in live.values()) + sum(held_bytes(v) for _, v, _ in entries)
            assert held == cache.bytes and held <= budget
    per_record = 3 * MAP_BYTES + 3 * value_bytes + 4096
    assert 3 * (budget // per_record - 1) <= len(cache._entries) < 512
    kept = {id(r) for r, _, _ in cache._entries.values()}
    assert id(records[-1]) in kept and id(records[0]) not in kept


def test_a_record_is_counted_once_and_a_value_over_the_budget_is_not_kept():
    record, cache = LongRecord(), RecordCache(8, max_bytes=4 << 20)
    cache.get(record, "a", lambda: "a" * 1000)
    cache.get(record, "b", lambda: "b" * 1000)
    assert cache.bytes == held_bytes(record) + held_bytes("a" * 1000) + held_bytes("b" * 1000)
    huge, compute = torch.zeros(2 << 20), Counting()  # 8 MiB of float32: more than the whole budget
    assert cache.get(record, "huge", lambda: huge) is huge
    assert len(cache._entries) == 2 and cache.get(record, "a", compute) == "a" * 1000 and compute.calls == 0


def test_shared_values_with_a_byte_budget_stay_under_it():
    """Invariant (a record's q, k and v, tabs.attention.record.INSIDES): 1 MiB values into 64 places and 4 MiB keep
    the last 4 (the bytes bound them, not the count; `bytes` is their held_bytes summed again here); a hit is the
    kept object itself; a value over the whole budget is returned and not kept; without a budget only the count
    bounds."""
    cache, values = SharedValues(64, max_bytes=4 << 20), {}
    for key in range(10):
        values[key] = cache.get(key, lambda: torch.zeros(1 << 18))  # 1 MiB of float32
        assert cache.bytes == sum(held_bytes(v) for v, _ in cache._values.values()) <= 4 << 20
    assert list(cache._values) == [6, 7, 8, 9] and cache.get(9, Counting()) is values[9]
    huge = torch.zeros(2 << 20)
    assert cache.get("huge", lambda: huge) is huge and "huge" not in cache._values and len(cache) == 4
    counted = SharedValues(2)
    for key in range(3):
        counted.get(key, lambda: torch.zeros(1 << 18))
    assert list(counted._values) == [1, 2] and counted.bytes == 0
