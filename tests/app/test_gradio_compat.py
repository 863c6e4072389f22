"""The app refuses to start on a gradio whose internals it relies on are gone or behave otherwise (server.compat).

Regression (issue 26, item 3): server.admission replaced Queue.push and server.session_state and server.admission
wrapped Blocks.preprocess_data by assignment; had a gradio release renamed either, the assignment would have added
an attribute nobody calls, and the protection would have switched off without a word. Issue 41, item 6: seven of
the checks searched gradio's source text (a harmless refactor broke them) and seven internals were not checked.
Each case below renames, removes or changes one internal; the check (server.compat_probe drives a page of its own
through gradio's routes and queue) refuses naming it. No case reads gradio's source."""
from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import gradio as gr
import gradio.context
import gradio.routes
import pytest
import starlette.status
from gradio import route_utils
from gradio.block_function import BlockFunction
from gradio.blocks import Block, Blocks
from gradio.queueing import Event, EventQueue, Queue
from gradio.state_holder import SessionState, StateHolder

from server import compat

ROOT = Path(__file__).resolve().parents[2]


def test_the_pinned_version_is_the_requirements_one():
    """Oracle: requirements.txt's gradio pin, the version the message names."""
    pin = re.search(r"^gradio==([\w.]+)", (ROOT / "requirements.txt").read_text(encoding="utf-8"), re.M).group(1)
    assert compat.PINNED == pin


def test_the_installed_gradio_passes_every_check():
    """Invariant: on the pinned gradio nothing is refused (so each refusal below comes from its change alone)."""
    assert compat.missing() == []


def _renamed(monkeypatch, owner, name):
    monkeypatch.setattr(owner, f"{name}_renamed", getattr(owner, name), raising=False)
    monkeypatch.delattr(owner, name)


def _init_without(monkeypatch, cls, attribute):
    init = cls.__init__

    def changed(self, *args, **kwargs):
        init(self, *args, **kwargs)
        setattr(self, f"{attribute}_renamed", getattr(self, attribute))
        delattr(self, attribute)

    monkeypatch.setattr(cls, "__init__", changed)


def _around(monkeypatch, cls, name, before=None, after=None):
    """cls.name, with `before(self, args)` run before gradio's own and `after(result)` on its result."""
    original = getattr(cls, name)

    def changed(self, *args, **kwargs):
        if before:
            before(self, args, kwargs)
        result = original(self, *args, **kwargs)
        return after(result) if after else result

    monkeypatch.setattr(cls, name, changed)


def _picks_last(monkeypatch):
    original = Queue.get_events

    def picks_last(self):
        lines = list(self.event_queue_per_concurrency_id.values())
        for line in lines:
            line.queue.reverse()
        try:
            return original(self)
        finally:
            for line in lines:
                line.queue.reverse()

    monkeypatch.setattr(Queue, "get_events", picks_last)


def _fresh_sessions(monkeypatch):
    """StateHolder.__getitem__ making a new session whatever .session_data holds."""
    def fresh(self, session_id):
        self.session_data[session_id] = SessionState(self.blocks)
        return self.session_data[session_id]

    monkeypatch.setattr(StateHolder, "__getitem__", fresh)


def _body_without_data(monkeypatch):
    made = gradio.routes.PredictBodyInternal
    monkeypatch.setattr(gradio.routes, "PredictBodyInternal", lambda **kwargs: made(**{**kwargs, "data": []}))


def _values_not_held(monkeypatch):
    monkeypatch.setattr(SessionState, "_update_value_in_config", lambda self, key, value: None)


def _configs_updated(monkeypatch):
    def update_value(self, key, value):
        self.config_values.setdefault(key, {"props": {}})["props"]["value"] = value

    monkeypatch.setattr(SessionState, "_update_value_in_config", update_value)


def _session_reads_fns(monkeypatch):
    _around(monkeypatch, SessionState, "__init__", before=lambda self, args, kwargs: args[0].fns)


