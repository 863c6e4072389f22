"""What a device of a class shows, from what it sees of the class record (store.classes.Seen): the view pushed, the
question with its choices and the grid to tap, the class's split, and after the reveal whether this student was
right. Plain values: tabs/classroom/page.py puts them into the components.

The figures every device receives are built once per class and state, not once per device: the pushed figure is the
one the teacher's push drew (serialised once, store.classes.Pushed), and the split and the guesses after the reveal
(answers are closed then) are kept by (class, version) in a small bounded cache.
"""
from __future__ import annotations

import threading
from collections import OrderedDict

import gradio as gr

from visualize.class_answers import class_split, guess_heatmap, tap_grid
from visualize.text import markdown_text

from limits import CLASS
from store.classes import Question, Seen
from store.record_cache import SingleFlight

_plot = gr.Plot()
_lock = threading.Lock()
_revealed: OrderedDict[tuple, object] = OrderedDict()  # (figure, code, version) -> a revealed figure, serialised once
_flights = SingleFlight()  # one build of a revealed figure however many devices ask for it meanwhile


def _once(seen: Seen, name: str, revealed: bool, figure):
    """`figure()` as gr.Plot sends it: built for this call while answers come in (revealed False), else built once
    for the class's state (seen.code, seen.version), however many devices ask at once, and handed as it is to
    every device (2 figures a class kept)."""
    if not revealed:
        return _plot.postprocess(figure())
    key = (name, seen.code, seen.version)
    with _lock:
        if key in _revealed:
            _revealed.move_to_end(key)
            return _revealed[key]
    # the whole class polls within a second of the reveal: the polls that come while it is built wait for it
    return _flights.run(key, lambda: _made(key, figure))


def _made(key, figure):
    with _lock:  # built by a flight that ended just before this one began
        if key in _revealed:
            return _revealed[key]
    made = _plot.postprocess(figure())
    with _lock:
        _revealed[key] = made
        while len(_revealed) > 4 * CLASS["classes"]:
            _revealed.popitem(last=False)
    return made


def split_figure(seen: Seen, revealed: bool):
    """The class's split as gr.Plot sends it: live for the teacher (the right answer hidden), with the right one
    marked after the reveal (then the same for every device of the class, built once)."""
    question = seen.question
    if question is None:
        return None
    return _once(seen, "split", revealed, lambda: class_split(question.choices, seen.counts,
                                                              question.right if revealed else None))


def guesses_figure(seen: Seen, revealed: bool):
    """The class's guesses on the pushed heatmap as gr.Plot sends it (None when no row of it was asked): live on
    the projector, the model's own heatmap still hidden; beside the model's after the reveal, on every device."""
    if seen.pushed is None or not seen.guesses:
        return None
    return _once(seen, "guesses", revealed, lambda: guess_heatmap(seen.pushed.rows, seen.pushed.columns,
                                                                  seen.guesses))


def asked(question: Question, students: int, counts) -> str:
    """The question as every device shows it, with how many have answered."""
    return f"**Question {question.number}.** {question.ask}  \n*{sum(counts)} of {students} answered*"


def result(seen: Seen) -> str:
    """What a student reads after the reveal: right, or what the model does instead."""
    question = seen.question
    if question is None or question.right is None:
        return "**Revealed.**"
    right = markdown_text(question.choices[question.right])
    if seen.answer is None:
        return f"**You did not answer.** The answer: **{right}**."
    if seen.answer == question.right:
        return f"**Right!** You chose **{right}**, and so does the model."
    return (f"**Not this time.** You chose **{markdown_text(question.choices[seen.answer])}**; the answer: "
            f"**{right}**.")


COVERED = ("Your teacher has a figure ready and keeps it hidden until **Reveal**: think about what the model will "
           "do, then answer the question when it comes.")


def waiting(seen: Seen) -> str:
    """A student's line while the question is open: its answer so far, or how to give one."""
    question = seen.question
    if seen.answer is not None:
        return (f"Your answer: **{markdown_text(question.choices[seen.answer])}**. You can change it until your "
                "teacher reveals.")
    how = "tap the cell you predict in the grid, or pick it below" if question.row is not None else "pick it below"
    return f"Your prediction: {how}."


def grid(seen: Seen) -> str:
    """The grid a student taps for a question about a heatmap row ("" for a question of choices only)."""
    question, pushed = seen.question, seen.pushed
    if question is None or question.row is None or pushed is None:
        return ""
    return tap_grid(pushed.rows, pushed.columns, question.row, seen.answer)


def key_choices(columns) -> tuple[str, ...]:
    """A heatmap's keys as the choices of "which key will this query read?": each key with its position, so two
    equal tokens are two choices (`t (3)`, `t (7)`); the first CLASS["choices"] keys."""
    return tuple(f"{c} ({j + 1})" for j, c in enumerate(columns))[: CLASS["choices"]]
