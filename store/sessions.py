"""What must outlive gradio's copy of a page's session: the browser's key and the run its Stop button stops.

gradio keeps the state of the last SESSIONS sessions (limits); a page left idle while that many newer
sessions came (a busy Space, or a client inventing session ids) finds its gr.State values back at their defaults
at its next click. Two of them must not be lost that way:
- the browser's key, which finds the models it trained: without it they would be "unknown" until a reload;
- the StopSignal of a run still going: without it Stop would answer "nothing is training" while it trains on.
Both are kept here by session id, and small: a key is 32 characters (the last KEYS_KEPT sessions), a run's signal
is kept only while it runs (a session runs one at a time: limits.TRAININGS_PER_CLIENT).
"""
from __future__ import annotations

import threading
from collections import OrderedDict

from limits import KEYS_KEPT

_lock = threading.Lock()
_keys: OrderedDict[str, str] = OrderedDict()
_runs: dict[str, object] = {}


def _session(request) -> str | None:
    session = getattr(request, "session_hash", None)
    return session if isinstance(session, str) and session else None


def remember_key(request, key: str) -> None:
    """This session's page has `key` (set once at page load)."""
    session = _session(request)
    if session is None:
        return
    with _lock:
        _keys[session] = key
        _keys.move_to_end(session)
        while len(_keys) > KEYS_KEPT:
            _keys.popitem(last=False)


def key_of(request) -> str | None:
    """The key this session's page set at load, if it did."""
    session = _session(request)
    with _lock:
        return _keys.get(session) if session else None


def attach_run(request, control) -> None:
    """`control` (a StopSignal) stops this session's run from now on."""
    session = _session(request)
    if session is not None:
        with _lock:
            _runs[session] = control


def detach_run(request, control) -> None:
    """The run of `control` is over."""
    session = _session(request)
    with _lock:
        if session is not None and control is not None and _runs.get(session) is control:
            del _runs[session]


def run_of(request):
    """The StopSignal of this session's run still going, or None."""
    session = _session(request)
    with _lock:
        return _runs.get(session) if session else None
