"""What the server's protection takes from gradio beyond its public API, checked when the app starts.

server.admission replaces the queue's `push` and reads its lines and running jobs; server.lines reorders the lines
and hides a client's requests from gradio while it runs its share (wrapping `get_events`, and `process_events` to
record when a training ends), ends a request that made room with gradio's own error message and sends places in
line; server.admission and server.session_state wrap the input preparation `Blocks.preprocess_data`;
server.session_state reads a session's `blocks_config` and has the store of sessions (StateHolder.__getitem__
making SessionState(self.blocks)) build a session's configs on demand; server.analytics stops the queue's per-event
analytics summary (`compute_analytics_summary`) and records.
gradio has no public way to do these jobs (a line per concurrency group, one training per client,
refusing a URL before gradio fetches it, a session kept at the page's size). If a gradio release renamed any of them,
an assignment would add an attribute nobody calls and the protection would switch off without a word; so `check`
looks for each one on the app's own Blocks and stops the start with a message naming what is missing and the gradio
version the app was written for (requirements.txt). Where gradio does have a public API (the sessions kept:
launch's `state_session_capacity`; the upload limit: `max_file_size`; middleware: `app_kwargs`), it is used, and
checked here too.
"""
from __future__ import annotations

import inspect

import gradio as gr
import gradio.routes
from gradio.blocks import Blocks
from gradio.queueing import Event, EventQueue, Queue
from gradio.state_holder import SessionState, StateHolder

PINNED = "6.31.0"  # requirements.txt's gradio, the version whose internals these are


class GradioChanged(RuntimeError):
    """The installed gradio lacks an internal the server's protection relies on."""


def _parameters(fn) -> list[str]:
    return [p for p in inspect.signature(fn).parameters if p != "self"]


def _event(demo: Blocks) -> Event:
    return Event(session_hash="compat", fn=next(iter(demo.fns.values())), request=None, username=None)


def _completed_error() -> bool:
    """The message server.lines sends a request that made room: an error completion, as gradio's own."""
    from gradio.server_messages import ProcessCompletedMessage
    from gradio.utils import error_payload

    payload = error_payload(gr.Error("compat"), True)
    return ProcessCompletedMessage(output=payload, title="Error", success=False).output["error"] == "compat"


def _session_on_demand(demo: Blocks) -> bool:
    """A session built on demand (server.session_state) has gradio's attributes and reads gradio's configs."""
    from server.session_state import PageSession

    ours, theirs = PageSession(demo), SessionState(demo)
    some = next(iter(theirs.config_values))
    return vars(ours).keys() == vars(theirs).keys() and ours.config_values[some] == theirs.config_values[some]


