"""The teacher's handlers of a class (issue 39): start it (a code, a link and a QR code), show everyone the Attention
tab's view, ask which key a query will read, reveal, download the answers, end it. The teacher is the browser that
started the class (store.classes: its key, from the page's cookie); every other device is refused in words.
"""
from __future__ import annotations

import html
import re

import gradio as gr
import segno

from checks import UserError
from limits import CLASS
from store.classes import CLASSES, Pushed
from store.exports import EXPORTS
from store.sessions import browser_key
from tabs.classroom.pushable import HEAD, HeadView, PairView, SinusoidView, pushed_view
from tabs.classroom.view import key_choices
from tabs.demos import DEMOS
from visualize.reading import heatmap_cells
from visualize.text import markdown_text

# the demos whose question a class can be sent, with its choices (the others' are asked out loud)
ASKABLE = ", ".join(d.label for d in DEMOS if d.question is not None and d.question.choices is not None)
# the page's own address, as its browser reports it (origin and path): http(s), printable, no quotes or markup
PAGE = re.compile(r"https?://[A-Za-z0-9.\-:\[\]]{1,255}(/[A-Za-z0-9._~\-/%]{0,300})?")


def join_link(base, code: str) -> str:
    """The link a student opens to join: the page's own address (from the teacher's browser; a relative link
    when it is not a plain http(s) address) with `?class=CODE`. It carries nothing of the teacher's secret."""
    base = base if isinstance(base, str) and PAGE.fullmatch(base) else ""
    return f"{base}?class={code}"


def qr_svg(link: str) -> str:
    """The join link as a QR code, made here by segno (nothing fetched), as inline SVG that the page draws as large
    as its box (CSS: the projector's back row reads it)."""
    qr = segno.make(link, error="m")
    return qr.svg_inline(scale=8, border=2, dark="#000000", light="#ffffff", title="Join the class")


def start(base, request: gr.Request = None) -> tuple[str, str, str, str]:
    """(code, the code as the projector shows it, the link line, the QR code) of this browser's class, started
    now or already running."""
    room = CLASSES.start(browser_key(request))
    link = join_link(base, room.code)
    spaced = " ".join(room.code)
    return (room.code, f"<div class='class-code'>{spaced}</div>",
            f"Join at **{markdown_text(link)}** or type the code on the app's page (Class, Join).",
            qr_svg(link))


def push(code, vocab, which, head: HeadView, pair: PairView, waves: SinusoidView, covered: bool = False,
         request: gr.Request = None):
    """Show every device of the class the view `which` (tabs.classroom.pushable.VIEWS) as the teacher sees it:
    drawn once here, from what the teacher's page already computed (no model runs), the same serialised figure
    for every device. Returns the choices of the question rows (a head's queries; none for another view) and what
    the teacher is told."""
    key = browser_key(request)
    CLASSES.check_teacher(code, key, "show everyone a view")
    pushed = pushed_view(which, vocab, head, pair, waves, request)
    CLASSES.push(code, key, pushed, covered=bool(covered))
    title = markdown_text(figure_title(pushed.figure.plot))
    demo = f"the question of **{markdown_text(pushed.demo)}**" if pushed.demo else ""
    rows = [(f"{i + 1}. {label}", i) for i, label in enumerate(pushed.rows)] if pushed.view == HEAD else []
    if pushed.view == HEAD:
        ask = f"Ask which key a query reads{', or ' + demo if demo else ''}"
    else:
        ask = f"Ask {demo}" if demo else ""
    if covered:  # the class predicts first: what the devices hold, and how to show it
        then = f"{ask[:1].lower()}{ask[1:]}, then **Reveal** shows it with the answer" if ask else "**Reveal** shows it"
        return rows, (f"Every device of the class now holds **{title}**, hidden until you reveal it: {then} (Reveal "
                      "with no question asked shows it as it is).")
    return rows, (f"Every device of the class now shows **{title}**. "
                  + (f"{ask}, or push another view." if ask else "Push another view to ask about it."))


def figure_title(plot: str) -> str:
    """The title of a figure as gr.Plot sends it, in one line of text."""
    import json

    text = ((json.loads(plot).get("layout") or {}).get("title") or {}).get("text") or "the heatmap"
    return html.unescape(re.sub(r"<br\s*/?>", " ", text))