def _analytics_from_class(monkeypatch):
    original = Queue.process_events

    async def process(self, *args, **kwargs):
        self.__dict__.pop("compute_analytics_summary", None)
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(Queue, "process_events", process)


def _instance_pick_ignored(monkeypatch):
    original = Queue.start_processing

    async def start(self):
        self.__dict__.pop("get_events", None)
        return await original(self)

    monkeypatch.setattr(Queue, "start_processing", start)


def _line_left_counted(monkeypatch):
    """Queue.process_events returning with its line still counting the request as running."""
    original = Queue.process_events

    async def process(self, events, *args, **kwargs):
        try:
            return await original(self, events, *args, **kwargs)
        finally:
            self.event_queue_per_concurrency_id[events[0].concurrency_id].current_concurrency += 1

    monkeypatch.setattr(Queue, "process_events", process)


async def _picks_until_cancelled(self):
    """Queue.start_processing rewritten to run until its task is cancelled: it never reads `stopped`."""
    while True:
        async with self.delete_lock:
            self.get_events()
        await asyncio.sleep(self.sleep_when_free)


def _function_fixed_at_build(monkeypatch):
    """BlockFunction.fn as the build made it: a function put in afterwards is never called."""
    init = BlockFunction.__init__

    def changed(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.__dict__["built_fn"] = self.__dict__.pop("fn")

    monkeypatch.setattr(BlockFunction, "__init__", changed)
    monkeypatch.setattr(BlockFunction, "fn", property(lambda self: self.built_fn, lambda self, value: None),
                        raising=False)


def _progress_on_dropped(monkeypatch):
    _around(monkeypatch, BlockFunction, "get_config", after=lambda config: {**config, "show_progress_on": None})


CHANGES = [
    ("Queue.push renamed", lambda mp: _renamed(mp, Queue, "push"), "Queue.push(body=, request=, username=)"),
    ("the body's data emptied by the route", _body_without_data, "the request body's fn_index, data"),
    ("a validator error answered 400", lambda mp: mp.setattr(starlette.status, "HTTP_422_UNPROCESSABLE_CONTENT", 400),
     "Queue.push answering (False, errors, 'validator_error')"),
    ("Blocks.queue() keeping its queue elsewhere", lambda mp: _around(
        mp, Blocks, "queue", after=lambda demo: setattr(demo, "_queue", None) or demo),
     "Blocks.queue() -> Blocks._queue"),
    ("BlockFunction.input_parameter_names renamed", lambda mp: _init_without(
        mp, BlockFunction, "input_parameter_names"), "Blocks.fns[fn_index]: BlockFunction"),
    ("BlockFunction.types_generator renamed", lambda mp: _init_without(mp, BlockFunction, "types_generator"),
     "Blocks.fns[fn_index]: BlockFunction"),
    ("BlockFunction.fn fixed at the build", _function_fixed_at_build, "BlockFunction.fn replaced after the build"),
    ("EventQueue.current_concurrency renamed", lambda mp: _init_without(mp, EventQueue, "current_concurrency"),
     "Queue.event_queue_per_concurrency_id[group]"),
    ("Event.concurrency_id renamed", lambda mp: _init_without(mp, Event, "concurrency_id"), "Event._id, .session_hash"),
    ("Event.request renamed", lambda mp: _init_without(mp, Event, "request"), "Event._id, .session_hash"),
    ("gradio's own Event.fair_client", lambda mp: mp.setattr(Event, "fair_client", None, raising=False),
     "Event.fair_client, Event.fair_request, Queue.turn_record"),
    ("gradio's own Queue.turn_record", lambda mp: mp.setattr(Queue, "turn_record", None, raising=False),
     "Event.fair_client, Event.fair_request, Queue.turn_record"),
    ("broadcast_estimations sending nothing", lambda mp: mp.setattr(
        Queue, "broadcast_estimations", lambda self, group, after=None: None), "Queue.broadcast_estimations"),
    ("send_message sending nothing", lambda mp: mp.setattr(Queue, "send_message", lambda self, event, message: None),
     "Queue.send_message(event, ProcessCompletedMessage"),
    ("get_events picking a line's last", _picks_last, "Queue.get_events() -> (events, batch, group) or None"),
    ("start_processing calling the class's get_events", _instance_pick_ignored, "Queue.start_processing calling"),
    ("process_events leaving its line counted", _line_left_counted, "Queue.start_processing calling"),
    ("start_processing never stopping", lambda mp: mp.setattr(Queue, "start_processing", _picks_until_cancelled),
     "Queue.start_processing calling"),
    ("the class's compute_analytics_summary called", _analytics_from_class, "Queue.compute_analytics_summary"),
    ("Blocks.preprocess_data renamed", lambda mp: _renamed(mp, Blocks, "preprocess_data"),
     "Blocks.preprocess_data(block_fn, inputs, state)"),
    ("a session holding no input value", _values_not_held, "SessionState.config_values[id]['props']['value']"),
    ("StateHolder.__getitem__ replacing a session put in", _fresh_sessions, "StateHolder.__getitem__ keeping"),
    ("SessionState(blocks) reading blocks.fns", _session_reads_fns, "SessionState(blocks) reading only"),
    ("SessionState.blocks_config renamed", lambda mp: _init_without(mp, SessionState, "blocks_config"),
     "SessionState.blocks_config.blocks"),
    ("a session's configs updated through setdefault", _configs_updated,
     "SessionState.config_values used only through what PageConfigs overrides"),
    ("get_blocks_context renamed", lambda mp: _renamed(mp, gradio.context, "get_blocks_context"),
     "gradio.context.get_blocks_context().blocks"),
    ("show_progress_on left out of the config", _progress_on_dropped, "BlockFunction.show_progress_on changed"),
    ("Tab.id renamed", lambda mp: _init_without(mp, gr.Tab, "id"), "Tabs.children, Tab.id"),
    ("a component's type its module's path", lambda mp: mp.setattr(
        Block, "get_block_name", lambda self: f"{type(self).__module__}.{type(self).__name__}".lower()),
     "a component's type is its class's name"),
    ("the root ignoring X-Forwarded-Host", lambda mp: mp.setattr(
        route_utils, "get_root_url", lambda request, route_path, root_path: "http://127.0.0.1"),
     "the config route's root"),
    ("Blocks.GRADIO_CACHE renamed", lambda mp: _init_without(mp, Blocks, "GRADIO_CACHE"), "Blocks.GRADIO_CACHE"),
    ("launch without state_session_capacity", lambda mp: mp.setattr(Blocks, "launch", lambda self, **kwargs: None),
     "Blocks.launch(state_session_capacity"),
]


@pytest.mark.parametrize("change, named", [(c, n) for _, c, n in CHANGES], ids=[i for i, _, _ in CHANGES])
def test_each_internal_changed_is_refused_by_name(monkeypatch, change, named):
    """Invariant: with one internal renamed or behaving otherwise, the check refuses, naming that internal, who
    uses it and the pinned gradio version."""
    change(monkeypatch)
    with pytest.raises(compat.GradioChanged) as refused:
        compat.check()
    message = str(refused.value)
    assert named in message and "(used by " in message and f"gradio=={compat.PINNED}" in message, message


def _get_events_refactored(self):
    """gradio's Queue.get_events for lines without batches, written otherwise (other names, no shuffle)."""
    for group, line in list(self.event_queue_per_concurrency_id.items()):
        if line.queue and (line.concurrency_limit is None or line.current_concurrency < line.concurrency_limit):
            return [line.queue.pop(0)], False, group
    return None


def test_a_harmless_refactor_passes(monkeypatch):
    """Invariant: the checks read behaviour, not source text. Queue.get_events rewritten with other names (main's
    check searched its source for "event_queue.queue[0]" and refused it) picks as before, and nothing is refused."""
    monkeypatch.setattr(Queue, "get_events", _get_events_refactored)
    assert compat.missing() == []


def test_a_slower_gradio_changes_no_verdict(monkeypatch):
    """Invariant: the verdict depends on what gradio does, never on how fast it does it. Here gradio's
    process_events ends 0.2 s later than it would (its reset of the run's iterators slowed, as on a loaded machine,
    after the line was freed), and nothing is refused. Before (the probe ran gradio's picking loop as a server
    does, 96b546d..compat41): refused, 'Queue.start_processing calling ...': the loop had picked and run the next
    request before the last one's process_events returned."""
    original = Queue.reset_iterators

    async def slower(self, event_id):
        await asyncio.sleep(0.2)
        return await original(self, event_id)

    monkeypatch.setattr(Queue, "reset_iterators", slower)
    assert compat.missing() == []


def test_the_probe_never_refuses_an_unchanged_gradio_beside_a_busy_thread():
    """Invariant: 10 probes, while a thread of this process keeps the interpreter busy (every switch between
    gradio's threads waits on it, as on a loaded machine), refuse nothing. Before (96b546d..compat41): 2 of 50
    refused, 'Queue.start_processing calling ...' (load 8 on 2 cores); 10 here, not 50, because 50 took 60-480 s
    of the suite: the deterministic check of the race is test_a_slower_gradio_changes_no_verdict."""
    done = threading.Event()

    def busy():
        while not done.is_set():
            pass

    spinning = threading.Thread(target=busy, daemon=True)
    spinning.start()
    try:
        refused = [found for found in (compat.missing() for _ in range(10)) if found]
    finally:
        done.set()
        spinning.join()
    assert refused == []


@pytest.mark.parametrize("change, named", [
    (lambda mp: _renamed(mp, Queue, "push"), "Queue.push(body=, request=, username=)"),
    (lambda mp: _renamed(mp, gradio.context, "get_blocks_context"), "gradio.context.get_blocks_context()"),
])
def test_start_up_refuses_before_building_the_page(monkeypatch, change, named):
    """Invariant: app.launch refuses before gradio serves anything, and before building the page (which uses
    get_blocks_context: a rename of it is named, not an AttributeError from deep in the build)."""
    import app

    change(monkeypatch)
    with pytest.raises(compat.GradioChanged) as refused:
        app.launch(server_port=None, prevent_thread_lock=True, quiet=True)
    assert named in str(refused.value)


def test_a_served_page_without_the_progress_set_after_the_build_is_refused():
    """Invariant (check_served, after launch): the config gradio serves must have the show_progress_on the app set
    after the build; a config made before that change is refused naming it, one made after passes."""
    with gr.Blocks() as demo:
        text = gr.Textbox()
        text.submit(lambda words: words, text, text, show_progress="hidden")
    next(iter(demo.fns.values())).show_progress_on = []
    with pytest.raises(compat.GradioChanged, match="BlockFunction.show_progress_on changed after the build"):
        compat.check_served(demo)  # demo.config: made when the build ended
    demo.config = demo.get_config_file()  # as launch makes it
    compat.check_served(demo)


def test_python_app_py_stops_with_the_message(tmp_path):
    """Invariant: `python app.py` on such a gradio exits with an error status and the message (not a traceback from
    deep inside gradio, and not a server running unprotected)."""
    start = ("import gradio.queueing as q; del q.Queue.push; import runpy, sys; sys.argv = ['app.py']; "
             f"runpy.run_path({str(ROOT / 'app.py')!r}, run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", start], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "GRADIO_SERVER_PORT": "0", "GRADIO_TEMP_DIR": str(tmp_path)})
    assert done.returncode == 1, done.stderr[-2000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("Attention Lab did not start: gradio ") and "Queue.push(body=, request=, username=)" in last
    assert f"gradio=={compat.PINNED}" in last and "Traceback" not in done.stderr
