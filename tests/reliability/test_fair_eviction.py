"""Fair eviction: a flood of trainings from new sessions evicts the flood's own models, not an earlier client's,
and a browser whose model went is told so by name, never "unknown checkpoint".

Regression (issue 18, item 4): every API session counts as a browser, and the store forgot the least recently used
browser past 64: 66 tiny trainings from new session ids evicted a victim's model, whose heatmap then failed with
"unknown checkpoint"."""
from __future__ import annotations

import pytest
import torch

from checks import UserError
import store.catalogue as catalogue
from store.user_models import UserModels


def put(store, key, client=None):
    name = store.reserve(key, "reverse", client) if client else store.reserve(key, "reverse")
    store.put(key, name, torch.nn.Linear(2, 2), None, {})
    return name


def test_a_flood_of_new_sessions_keeps_the_first_clients_models():
    """A victim and a classroom of 10 train first; then 66 new sessions train one model each while the class opens
    its models now and then: every model of the first eleven is still kept, and the store holds no more than its
    bound."""
    store = UserModels()
    victim = put(store, "victim")
    class_names = {f"student{i}": put(store, f"student{i}") for i in range(10)}
    for i in range(66):
        put(store, f"session:flood{i}")
        if i % 10 == 0:
            assert all(store.get(k, n) is not None for k, n in [("victim", victim), *class_names.items()])
    assert store.names("victim") == [victim]
    assert all(store.names(k) == [n] for k, n in class_names.items())
    assert len(store) <= store.max_models


def test_one_address_with_many_sessions_is_evicted_before_a_newer_client():
    """When the address is known, a flooder's sessions count as one client: its models go first even when the
    victim arrived after it."""
    store = UserModels(max_models=6)
    for i in range(5):
        put(store, f"flood{i}", client="203.0.113.9")
    victim = put(store, "victim", client="198.51.100.7")
    put(store, "flood5", client="203.0.113.9")
    assert store.names("victim") == [victim] and len(store) == 6


def test_an_evicted_model_gets_a_clear_message_not_unknown_checkpoint(monkeypatch):
    """resolve() of a model the store let go names it and says why (it said "unknown checkpoint")."""
    store = UserModels(max_models=2)
    monkeypatch.setattr(catalogue, "USER_MODELS", store)
    first = put(store, "first")
    put(store, "second")
    put(store, "first")  # the first browser's second model: it now holds the most, so its oldest goes
    with pytest.raises(UserError) as e:
        catalogue.resolve(first, "first")
    assert first in str(e.value) and "no longer kept" in str(e.value) and "unknown" not in str(e.value)


def test_a_flood_that_came_first_evicts_its_own_untouched_models():
    """50 flood sessions train first, then 3 students, then 20 more flood sessions; the students open their models
    as a class does: all 3 are kept (before, among clients holding as many, the newest arrival lost: 1 of 3 kept)."""
    store = UserModels()
    for i in range(50):
        put(store, f"session:flood{i}")
    students = {f"student{i}": put(store, f"student{i}") for i in range(3)}
    for i in range(50, 70):
        put(store, f"session:flood{i}")
        if i % 5 == 0:
            assert all(store.get(k, n) is not None for k, n in students.items())
    assert all(store.names(k) == [n] for k, n in students.items())
    assert len(store) <= store.max_models


def test_among_clients_holding_as_many_the_model_used_longest_ago_goes():
    """Oracle: least recently used, written out. Three browsers of one model each, a store of 3: the one opened
    longest ago goes, whatever the order they arrived in."""
    store = UserModels(max_models=3)
    a, b, c = (put(store, k) for k in ("a", "b", "c"))
    store.get("a", a)
    store.get("c", c)
    put(store, "d")
    assert store.names("b") == [] and store.names("a") == [a] and store.names("c") == [c]
