"""The app refuses to start on a gradio whose internals its protection patches are gone (server.compat).

Regression (issue 26, item 3): server.admission replaced Queue.push and server.session_state and server.admission
wrapped Blocks.preprocess_data by assignment; had a gradio release renamed either, the assignment would have added
an attribute nobody calls, and the admission checks, the session bound and the URL refusal would have switched off
without a word. Each case below renames or removes one internal and starts the app as `python app.py` does."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from gradio.blocks import Blocks
from gradio.queueing import Event, Queue
from gradio.state_holder import SessionState

from server import compat

ROOT = Path(__file__).resolve().parents[2]


def test_the_pinned_version_is_the_requirements_one():
    """Oracle: requirements.txt's gradio pin, the version the message names."""
    pin = re.search(r"^gradio==([\w.]+)", (ROOT / "requirements.txt").read_text(encoding="utf-8"), re.M).group(1)
    assert compat.PINNED == pin


def _renamed(monkeypatch, cls, name):
    monkeypatch.setattr(cls, f"{name}_renamed", getattr(cls, name), raising=False)
    monkeypatch.delattr(cls, name)


def _init_without(monkeypatch, cls, attribute):
    init = cls.__init__

    def changed(self, *args, **kwargs):
        init(self, *args, **kwargs)
        setattr(self, f"{attribute}_renamed", getattr(self, attribute))
        delattr(self, attribute)

    monkeypatch.setattr(cls, "__init__", changed)


@pytest.mark.parametrize("change, named", [
    (lambda mp: _renamed(mp, Queue, "push"), "Queue.push(body, request, username)"),
    (lambda mp: _renamed(mp, Blocks, "preprocess_data"), "Blocks.preprocess_data(block_fn, inputs, state, ...)"),
    (lambda mp: _init_without(mp, Event, "concurrency_id"), "Event.session_hash, Event.request, Event.concurrency_id"),
    (lambda mp: _init_without(mp, SessionState, "blocks_config"), "SessionState.blocks_config.blocks"),
    (lambda mp: _init_without(mp, Queue, "active_jobs"), "Queue.active_jobs"),
])
def test_start_up_refuses_a_gradio_without_an_internal_it_patches(monkeypatch, change, named):
    """Invariant: with one internal renamed, the app does not start (launch raises before gradio serves anything)
    and the message names that internal, who uses it and the pinned gradio version."""
    import app

    change(monkeypatch)
    with pytest.raises(compat.GradioChanged) as refused:
        app.launch(server_port=None, prevent_thread_lock=True, quiet=True)
    message = str(refused.value)
    assert named in message and "(used by server." in message and f"gradio=={compat.PINNED}" in message, message


def test_the_installed_gradio_has_every_internal():
    """Invariant: on the pinned gradio nothing is missing (so the refusals above come from the renames alone)."""
    import app

    demo = app.build_demo()
    assert compat.missing(demo) == []
