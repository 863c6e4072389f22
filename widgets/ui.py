"""What the tabs share about drawing: the queue of quick redraws, and how a trigger with several listeners is
wired."""
from __future__ import annotations

import functools

import gradio as gr

from limits import DRAW_CONCURRENCY

FAST = dict(trigger_mode="always_last", show_progress="hidden", concurrency_limit=DRAW_CONCURRENCY,
            concurrency_id="draw")


def separately(*triggers):
    """An event for one listener of `triggers` among several, called as a trigger is: `separately(a.change)(fn,
    inputs, outputs, **kwargs)`. The listener follows (`.then`) a listener that does nothing, in the page, at once;
    its trigger_mode is "always_last" (a `.change` listener's, and FAST's) unless it says otherwise.

    Why (a trap of gradio 6's page): when a call of an "always_last" listener was put off and the running one ends,
    the page fires the whole trigger again, every listener of it, and puts off those still running, which do the
    same when they end. Two such listeners of one control re-ran each other for as long as the page stayed open:
    after two quick Layer and Head changes, the heatmap, its caption and the two-input view were redrawn about
    twice a second until a reload (tests/browser/test_classroom.py). A listener that follows another is put off,
    and fired again, alone. tests/app/test_listeners.py checks the whole app."""
    then = gr.on(list(triggers), None, None, None, trigger_mode="multiple", api_visibility="private").then
    return functools.partial(then, trigger_mode="always_last")
