"""What the Train tab tells a user about a run's start and end: a run refused before it is sent (and why, in
words), a run that waits for a place, the buttons disabled while one runs, and Stop."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import gradio as gr

from limits import TRAINING_GROUP
from store import sessions
from tabs.train.stop_signal import StopSignal
from widgets.answers import Answer


@dataclass(frozen=True)
class Said(Answer):
    """What a click that starts a run is told before it is sent (say_if_refused), each field the Train tab's
    component of its name (widgets.answers)."""

    notice: Any
    status: Any


@dataclass(frozen=True)
class Buttons(Answer):
    """The buttons that start a run: disabled while one runs (busy), back after (idle)."""

    start: Any
    compare: Any
    watch: Any


@dataclass(frozen=True)
class Idle(Answer):
    """After a run: the buttons back, and the notice of a run refused meanwhile gone."""

    buttons: Buttons
    notice: Any = ""


@dataclass(frozen=True)
class WithButtons(Answer):
    """A run's first update (any Answer of the run's), with the buttons it disables."""

    update: Answer
    buttons: Buttons


NOTHING_TRAINING = "Nothing is training in this tab: press **Start** (or a training demo) to train."


def stop_training(request: gr.Request = None):
    """Ask this session's run to stop after its current step. The run is the status line's one writer: its last
    update says how it ended ("Training stopped after ..."), within a step of the click. A reply of Stop's own
    there ("Stopping…") could arrive after that last update and hide it, so Stop leaves the status as it is, and a
    second click while stopping changes nothing. With no run going, Stop says so in the status: Stop is a
    `queue=False` event, where a gr.Error reaches the page as a bare "Error" (HTTP 500) and gr.Info shows nothing.
    The run's signal comes from store.sessions, for the browser that started it only (its key, in the page's
    cookie): not from the session's state, which anyone naming the session id would get (issue 30)."""
    control = sessions.run_of(request)
    if not isinstance(control, StopSignal) or control.ended:
        return NOTHING_TRAINING
    control.set()  # a second click sets it again: nothing changes
    return gr.skip()


REFUSED = "did not start"  # in every notice of a refused run: the page then sends no call (SHOW_NOTICE)
ALREADY_TRAINING = (f"**A training is already running in this tab, so this one {REFUSED}.** Press **Stop**, wait for "
                    "“Training stopped” in the status below, then click again.")


WAITING = "Waiting for a place to train"  # the status of a run that waits in line (brought into view: SHOW_NOTICE)


def waiting_words(places: int, waiting: int) -> str:
    """The status line of a run that will wait in line for a place to train (before its first update)."""
    others = f", and {waiting} more wait{'s' if waiting == 1 else ''} before yours" if waiting else ""
    return (f"**{WAITING}:** this server trains {places} model{'s' if places > 1 else ''} at a "
            f"time and all are busy{others}. Yours starts by itself when one ends (its place in line is shown here).")


def say_if_refused(door=None, request: gr.Request = None) -> Said:
    """What a click that starts a run (Start, Compare, Watch, a training demo) is told before the run asks to join
    the queue, in words: (the notice: why it will not start, "" when it will; the status: that it will wait for a
    place, else kept). The server refuses a run at the queue's door (server.admission: a second training of this
    browser, a full line, too many from one network), and gradio shows such a refusal only on the call's inputs: a
    demo's Watch has none, and the page stayed silent; a waiting run showed only "queue: 1/1" under "Press Start.".
    `door(group, request)` (app.py hands the server's in) gives the words the door would answer now and whether the
    line has a free place; a run of this tab already going is told in this tab's words. A `queue=False` step, so it
    answers even while the training line is full."""
    if sessions.run_of(request) is not None:
        return Said(ALREADY_TRAINING, gr.update())
    words, wait = door(TRAINING_GROUP, request) if door is not None else (None, None)
    if words:
        return Said(f"**This training {REFUSED}:** {words}.", gr.update())
    return Said("", waiting_words(*wait) if wait else gr.update())


# Shown under the buttons while Start is disabled by a run (app.py's CSS shows it exactly then): why it is disabled
BUSY = ("**Training in this tab.** One training at a time per browser: Start, Compare and Watch are back when it "
        "ends, and **Stop** ends it after its current step.")


def busy() -> Buttons:
    """While a run is going, no button (Start, Compare, Watch) starts another (one run per browser at a time)."""
    return Buttons(gr.update(interactive=False, value="Training…"), gr.update(interactive=False),
                   gr.update(interactive=False))


def idle() -> Idle:
    """After a run, however it ended: the buttons back, and a notice about a run refused meanwhile ("already
    running", no longer true) gone."""
    return Idle(Buttons(gr.update(interactive=True, value="Start"), gr.update(interactive=True),
                        gr.update(interactive=True)))


def disables_the_buttons(fn):
    """The run's updates (Answers), its first with the three buttons disabled (WithButtons), the others leaving them
    alone; `idle` runs after the run, however it ended. The run itself disables them, not a step before it: the
    server may refuse a run at the queue's door (a full line, one already running for this client), and gradio then
    skips the steps after it, so a step before had left a refused Start at "Training…" until the page was
    reloaded."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        for i, update in enumerate(fn(*args, **kwargs)):
            yield WithButtons(update, busy()) if i == 0 else update
    return run
