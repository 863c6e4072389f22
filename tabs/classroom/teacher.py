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
from tabs.attention.link import link_query
from tabs.attention.page import draw_cached
from tabs.classroom.view import key_choices
from tabs.demos import DEMOS, demo_on_screen
from visualize.reading import heatmap_cells
from visualize.style import PHONE_WIDTH
from visualize.text import markdown_text

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


def push(code, vocab, record, made_by, given, kind, layer, head, cells, words, score, request: gr.Request = None):
    """Show every device of the class the Attention tab's one-head heatmap as the teacher sees it: drawn once
    here (the page's own cache of drawn figures, serialised once), from the record already computed (no model
    runs). Returns the choices of the question rows (the heatmap's queries) and what the teacher is told."""
    key = browser_key(request)
    CLASSES.check_teacher(code, key, "show everyone a view")
    if record is None or made_by is None:
        raise UserError("press Show attention first (or click a demo): the class is shown the heatmap on screen")
    # drawn for a phone: its cells and labels keep their least size on a student's phone, and grow to the wider box
    # of a projector or a laptop (drawn for a projector, a phone got 13 px wide cells: tests/browser/test_class_session)
    one = draw_cached(record, kind, layer, head, score, cells, words, made_by, PHONE_WIDTH, request)[0]
    try:
        query = link_query(vocab, made_by, given, record, kind, layer, head, cells, words, score, "")
    except UserError:  # a model trained in this browser has no link; its figure is shown all the same
        query = ""
    read = heatmap_cells(one.plot)
    demo = demo_on_screen(made_by, *(given or ("", "")), kind, cells, words)
    CLASSES.push(code, key, Pushed(query, one, tuple(read.rows), tuple(read.columns), demo.label if demo else ""))
    rows = [(f"{i + 1}. {label}", i) for i, label in enumerate(read.rows)]
    also = f", or the question of **{markdown_text(demo.label)}**" if demo else ""
    return rows, (f"Every device of the class now shows **{markdown_text(figure_title(one.plot))}**. Ask which key "
                  f"a query reads{also}, or push another view.")


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
    demo = next((d for d in DEMOS if d.label == pushed.demo), None)
    if demo is None:
        raise UserError("the view the class sees is no demo's with a question: click Reading backwards, The causal "
                        "mask, Previous-token head, Induction head, Who reads whom or Weights or what moves, then "
                        "Show everyone this view")
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
