"""The browser behind a request, and the Stop of a run that must outlive gradio's copy of a page's session.

A browser is known by a random key kept in its local storage; the page's own load (in the browser: app.py's
BROWSER_KEY_JS) puts it in the cookie KEY_COOKIE, which the browser sends with every request of the page. The server
takes the key from that cookie only: no function adopts a key a caller sends, and a session id (gradio's page makes
it with Math.random, and it travels in every request's body) gives nothing of a browser: not its models, not its
Stop. A client without the cookie (an API client) is its session: its models are kept under "session:<id>".

gradio keeps the state of the last SESSIONS sessions (limits); a page left idle while that many newer sessions came
finds its gr.State values back at their defaults at its next click. The StopSignal of a run still going must not be
lost that way, or Stop would answer "nothing is training" while it trains on: it is kept here by session id, with
the key that started the run, while the run goes on, and only that key stops it. Bounded in bytes: one entry per
running run (limits: trainings run a few at a time, one per browser) under a session id of at most 36 characters
(server.http_gate refuses any other).
"""
from __future__ import annotations

import re
import threading

KEY_COOKIE = "attention-lab-key"
KEY = re.compile(r"[0-9a-f]{32}")  # 16 random bytes in hex, as BROWSER_KEY_JS makes it

_lock = threading.Lock()
_runs: dict[str, tuple[object, str]] = {}  # session id -> (StopSignal, key of the browser that started the run)


def _session(request) -> str | None:
    session = getattr(request, "session_hash", None)
    return session if isinstance(session, str) and session else None


def browser_key(request) -> str:
    """The key of the browser behind a request: its cookie's, else its session's ("session:<id>"), else ''."""
    cookies = getattr(request, "cookies", None) or {}
    key = cookies.get(KEY_COOKIE) if hasattr(cookies, "get") else None
    if isinstance(key, str) and KEY.fullmatch(key):
        return key
    session = _session(request)
    return f"session:{session}" if session else ""


def attach_run(request, control) -> None:
    """`control` (a StopSignal) stops this session's run from now on, for the browser that started it."""
    session = _session(request)
    if session is not None:
        with _lock:
            _runs[session] = (control, browser_key(request))


def detach_run(request, control) -> None:
    """The run of `control` is over."""
    session = _session(request)
    with _lock:
        if session is not None and control is not None and _runs.get(session, (None,))[0] is control:
            del _runs[session]


def run_of(request):
    """The StopSignal of this session's run still going, if the browser behind `request` started it; else None."""
    session = _session(request)
    with _lock:
        control, key = _runs.get(session, (None, None)) if session else (None, None)
    return control if control is not None and key == browser_key(request) else None
