"""store.sessions: a page's browser key and its running run's Stop, kept by session id beyond gradio's state."""
from __future__ import annotations

from types import SimpleNamespace

from store import sessions
from tabs.train.stop_signal import StopSignal


def page(session: str):
    return SimpleNamespace(session_hash=session)


def test_keys_are_kept_per_session_the_oldest_out_past_the_bound(monkeypatch):
    monkeypatch.setattr(sessions, "KEYS_KEPT", 3)
    for i in range(4):
        sessions.remember_key(page(f"unit-{i}"), f"key-{i}")
    sessions.remember_key(page("unit-1"), "key-1")  # used again: the most recent
    sessions.remember_key(page("unit-4"), "key-4")
    assert [sessions.key_of(page(f"unit-{i}")) for i in range(5)] == [None, "key-1", None, "key-3", "key-4"]
    assert sessions.key_of(None) is None and sessions.key_of(page("")) is None


def test_a_run_is_found_while_it_runs_and_a_later_run_is_not_detached_by_an_earlier_one():
    first, second = StopSignal(), StopSignal()
    sessions.attach_run(page("unit-run"), first)
    assert sessions.run_of(page("unit-run")) is first
    sessions.attach_run(page("unit-run"), second)  # the next run of the same page
    sessions.detach_run(page("unit-run"), first)  # the earlier run's end does not take the new one's signal
    assert sessions.run_of(page("unit-run")) is second
    sessions.detach_run(page("unit-run"), second)
    assert sessions.run_of(page("unit-run")) is None
    sessions.detach_run(page("unit-run"), None)  # a run refused before it began (no signal yet) ends quietly
    sessions.attach_run(None, first)  # a call without a session (a test, a script) is not kept
    assert sessions.run_of(None) is None
    first.discard()
    second.discard()
