"""A page of three components that server.compat builds at start and drives through gradio's own routes and queue,
recording what gradio did: the facts its checks read (gradio 6.31's behaviour, not its source text).

The probe joins five calls to its one event through `POST /gradio_api/queue/join` (an in-process ASGI client: no
socket), with the queue's `push`, `get_events`, `process_events`, `compute_analytics_summary` and the page's
`preprocess_data` replaced on the instances as server.admission, server.lines, server.analytics and server.guard
replace them (each replacement records, then calls gradio's own). Then it reorders the line in place, ends one
waiting request with an error message as server.lines does, and runs gradio's picking loop one pick at a time
(server.compat_picking), and reads what each session was sent, as a page's `GET /gradio_api/queue/data` does.
Sessions are server.session_state's (PageSessions), so the calls run on sessions built on demand.

Deterministic: one event loop runs one step at a time, each awaited to its end before the next starts (gradio's
thread pool runs the function, awaited); no step has a time limit, and gradio's loop ends after a count of turns.
So the facts, and the verdict, depend on what gradio does, never on how busy the machine is.

Every step records into `seen` and never raises: a step that fails records `failed: <step>` and what it would have
recorded is missing, which the checks that read it refuse.
"""
from __future__ import annotations

import asyncio
import threading

import gradio as gr
import httpx
from gradio import context

from limits import COMPAT_PROBE
from server.compat_picking import Picking
from server.config_cache import root_key
from server.session_state import PageConfigs, PageSession, PageSessions, drop_stray_components
from widgets.controls import Dropdown

GROUP = "compat"  # the probe's concurrency group
SESSION, OTHER, REFUSED, BAD = "compatprobe", "compatother", "compatrefused", "compatbad"  # its sessions
REFUSAL = [{"__type__": "validate", "is_valid": False, "parameter_name": "words", "message": "compat refused"}]
MADE_ROOM, BAD_INPUT = "compat: made room", "compat: refused before preparing"
# dict methods server.session_state.PageConfigs does not override, which would bypass its configs built on demand
UNSAFE = ("update", "setdefault", "copy", "popitem", "clear", "__or__", "__ior__", "__reversed__")


class WatchedConfigs(PageConfigs):
    """PageConfigs that records each use of a method it does not override (in `watched`, a list set per probe)."""


def _watching(name):
    def method(self, *args, **kwargs):
        self.watched.append(name)
        return getattr(dict, name)(self, *args, **kwargs)
    return method


for _name in UNSAFE:
    setattr(WatchedConfigs, _name, _watching(_name))


class WatchedSessions(PageSessions):
    """server.session_state's store of sessions, whose sessions' configs are watched."""

    def __getitem__(self, session_id):
        state = super().__getitem__(session_id)
        if type(state.config_values) is PageConfigs:
            state.config_values.__class__ = WatchedConfigs
            state.config_values.watched = self.watched
        return state