# (what gradio must have, the check on the app's Blocks, who relies on it)
REQUIRED = [
    ("Queue.push(body, request, username)", lambda demo: isinstance(demo._queue, Queue) and
     _parameters(demo._queue.push)[:3] == ["body", "request", "username"], "server.admission"),
    ("gradio.routes calling blocks._queue.push", lambda demo: "_queue.push(" in inspect.getsource(gradio.routes),
     "server.admission"),
    ("Queue.push answering 'validator_error'", lambda demo: "validator_error" in str(
        inspect.signature(Queue.push).return_annotation), "server.admission"),
    ("Queue.event_queue_per_concurrency_id[group].queue", lambda demo: isinstance(
        demo._queue.event_queue_per_concurrency_id, dict) and hasattr(EventQueue("compat", None), "queue"),
     "server.admission"),
    ("Queue.active_jobs", lambda demo: isinstance(demo._queue.active_jobs, list), "server.admission"),
    ("Event.session_hash, Event.request, Event.concurrency_id", lambda demo: (lambda e: e.session_hash == "compat"
     and e.request is None and e.concurrency_id == e.fn.concurrency_id)(_event(demo)), "server.admission"),
    ("Event.fn._id, Event.data (None until joined; the body's .data then)", lambda demo: (
        lambda e: e.fn._id == next(iter(demo.fns)) and e.data is None)(_event(demo)), "server.lines"),
    ("BlockFunction.concurrency_id, .inputs, .fn, .input_parameter_names", lambda demo: bool(demo.fns) and all(
        hasattr(fn, name) for fn in demo.fns.values()
        for name in ("concurrency_id", "inputs", "fn", "input_parameter_names")), "server.admission"),
    ("Blocks.preprocess_data(block_fn, inputs, state, ...)", lambda demo: _parameters(
        Blocks.preprocess_data)[:3] == ["block_fn", "inputs", "state"], "server.admission, server.session_state"),
    ("Blocks.process_api calling self.preprocess_data", lambda demo: "self.preprocess_data(" in inspect.getsource(
        Blocks.process_api), "server.admission, server.session_state"),
    ("SessionState.blocks_config.blocks, SessionState.config_values", lambda demo: (lambda s: isinstance(
        s.blocks_config.blocks, dict) and isinstance(s.config_values, dict))(SessionState(demo)),
     "server.session_state"),
    ("Blocks.default_config.blocks", lambda demo: isinstance(demo.default_config.blocks, dict),
     "server.session_state"),
    ("StateHolder.__getitem__ making SessionState(self.blocks) in .session_data; SessionState(blocks) reading only "
     "blocks.default_config and blocks.blocks", lambda demo: (lambda src: "SessionState(self.blocks)" in src and
     "self.session_data[session_id]" in src)(inspect.getsource(StateHolder.__getitem__)) and _session_on_demand(
         demo), "server.session_state"),
    ("Queue.start_processing calling self.get_events() under delete_lock", lambda demo: (lambda src: "self.get_events()"
     in src and "self.delete_lock" in src)(inspect.getsource(Queue.start_processing)), "server.lines"),
    ("Queue.get_events picking only from a line's .queue (its first), none from an empty one; start_processing "
     "polling again when it picks none", lambda demo: (lambda pick, loop: "event_queue.queue[0]" in pick and
     "len(event_queue.queue)" in pick and "event_queue.queue.remove(" in pick and "sleep_when_free" in loop)(
         inspect.getsource(Queue.get_events), inspect.getsource(Queue.start_processing)), "server.lines"),
    ("Queue.start_processing running a picked request through self.process_events(events, ...)", lambda demo: (
        "self.process_events" in inspect.getsource(Queue.start_processing) and _parameters(
            Queue.process_events)[0] == "events"), "server.lines"),
    ("EventQueue.concurrency_limit, .current_concurrency", lambda demo: (lambda q: q.concurrency_limit == 1 and
     q.current_concurrency == 0)(EventQueue("compat", 1)), "server.lines"),
    ("Queue.send_message, .broadcast_estimations(group), .event_ids_to_events, .create_event_queue_for_fn",
     lambda demo: all(callable(getattr(demo._queue, name)) for name in (
         "send_message", "broadcast_estimations", "create_event_queue_for_fn")) and isinstance(
         demo._queue.event_ids_to_events, dict), "server.lines"),
    ("Event._id; ProcessCompletedMessage(output, title, success); gradio.utils.error_payload", lambda demo: bool(
        _event(demo)._id) and _completed_error(), "server.lines"),
    ("Queue.compute_analytics_summary(records) called as self.compute_analytics_summary after events; "
     "Queue.cached_event_analytics_summary, .ANALYTICS_MAX_EVENTS bounding .event_analytics", lambda demo: (
         lambda src: src.count("self.compute_analytics_summary,") >= 2 and "> self.ANALYTICS_MAX_EVENTS" in src and
         _parameters(Queue.compute_analytics_summary) == ["records"] and isinstance(
             demo._queue.cached_event_analytics_summary, dict) and isinstance(demo._queue.ANALYTICS_MAX_EVENTS, int))(
         inspect.getsource(Queue)), "server.analytics"),
    ("Blocks.launch(enable_monitoring)", lambda demo: "enable_monitoring" in _parameters(Blocks.launch),
     "server.analytics"),
    ("Blocks.GRADIO_CACHE", lambda demo: isinstance(demo.GRADIO_CACHE, str), "server.guard"),
    ("Blocks.launch(state_session_capacity, max_file_size, app_kwargs)", lambda demo: {
        "state_session_capacity", "max_file_size", "app_kwargs"} <= set(_parameters(Blocks.launch)), "server.guard"),
    ("gradio's config route computing its root with route_utils.get_root_url(request, route_path, root_path)",
     lambda demo: _parameters(gradio.route_utils.get_root_url) == ["request", "route_path", "root_path"] and
     'route_path="/config"' in inspect.getsource(gradio.routes), "server.config_cache"),
]


def missing(demo: Blocks) -> list[str]:
    """What of REQUIRED the installed gradio lacks, for `demo` (after demo.queue()), each with who relies on it."""
    found = []
    for what, present, user in REQUIRED:
        try:
            ok = present(demo)
        except (AttributeError, TypeError, KeyError, StopIteration, OSError):
            ok = False
        if not ok:
            found.append(f"{what} (used by {user})")
    return found


def check(demo: Blocks) -> None:
    """Raise GradioChanged naming every internal the installed gradio lacks and the version the app was written
    for; nothing when all are there."""
    found = missing(demo)
    if found:
        raise GradioChanged(f"gradio {gr.__version__} lacks what the server's protection relies on: "
                            f"{'; '.join(found)}. The app was written for gradio=={PINNED} (requirements.txt): "
                            f"install that version, or update server/ to the new gradio.")
