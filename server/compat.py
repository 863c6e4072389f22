"""What the app takes from gradio beyond its public API, checked by behaviour when the app starts.

server.admission replaces the queue's `push` and reads the request body, the lines and the running jobs;
server.lines reorders the lines in place and hides a client's requests from gradio while it runs its share
(wrapping `get_events`, and `process_events` to record when a training ends), adds attributes of its own to
gradio's requests and queue, ends a request that made room with gradio's own error message and sends places in
line; server.admission and server.session_state wrap the input preparation `Blocks.preprocess_data`;
server.session_state and server.held_inputs read a session's `blocks_config` and `config_values`, and make gradio's
store of sessions build each session's configs on demand; server.analytics stops the queue's per-event analytics
summary; server.config_cache keys the page's config on gradio's own root; widgets.ui finds a section through
gradio's blocks context and changes events' `show_progress_on` after the build; app.py and tabs.attention.link read
the tabs' ids from their `children`; widgets.controls' subclasses keep gradio's component names.

gradio has no public way to do these jobs. If a release renamed or changed any of them, an assignment would add an
attribute nobody calls and the protection would switch off without a word. So `check` builds a page of three
components (server.compat_probe), drives it through gradio's own routes and queue with each replacement in place,
and refuses the start, naming each internal that no longer behaves as the app relies on and the gradio version the
app was written for (requirements.txt). No check reads gradio's source text: a harmless refactor passes.
`check_served` checks, after launch, the one thing only a launched page shows (its served config).
"""
from __future__ import annotations

import inspect
from typing import Callable, NamedTuple

import gradio as gr
from gradio.blocks import Blocks

from server import compat_probe as probe

PINNED = "6.31.0"  # requirements.txt's gradio, the version whose internals these are


class GradioChanged(RuntimeError):
    """The installed gradio lacks an internal the app relies on, or it behaves otherwise."""


class Check(NamedTuple):
    name: str  # the internal, as gradio names it
    sentence: str  # what the app relies on it to do
    users: str  # the app's modules that rely on it
    holds: Callable[[dict], bool]  # on what the probe saw (server.compat_probe)


def _sent(seen, session, event=None, msg=None) -> list[dict]:
    """The messages gradio sent `session` (those of one request, one kind, when given)."""
    return [m for m in seen[f"sent {session}"] if (event is None or m.get("event_id") == event._id)
            and (msg is None or m["msg"] == msg)]


def _ranks(seen, event) -> list[int]:
    return [m["rank"] for m in _sent(seen, probe.SESSION, event, "estimation")]


def _pushed(seen) -> bool:
    """The body push got is the one posted: its fn_index, data and session_hash."""
    call = seen["pushed"][probe.SESSION]
    return (set(call) >= {"body", "request", "username"} and call["fn_index"] == 0 and call["data"] == ["b"]
            and call["body"].session_hash == probe.SESSION and call["request"] is call["body"].request)


def _event(seen) -> bool:
    """The request `a` as the line holds it."""
    a, answer = seen["events"]["a"], seen["answers"]["a"][1]["event_id"]
    return (a._id == answer and a.session_hash == probe.SESSION and a.concurrency_id == probe.GROUP
            and a.fn._id == 0 and a.data.data == ["a"] and a.request.client.host == "127.0.0.1"
            and a.request.headers.get("host") == "127.0.0.1")


def _started_fair(seen) -> bool:
    """The line, reordered to [b, a, x] in place, ran b then a; x was picked, and refused in its preparation."""
    b, a, x = (seen["events"][k] for k in "bax")
    return ([p["ids"] for p in seen["processed"]] == [[b._id], [a._id], [x._id]]
            and seen["ran"] == ["b", "a"] and seen["picked none after"] is None)


def _completed(seen, session, event, error) -> bool:
    done = _sent(seen, session, event, "process_completed")
    return len(done) == 1 and done[0]["success"] is False and done[0]["output"]["error"] == error \
        and done[0]["title"] == "Error"


def _tidied(seen) -> bool:
    state, page = seen["state"], set(seen["page ids"])
    return set(state.blocks_config.blocks) == page and set(state.config_values) == page