def run(coroutine):
    """Run `coroutine` to its end in a loop of its own (in a thread when this one already runs a loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    done = {}
    thread = threading.Thread(target=lambda: done.update(value=asyncio.run(coroutine)))
    thread.start()
    thread.join()
    return done.get("value")


def first_failure(seen: dict) -> str | None:
    """The first step of a probe that failed, as `step: error`, or None."""
    return next((f"{key[len('failed: '):]}: {value}" for key, value in seen.items() if key.startswith("failed: ")),
                None)


class Probe:
    """The page, built (its facts in `seen`), then driven by `observe`."""

    def __init__(self):
        self.seen: dict[str, object] = {}
        self.ran: list[str] = []  # the inputs the probe's function ran with
        self.watched: list[str] = []  # UNSAFE methods gradio called on a session's configs
        self.step("build", self.build)

    def step(self, name, fn):
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 (any failure is a fact: the checks reading this step refuse)
            self.seen[f"failed: {name}"] = f"{type(e).__name__}: {e}"[:300]
            return False

    async def async_step(self, name, coroutine):
        """Like `step`, for a coroutine (awaited to its end: no step has a time limit)."""
        try:
            return await coroutine
        except Exception as e:  # noqa: BLE001
            self.seen[f"failed: {name}"] = f"{type(e).__name__}: {e}"[:300]
            return False

    def failed(self) -> str | None:
        return first_failure(self.seen)

    def echo(self, words):
        self.ran.append(words)
        return gr.update(value=words, lines=2)

    def replaced(self, words):
        """The event's function put in after the build, as server.unqueued puts its guard around one."""
        self.ran_replaced.append(words)
        return self.echo(words)

    def progress_on(self) -> list:
        """Each event's show_progress_on in the page's config, as launch makes it."""
        return [d.get("show_progress_on") for d in self.page.get_config_file()["dependencies"]]

    def build(self):
        with gr.Blocks() as self.page:
            self.text = gr.Textbox()
            with gr.Tabs() as tabs:
                with gr.Tab("probe", id="compat-tab"):
                    with gr.Accordion(elem_id="compat-section") as section:
                        self.choice = Dropdown(["a"], value="a")
                    self.seen["context finds"] = [b for b in context.get_blocks_context().blocks.values()
                                                  if b.elem_id == "compat-section"] == [section]
            self.text.submit(self.echo, self.text, self.text, concurrency_id=GROUP,
                             concurrency_limit=COMPAT_PROBE["places"], show_progress="hidden")
        self.seen["tab ids"] = [tab.id for tab in tabs.children if isinstance(tab, gr.Tab)]
        self.fn = self.page.fns[max(self.page.fns)]
        self.seen["fn"] = (self.fn.concurrency_id, self.fn.inputs == [self.text], self.fn.fn == self.echo,
                           list(self.fn.input_parameter_names or []), self.fn.show_progress, self.fn.queue,
                           self.fn.types_generator)
        self.ran_replaced, self.fn.fn = [], self.replaced
        before, self.fn.show_progress_on = self.progress_on(), []
        self.seen["progress on"] = before, self.progress_on()
        config = self.page.get_config_file()
        self.seen["dropdown type"] = next(c["type"] for c in config["components"] if c["id"] == self.choice._id)
        self.queue = self.page._queue  # Blocks() called queue(): the app's own call would build the app a third time
        self.seen["queue"] = type(self.queue).__name__
        self.seen["default blocks"] = set(self.page.default_config.blocks) == set(self.page.blocks)
        self.seen["cache"] = isinstance(self.page.GRADIO_CACHE, str)
        self.seen["same holder"] = self.page.state_holder is self.page.app.state_holder
        self.seen["page ids"], self.seen["text id"] = list(self.page.default_config.blocks), self.text._id
        self.seen["turn record free"] = not hasattr(self.queue, "turn_record")

    def observe(self) -> dict:
        """Run the probe's steps in order, each only if all before it worked; `seen`, what they recorded."""
        for name, fn in (("sessions", self.sessions), ("instrument", self.instrument),
                         ("scenario", lambda: run(self.scenario()))):
            if self.failed() or self.step(name, fn) is False:
                break
        return self.seen

    def sessions(self):
        ours, theirs = PageSession(self.page), gr.blocks.SessionState(self.page)
        self.seen["session on demand"] = (vars(ours).keys() == vars(theirs).keys()
                                          and dict(ours.config_values.items()) == theirs.config_values)
        self.page.state_holder.__class__ = WatchedSessions
        self.page.state_holder.watched = self.watched

    def instrument(self):
        queue, page = self.queue, self.page
        push, prepare = queue.push, page.preprocess_data
        self.pushed, self.prepared, self.summaries = {}, [], []

        async def pushing(**kwargs):
            body = kwargs["body"]
            self.pushed[body.session_hash] = dict(kwargs, fn_index=body.fn_index, data=body.data)
            if body.session_hash == REFUSED:
                return False, REFUSAL, "validator_error"
            answer = await push(**kwargs)
            self.pushed[body.session_hash]["answer"] = answer
            return answer

        async def preparing(block_fn, inputs, state=None, *args, **kwargs):
            self.prepared.append(dict(fn=block_fn is self.fn, inputs=list(inputs), state=state))
            if inputs == [BAD]:
                raise gr.Error(BAD_INPUT, print_exception=False)
            try:
                return await prepare(block_fn, inputs, state, *args, **kwargs)
            finally:
                drop_stray_components(state, frozenset(page.default_config.blocks))

        def summary(records):
            self.summaries.append(list(records))
            return queue.cached_event_analytics_summary

        queue.push, self.picking = pushing, Picking(queue, GROUP, self.ran)
        queue.compute_analytics_summary, queue.ANALYTICS_MAX_EVENTS = summary, 0
        page.preprocess_data = preparing

    async def scenario(self):
        captured = []

        async def capture(scope, receive, send):
            captured.append(scope)
            await self.page.app(scope, receive, send)

        transport = httpx.ASGITransport(app=capture)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            for name, coroutine in (("join", lambda: self.join(client)), ("lines", self.lines),
                                    ("processing", self.processing), ("streams", self.streams)):
                if self.failed() or await self.async_step(name, coroutine()) is False:
                    return
            reply = await client.get("/config", headers={"x-forwarded-host": "compat.example"})
            self.seen["config root"] = reply.json().get("root"), root_key(captured[-1])[0]
        self.seen["state"] = self.page.state_holder.session_data.get(SESSION)
        self.seen["watched"] = list(self.watched)

    async def streams(self):
        """What gradio sent each session: the messages waiting for the session's event stream (the page's
        `GET /gradio_api/queue/data` reads them from there)."""
        for session in (SESSION, OTHER, BAD):
            waiting = self.queue.pending_messages_per_session[session]
            self.seen[f"sent {session}"] = [waiting.get_nowait().model_dump() for _ in range(waiting.qsize())]

    async def join(self, client):
        self.answers = {}
        for name, (session, words) in dict(a=(SESSION, "a"), b=(SESSION, "b"), c=(OTHER, "c"),
                                           r=(REFUSED, "r"), x=(BAD, BAD)).items():
            reply = await client.post("/gradio_api/queue/join", json={
                "data": [words], "fn_index": self.fn._id, "session_hash": session, "trigger_id": self.text._id,
                "event_data": None})
            self.answers[name] = reply.status_code, reply.json()
        self.seen["answers"] = self.answers
        self.seen["pushed"] = self.pushed
        line = self.queue.event_queue_per_concurrency_id[GROUP]
        self.events = {name: self.queue.event_ids_to_events.get(answer.get("event_id"))
                       for name, (_, answer) in self.answers.items() if "event_id" in answer}
        self.seen["events"] = self.events
        self.seen["line"] = (list(line.queue), line.concurrency_limit, line.current_concurrency)
        self.seen["analytics kept"] = len(self.queue.event_analytics)

    async def lines(self):
        """What server.lines does to a line: end a waiting request with a message, reorder, send the places."""
        from gradio.server_messages import ProcessCompletedMessage
        from gradio.utils import error_payload

        queue, (a, b, c, x) = self.queue, (self.events[k] for k in "abcx")
        line = queue.event_queue_per_concurrency_id[GROUP]
        line.queue.remove(c)
        queue.event_ids_to_events.pop(c._id, None)
        queue.send_message(c, ProcessCompletedMessage(output=error_payload(gr.Error(MADE_ROOM), True),
                                                      title="Error", success=False))
        line.queue[:] = [b, a, x]
        queue.broadcast_estimations(GROUP, 0)
        free = not any(hasattr(event, name) for event in (a, b) for name in ("fair_client", "fair_request"))
        for event in (a, b):
            event.fair_client = event.fair_request = GROUP
        self.seen["added"] = free, a.fair_client, b.fair_request

    async def processing(self):
        """gradio's loop picks b, a and x (one round each: the line's one place holds the next back) and runs each."""
        self.queue.active_jobs = [None, None]  # two workers: the line's own limit (1) holds the second back
        await self.picking.run(rounds=3)
        self.seen["picks"], self.seen["processed"] = self.picking.picks, self.picking.processed
        self.seen["prepared"], self.seen["summaries"], self.seen["ran"] = self.prepared, self.summaries, self.ran
        self.seen["ran replaced"] = self.ran_replaced
        self.seen["picked none after"] = self.picking.pick()  # every line empty
