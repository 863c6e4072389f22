"""The app refuses to start on a gradio whose internals its protection patches are gone (server.compat).

Regression (issue 26, item 3): server.admission replaced Queue.push and server.session_state and server.admission
wrapped Blocks.preprocess_data by assignment; had a gradio release renamed either, the assignment would have added
an attribute nobody calls, and the admission checks, the session bound and the URL refusal would have switched off
without a word. Each case below renames or removes one internal and starts the app as `python app.py` does."""
from __future__ import annotations

import os
import re
import subprocess
import sys
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
    (lambda mp: _init_without(mp, SessionState, "config_values"), "StateHolder.__getitem__ making SessionState"),
    (lambda mp: mp.setattr(Queue, "get_events", lambda self: None), "Queue.get_events picking only from a line's"),
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


def test_python_app_py_stops_with_the_message(tmp_path):
    """Invariant: `python app.py` on such a gradio exits with an error status and the message (not a traceback from
    deep inside gradio, and not a server running unprotected)."""
    start = ("import gradio.queueing as q; del q.Queue.push; import runpy, sys; sys.argv = ['app.py']; "
             f"runpy.run_path({str(ROOT / 'app.py')!r}, run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", start], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "GRADIO_SERVER_PORT": "0", "GRADIO_TEMP_DIR": str(tmp_path)})
    assert done.returncode == 1, done.stderr[-2000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("Attention Lab did not start: gradio ") and "Queue.push(body, request, username)" in last
    assert f"gradio=={compat.PINNED}" in last and "Traceback" not in done.stderr