CHECKS = [
    Check("Blocks.queue() -> Blocks._queue, a queueing.Queue", "the queue the routes use is the page's `_queue`",
          "server.admission, server.analytics", lambda seen: seen["queue"] == "Queue"),
    Check("Queue.push(body=, request=, username=)", "gradio's /queue/join calls the queue instance's `push` with "
          "keywords and answers {event_id} for (True, event_id, 'success')", "server.admission",
          lambda seen: _pushed(seen) and seen["answers"]["a"] == (200, {"event_id": seen["events"]["a"]._id})),
    Check("the request body's fn_index, data, session_hash", "the body `push` gets names the call's function (a "
          "key of Blocks.fns), its inputs and its session", "server.admission, server.lines", _pushed),
    Check("Queue.push answering (False, errors, 'validator_error')", "a call refused at the door answers 422 with "
          "the errors (gradio_client's ValidationError)", "server.admission",
          lambda seen: seen["answers"]["r"] == (422, {"detail": probe.REFUSAL})),
    Check("Blocks.fns[fn_index]: BlockFunction.concurrency_id, .inputs, .fn, .input_parameter_names, "
          ".show_progress, .queue, .types_generator", "each event's function, its group, inputs and parameter names, "
          "whether it is queued or a generator", "server.admission, server.http_gate, server.unqueued, widgets.ui",
          lambda seen: seen["fn"] == (probe.GROUP, True, True, ["words"], "hidden", True, False)),
    Check("BlockFunction.fn replaced after the build", "gradio calls the function an event holds when it is called, "
          "not the one it was built with", "server.unqueued", lambda seen: seen["ran replaced"] == ["b", "a"]),
    Check("Queue.event_queue_per_concurrency_id[group]: EventQueue.queue, .concurrency_limit, "
          ".current_concurrency", "a group's line: its waiting requests in order, its limit, how many run",
          "server.admission, server.lines", lambda seen: (
              lambda waiting, limit, running: [e._id for e in waiting] == [seen["events"][k]._id for k in "abcx"]
              and limit == probe.COMPAT_PROBE["places"] and running == 0)(*seen["line"])),
    Check("Event._id, .session_hash, .request, .concurrency_id, .fn, .data; Queue.event_ids_to_events",
          "a queued request: its id (as push answered), session, HTTP request, group, function and body",
          "server.admission, server.lines", _event),
    Check("Event.fair_client, Event.fair_request, Queue.turn_record (the app's own attributes)", "gradio's "
          "requests and queue take attributes of the app's and have none of these names",
          "server.lines", lambda seen: seen["added"] == (True, probe.GROUP, probe.GROUP) and seen["turn record free"]),
    Check("Queue.broadcast_estimations(group, after) through Queue.send_message", "each waiting request is sent "
          "its place in the line as the line is then (reordered in place)", "server.lines",
          lambda seen: _ranks(seen, seen["events"]["a"])[:2] == [0, 1]
          and _ranks(seen, seen["events"]["b"])[:2] == [1, 0]),
    Check("Queue.send_message(event, ProcessCompletedMessage(output=utils.error_payload(gr.Error), title, "
          "success=False))", "a request taken out of its line ends with the app's message shown as an error, "
          "and never runs", "server.lines",
          lambda seen: _completed(seen, probe.OTHER, seen["events"]["c"], probe.MADE_ROOM) and "c" not in seen["ran"]),
    Check("Queue.get_events() -> (events, batch, group) or None", "gradio picks the first request of a line's "
          "`.queue` as it is then, none from a line running its limit, and None when it picks none", "server.lines",
          lambda seen: _started_fair(seen) and any(p["running"] == 1 and p["waiting"] and p["picked"] is None
                                                   for p in seen["picks"])),
    Check("Queue.start_processing calling the instance's get_events under delete_lock, and process_events(events, "
          "batch, ...)", "the picking loop calls the app's replacements, polls again after picking none, and "
          "counts what it runs in current_concurrency and active_jobs until process_events returns",
          "server.lines, server.admission", lambda seen: (
              all(p["locked"] for p in seen["picks"]) and seen["picks"][0]["picked"] is None and len(
                  seen["picks"]) > 1 and all(p["running"] == 1 and p["active"] for p in seen["processed"])
              and [p["ran before return"] for p in seen["processed"]] == [["b"], ["b", "a"], ["b", "a"]]
              and all(p["freed"] for p in seen["processed"]) and seen["processed"][0]["args"][0] is False)),
    Check("Queue.compute_analytics_summary(records), Queue.ANALYTICS_MAX_EVENTS, "
          "Queue.cached_event_analytics_summary", "the instance's summary is what gradio calls after each event, "
          "and ANALYTICS_MAX_EVENTS = 0 keeps no event record", "server.analytics",
          lambda seen: len(seen["summaries"]) >= 3 and seen["analytics kept"] == 0),
    Check("Blocks.preprocess_data(block_fn, inputs, state)", "process_api prepares a call's inputs through the "
          "page instance's preprocess_data, given the session's state; a gr.Error it raises reaches the client",
          "server.admission, server.session_state", lambda seen: [p["inputs"] for p in seen["prepared"]] == [
              ["b"], ["a"], [probe.BAD]] and all(p["fn"] for p in seen["prepared"]) and seen["prepared"][0]["state"]
          is seen["state"] and _completed(seen, probe.BAD, seen["events"]["x"], probe.BAD_INPUT)),
    Check("SessionState.blocks_config.blocks, SessionState.config_values[id]['props']['value']", "a session files "
          "the components a call updated under their ids there, and holds the last value each input sent",
          "server.session_state, server.held_inputs", lambda seen: _tidied(seen)
          and seen["state"].blocks_config.blocks[seen["text id"]].lines == 2
          and seen["state"].config_values[seen["text id"]]["props"]["value"] == "a"),
    Check("Blocks.default_config.blocks, Blocks.state_holder (the routes' App.state_holder)", "the page's "
          "components by id, and the store of sessions every route reads", "server.session_state",
          lambda seen: seen["default blocks"] and seen["same holder"]),
    Check("StateHolder.__getitem__ keeping a session put in .session_data; SessionState(blocks) reading only "
          "blocks.default_config and blocks.blocks", "server.session_state's sessions, built on demand, are the "
          "ones gradio's calls use, with gradio's attributes and configs", "server.session_state",
          lambda seen: seen["session on demand"] and type(seen["state"]).__name__ == "PageSession"),
    Check("SessionState.config_values used only through what PageConfigs overrides", "gradio calls none of "
          f"{', '.join(probe.UNSAFE)} on a session's configs (they would bypass the configs built on demand)",
          "server.session_state", lambda seen: seen["watched"] == []),
    Check("gradio.context.get_blocks_context().blocks", "inside a Blocks being built, the blocks made so far "
          "(a section found by its elem_id)", "widgets.ui", lambda seen: seen["context finds"]),
    Check("BlockFunction.show_progress_on changed after the build", "the page's config is made from the value "
          "set after the build", "widgets.ui", lambda seen: seen["progress on"] == ([None], [[]])),
    Check("Tabs.children, Tab.id", "the tabs' ids, in order", "app, tabs.attention.link",
          lambda seen: seen["tab ids"] == ["compat-tab"]),
    Check("a component's type is its class's name", "widgets.controls' subclasses, named as gradio's, are drawn "
          "as gradio's", "widgets.controls", lambda seen: seen["dropdown type"] == "dropdown"),
    Check("the config route's root: route_utils.get_root_url(request, route_path='/config', root_path)",
          "the root in GET /config's answer is the one server.config_cache computes for the same request",
          "server.config_cache", lambda seen: seen["config root"][0] == seen["config root"][1] ==
          "http://compat.example"),
    Check("Blocks.GRADIO_CACHE", "the folder gradio keeps its files in", "server.guard",
          lambda seen: seen["cache"]),
    Check("Blocks.launch(state_session_capacity, max_file_size, app_kwargs, enable_monitoring)", "launch's "
          "public settings the protection passes", "server.guard, server.analytics",
          lambda seen: {"state_session_capacity", "max_file_size", "app_kwargs", "enable_monitoring"} <= set(
              inspect.signature(Blocks.launch).parameters)),
]


