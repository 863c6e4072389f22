"""A student's handlers of a class (issue 39), and every device's poll: join by code or by link, answer by a choice
or by tapping a cell, and each second ask the class record what changed (no model runs: the answer is read from
the record, and a device that saw this state already gets nothing).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gradio as gr

from checks import UserError
from store.classes import CLASSES, ClassEnded, Seen, normal_code
from store.clients import client_address
from store.sessions import browser_key
from tabs.classroom.view import COVERED, asked, grid, guesses_figure, result, split_figure, waiting
from widgets.answers import Answer

STUDENT, TEACHER = "student", "teacher"


def join(typed, request: gr.Request = None) -> tuple[str, str]:
    """(the class's code, the line the student reads) after joining the class of the code `typed`."""
    code = normal_code(typed)
    number = CLASSES.join(code, browser_key(request), client_address(request))
    return code, f"You are student **{number}** of class **{code}**: this panel shows what your teacher shows."


def code_in_link(request) -> str | None:
    """The class code of the link the page was opened with (`?class=CODE`), or None."""
    params = getattr(request, "query_params", None)
    code = params.get("class") if params is not None and hasattr(params, "get") else None
    return code if isinstance(code, str) and code.strip() else None


@dataclass(frozen=True)
class Answered(Answer):
    """This student's line and its grid with the choice marked (widgets.answers: each field sets the tab's
    component of its name)."""

    line: Any
    grid: Any


def answer(code, choice, request: gr.Request = None) -> Answered:
    """This student's line and grid after answering the current question with the choice of index `choice` (a
    tapped cell's column, or a choice picked)."""
    key = browser_key(request)
    CLASSES.answer(code, key, choice)
    seen = CLASSES.seen(code, key)
    return Answered(waiting(seen), grid(seen))


def answer_label(code, label, request: gr.Request = None) -> Answered:
    """Answer with the choice whose label is `label` (the radio's)."""
    seen = CLASSES.seen(code, browser_key(request))
    if seen.question is None or label not in seen.question.choices:
        raise UserError("pick one of the question's choices")
    return answer(code, seen.question.choices.index(label), request)


def answer_tap(code, column, request: gr.Request = None) -> Answered:
    """Answer with the cell tapped (its column, sent by the grid) of the row asked."""
    try:
        column = int(column)
    except (TypeError, ValueError):
        raise UserError("tap a cell of the row asked") from None
    return answer(code, column, request)


def _kept():
    return field(default_factory=gr.skip)


@dataclass(frozen=True)
class Polled(Answer):
    """What a poll sets in the tab (widgets.answers), each left as it is (gr.skip) unless given: the line above
    the class, the view pushed, the split, the question, the grid and the choices to answer by, a student's line,
    the state seen (its version and count of answers), the timer, the class's guesses, whether the view is shown
    (its box) and the push whose figure the device holds."""

    status: Any = _kept()
    view: Any = _kept()
    split: Any = _kept()
    question: Any = _kept()
    grid: Any = _kept()
    choices: Any = _kept()
    line: Any = _kept()
    seen: Any = _kept()
    seen_answered: Any = _kept()
    timer: Any = _kept()
    guesses: Any = _kept()
    shown: Any = _kept()
    seen_push: Any = _kept()


def stamp(code, request: gr.Request = None) -> str:
    """What a page asks every CLASS_POLL_SECONDS (its gr.Timer): a short text that changes when its class `code`
    has something new for it (store.classes.Classes.stamp), and then only does the page poll (page.py: the poll
    runs on the text's change). A class unchanged costs a device one short text a period, not a poll, whose dozen
    outputs gradio rebuilds each as a component even when it skips them (10-14 ms of the server's CPU a device a
    second: bench/RESULTS.md). The class gone, or this device none of it: a text that says which, and the poll
    says it in words."""
    if not code:
        return ""
    try:
        return CLASSES.stamp(code, browser_key(request))
    except UserError as e:
        return f"{str(code)[:16]} {type(e).__name__}"


def poll(code, role, seen_version, seen_answered, following, seen_push=-1, request: gr.Request = None) -> Polled:
    """What a device of the class `code` updates: nothing (gr.skip) when it has seen this state; the class's end
    said in words (the timer stopped) when the class is gone, as after a restart of the app. `seen_push` is the
    push whose figure the device holds (-1: none): that figure is not sent again (hidden while a question is open,
    shown again at the reveal)."""
    stop = gr.Timer(active=False)
    if not code:
        return Polled(timer=stop)
    try:
        seen = CLASSES.seen(code, browser_key(request))
    except ClassEnded as e:
        return Polled(str(e), None, None, "", "", gr.update(choices=[], value=None, visible=False), "", -1, -1, stop,
                      None, gr.Column(visible=False), -1)
    except UserError as e:
        return Polled(status=str(e), timer=stop)
    teacher = seen.student is None
    changed = seen.version != seen_version
    counted = teacher and seen.answered != seen_answered  # a student joined or answered: the projector's count
    if not changed and not counted:
        return Polled()
    if not teacher and not following:  # exploring on its own: told that something changed, nothing redrawn
        return Polled(status=f"Your teacher shows something new in class **{seen.code}**: press **Follow the "
                             "teacher**.")
    return updates(seen, teacher, changed, seen_push)


def updates(seen: Seen, teacher: bool, changed: bool, held: int = -1) -> Polled:
    """What a device that has not seen this state updates: the pushed view (hidden while a question is open; its
    figure sent only to a device that does not hold it, `held` being the push whose figure it holds), the split
    and the class's guesses on the heatmap (live for the teacher; for a student after the reveal), the question,
    the grid and the choices to answer by, and a student's line."""
    skip = gr.skip()
    question = seen.question
    open_ = question is not None and not seen.revealed
    status = (f"Class **{seen.code}**: {seen.students} student{'s' if seen.students != 1 else ''} joined."
              if teacher else f"You are student **{seen.student}** of class **{seen.code}**.")
    shown = seen.pushed is not None and not open_ and not seen.covered
    if seen.pushed is None:
        view, push = None, -1
    elif shown and held != seen.push:  # sent once a push, to each device, when it is to be seen
        view, push = seen.pushed.figure, seen.push
    else:
        view, push = skip, skip
    if teacher:
        split = split_figure(seen, seen.revealed) if question is not None else None
        guesses = guesses_figure(seen, seen.revealed)
    else:
        split = (split_figure(seen, True) if seen.revealed else None) if changed else skip
        guesses = (guesses_figure(seen, True) if seen.revealed else None) if changed else skip
    said = asked(question, seen.students, seen.counts) if question is not None else ""
    if not changed:
        return Polled(status, split=split, question=said, seen_answered=seen.answered, guesses=guesses)
    labels = list(question.choices) if question is not None else []
    picked = labels[seen.answer] if seen.answer is not None else None
    choices = gr.update(choices=labels, value=picked, visible=open_ and not teacher)
    line = "" if teacher else (result(seen) if seen.revealed else waiting(seen) if open_ else COVERED
                               if seen.covered and seen.pushed is not None else "")
    return Polled(status, view, split, said, grid(seen) if open_ and not teacher else "", choices, line,
                  seen.version, seen.answered, skip, guesses, gr.Column(visible=shown), push)
