"""store.sessions: the browser behind a request is its cookie's key, never a session id alone; a running run's Stop
is kept by session for the browser that started it.

Oracle: the rules written out (a 32-hex-digit cookie is the key; anything else falls back to "session:<id>"), and
the invariants: an earlier run's end does not take the next run's signal; a session id without the starting
browser's key finds no run (issue 30, item 5: knowing a session id stopped another's training)."""
from __future__ import annotations

from types import SimpleNamespace

from store import sessions

KEY = "0123456789abcdef0123456789abcdef"


def page(session: str, key: str | None = None):
    return SimpleNamespace(session_hash=session, cookies={sessions.KEY_COOKIE: key} if key else {})


def test_the_browser_is_its_cookies_key_else_its_session():
    assert sessions.browser_key(page("s1", KEY)) == KEY
    assert sessions.browser_key(page("s1", "not-a-key")) == "session:s1"
    assert sessions.browser_key(page("s1", KEY.upper())) == "session:s1"
    assert sessions.browser_key(page("s1")) == "session:s1"
    assert sessions.browser_key(None) == "" and sessions.browser_key(page("")) == ""


def test_a_run_is_stopped_by_the_browser_that_started_it_only():
    first, second = object(), object()
    sessions.attach_run(page("unit-run", KEY), first)
    assert sessions.run_of(page("unit-run", KEY)) is first
    assert sessions.run_of(page("unit-run")) is None  # the session id alone
    assert sessions.run_of(page("unit-run", "f" * 32)) is None  # another browser's key
    sessions.attach_run(page("unit-run", KEY), second)  # the next run of the same page
    sessions.detach_run(page("unit-run", KEY), first)  # the earlier run's end does not take the new one's signal
    assert sessions.run_of(page("unit-run", KEY)) is second
    sessions.detach_run(page("unit-run", KEY), second)
    assert sessions.run_of(page("unit-run", KEY)) is None
    sessions.detach_run(page("unit-run", KEY), None)  # a run refused before it began (no signal yet) ends quietly
    sessions.attach_run(None, first)  # a call without a session (a test, a script) is not kept
    assert sessions.run_of(None) is None