def missing(demo: Blocks | None = None) -> list[str]:
    """Each check of CHECKS the installed gradio fails, as 'name (used by ...): sentence'; the probe's first failed
    step last, when one failed. `demo` is not read: the probe is a page of its own."""
    seen = probe.Probe().observe()
    found = []
    for check in CHECKS:
        try:
            holds = bool(check.holds(seen))
        except Exception:  # noqa: BLE001 (a fact the probe could not see, or not as expected)
            holds = False
        if not holds:
            found.append(f"{check.name} (used by {check.users}): {check.sentence}")
    failed = probe.first_failure(seen)
    return found + ([f"the probe stopped at {failed}"] if found and failed else [])


def refusal(found: list[str]) -> GradioChanged:
    return GradioChanged(f"gradio {gr.__version__} does not behave as the app relies on: {'; '.join(found)}. The "
                         f"app was written for gradio=={PINNED} (requirements.txt): install that version, or update "
                         f"the app to the new gradio.")


def check(demo: Blocks | None = None) -> None:
    """Raise GradioChanged naming every internal the installed gradio lacks or changed and the version the app was
    written for; nothing when all behave as the app relies on."""
    found = missing(demo)
    if found:
        raise refusal(found)


def check_served(demo: Blocks) -> None:
    """After launch: the config gradio serves has each event's show_progress_on as the app set it after the build
    (widgets.ui.progress_only_where_drawn); GradioChanged naming it otherwise."""
    served = {d["id"]: d.get("show_progress_on") for d in demo.config["dependencies"]}
    wrong = [fn._id for fn in demo.fns.values() if fn.show_progress_on == [] and served.get(fn._id) != []]
    if wrong:
        raise refusal([f"BlockFunction.show_progress_on changed after the build (used by widgets.ui): the page "
                       f"served by launch has the value set after the build (not so for {len(wrong)} events)"])