def ask_row(code, row, request: gr.Request = None) -> str:
    """Ask the class which key the query of heatmap row `row` of the pushed view will read most: the choices are
    its keys, the right one read off the pushed figure (visualize.reading: the column of the row's largest cell)."""
    key = browser_key(request)
    CLASSES.check_teacher(code, key, "ask the class")
    seen = CLASSES.seen(code, key)
    if seen.pushed is None:
        raise UserError("show everyone a view first: the question is about the heatmap the class sees")
    if seen.pushed.view != HEAD:
        raise UserError("the class sees no attention heatmap now: ask the demo's question, or show everyone the "
                        "Attention tab's head to ask which key a query reads")
    rows = seen.pushed.rows
    if isinstance(row, bool) or not isinstance(row, int) or not 0 <= row < len(rows):
        raise UserError(f"pick the query to ask about: a row of the heatmap, 1 to {len(rows)}")
    cells = heatmap_cells(seen.pushed.figure.plot)
    choices = key_choices(seen.pushed.columns)
    right = cells.argmax(row)
    if right >= len(choices):
        raise UserError(f"this query reads most a key past the first {CLASS['choices']}: ask about another one")
    question = CLASSES.ask(code, key, f"The query **{markdown_text(rows[row])}** (row {row + 1}): which key will it "
                           "read most?",
                           choices, right=right, row=row)
    return f"Question {question.number} asked: the answers come in below, the heatmap stays hidden until Reveal."


def ask_demo(code, request: gr.Request = None) -> str:
    """Ask the class the question of the demo the pushed view shows (tabs.demos.demo_on_screen), with its choices
    built from the pushed figure; the right one is read off that figure by the demo's own rule
    (tabs.ask_first.Question.class_choices: the rule tests/app/test_demo_questions.py checks)."""
    key = browser_key(request)
    CLASSES.check_teacher(code, key, "ask the class")
    pushed = CLASSES.seen(code, key).pushed
    if pushed is None:
        raise UserError("show everyone a view first: the question is about the heatmap the class sees")
    demo = next((d for d in DEMOS if d.label == pushed.demo and d.question is not None), None)
    if demo is None:
        raise UserError(f"the view the class sees is no demo's with a question: click {ASKABLE}, then Show everyone "
                        "this view")
    if demo.question.choices is None:
        raise UserError(f"the question of {demo.label} is asked out loud: it has no choices a device can show "
                        "(Ask first, above the tabs, asks it on the projector)")
    try:
        labels, right = demo.question.class_choices(heatmap_cells(pushed.figure.plot))
    except (ValueError, IndexError):  # a head or input the rule cannot read (a row it names is not there)
        raise UserError(f"the question of {demo.label} cannot be read off this heatmap: open the demo's own input "
                        "and push it again") from None
    labels = tuple(label[: CLASS["choice_chars"]] for label in labels)
    if len(labels) > CLASS["choices"] or right is None:
        raise UserError(f"the question of {demo.label} has no right answer among at most {CLASS['choices']} "
                        "choices on this heatmap: ask which key a query reads instead")
    question = CLASSES.ask(code, key, f"**{demo.label}.** {demo.question.ask}", labels, right=right)
    return f"Question {question.number} asked: the answers come in below, the heatmap stays hidden until Reveal."


def reveal(code, request: gr.Request = None) -> str:
    room = CLASSES.reveal(code, browser_key(request))
    if room.question is None:  # a view pushed hidden, revealed before any question
        return "Revealed on every device: the view you showed."
    return f"Revealed on every device: question {room.question.number}, {sum(room.counts())} answers."


def download(code, request: gr.Request = None) -> str:
    """The class's answers as a CSV file (one row per question and student), written when asked into the app's
    bounded folder of downloads (store.exports), served only to this browser."""
    text = CLASSES.csv(code, browser_key(request))
    path = EXPORTS.new(request) / f"class-{code}-answers.csv"
    path.write_text(text, encoding="utf-8")
    return str(path)


def end(code, request: gr.Request = None) -> str:
    CLASSES.end(code, browser_key(request))
    return "The class has ended: nothing of it is kept here (download its answers before ending it)."
