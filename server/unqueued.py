"""Events answered outside the queue (`queue=False`) run no model.

Such an event is a POST answered in the request itself: it waits in none of the queue's lines (server.admission,
server.lines), so no fair turn, no bound per browser or address and no concurrency limit applies to it, and its
work shares the CPU with the requests running their turn. The app keeps such events for what must never wait behind
a line of heatmaps: Stop, the page's quick steps (clearing a figure, fitting a slider, opening a link's controls, a
demo's settings) and a class's events (a student's answer, the projector's split, a push; tabs/classroom), each
reading what is already computed. `run_no_model` makes that a rule of the server rather than a habit of each
handler: inside every such event the @gpu functions (store.gpu, the one door to a model's run) refuse to start
and the event answers in words (tests/app/test_unqueued.py).
"""
from __future__ import annotations

import functools
import inspect

import gradio as gr

from store.gpu import no_model

WHY = ("this needs a model to run, and this step is answered at once, outside the waiting line, so it only reads "
       "what is already computed: press Show attention (or the demo, or Patch) again, wait for its figure, then try "
       "again")


def unqueued(demo: gr.Blocks) -> list:
    """The app's events that run outside the queue and call a Python function."""
    return [fn for fn in demo.fns.values() if fn.fn is not None and not fn.queue]


def run_no_model(demo: gr.Blocks) -> None:
    """Run every event of `demo` outside the queue inside store.gpu.no_model (once: an event already wrapped is
    left as it is)."""
    for fn in unqueued(demo):
        if getattr(fn.fn, "runs_no_model", False):
            continue
        if inspect.iscoroutinefunction(fn.fn) or inspect.isasyncgenfunction(fn.fn) or fn.types_generator:
            raise TypeError(f"{fn.name}: an event outside the queue is a plain function here")
        fn.fn = _without_model(fn.fn)


def _without_model(call):
    @functools.wraps(call)
    def answered_at_once(*args, **kwargs):
        with no_model(WHY):
            return call(*args, **kwargs)
    answered_at_once.runs_no_model = True
    return answered_at_once
