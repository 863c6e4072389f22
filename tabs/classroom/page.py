"""The Class tab (issue 39): a teacher starts a class (a code, a link and a QR code for the
projector), shows everyone the Attention tab's view, asks which key a query will read, watches the class split
live, reveals, downloads the answers as CSV and ends the class; a student joins by the code or the link, sees what
the teacher shows, answers by tapping a cell or picking a choice, sees after the reveal whether it was right, and can
explore on its own in the other tabs and follow the teacher again in one click.

Every device asks the class record what changed once a second (gr.Timer, not queued: the answer is read from the
record, no model runs): a short text that changes when there is something new for it (student.stamp), and only
then the poll, which sends what the device has not seen (a figure once a push, not again at the reveal). The
class's code lives in the page (a hidden box), so a page whose class is gone, as after a restart of the app, is
told so in words.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import gradio as gr

from limits import CLASS, CLASS_POLL_SECONDS
from tabs.classroom import student, teacher
from tabs.classroom.pushable import HEAD, VIEWS, HeadView, PairView, SinusoidView, view_of
from tabs.classroom.scripts import ASKING_JS, PAGE_JS, REMEMBER_JS, SHOWN_JS, TAP_CSS, TAP_JS
from tabs.demos import available_demos
from tabs.classroom.student import STUDENT, TEACHER, Answered, Polled
from widgets.answers import Answer, Components, answered, named_outputs
from widgets.controls import Radio
from widgets.errors import handler

QUIET = dict(queue=False, show_progress="hidden")


def build_class_tab() -> Components:
    """The tab's components: joining or starting, then the teacher's controls or the student's, and the class view
    (what the teacher shows, the question, the split)."""
    with gr.Tab("Class", id="class", elem_id="class-tab") as panel:
        code, role = gr.Textbox(visible=False, elem_id="class-code"), gr.Textbox(visible=False)
        seen, seen_answered = gr.Number(-1, visible=False), gr.Number(-1, visible=False)
        seen_push = gr.Number(-1, visible=False)  # the push whose figure this page holds (student.poll)
        stamp = gr.Textbox(visible=False)  # what changes when the class has something new for this page
        following, base = gr.Checkbox(True, visible=False), gr.Textbox(visible=False)
        timer = gr.Timer(CLASS_POLL_SECONDS, active=False)
        with gr.Row(elem_id="class-entry") as entry:
            typed = gr.Textbox(label="Class code (on the projector)", max_length=CLASS["code_typed"],
                               elem_id="class-code-box", scale=2)
            join = gr.Button("Join", variant="primary", elem_id="class-join", scale=1, min_width=80)
            start = gr.Button("Start a class (teacher)", elem_id="class-start", scale=1, min_width=120)
        status = gr.Markdown(elem_id="class-status")
        with gr.Column(visible=False, elem_id="class-teacher") as teaching:
            with gr.Row():
                shown_code = gr.HTML(elem_id="class-shown-code")
                qr = gr.HTML(elem_id="class-qr", css_template=".class-qr svg, svg {width: 100%; max-width: 340px; "
                                                              "height: auto}")
            link = gr.Markdown(elem_id="class-link")
            # which view the push shows: set by each demo's click to its own (pushable.view_of), or by the teacher
            which = Radio([(label, name) for name, label in VIEWS.items()], value=HEAD, label="The view to show",
                          elem_id="class-which")
            with gr.Row():
                push = gr.Button("Show everyone this view", variant="primary", elem_id="class-push")
                # peer instruction: the class commits to a prediction before it sees the figure
                push_hidden = gr.Button("Show it hidden until Reveal", elem_id="class-push-hidden")
                # any value reaches the handler, which says what is wrong (a student's session has no choices at all)
                row = gr.Dropdown([], label="Ask about the query", elem_id="class-row", scale=2,
                                  allow_custom_value=True)
                ask = gr.Button("Ask: which key will it read?", elem_id="class-ask")
                ask_demo = gr.Button("Ask the demo's question", elem_id="class-ask-demo")
                reveal = gr.Button("Reveal", elem_id="class-reveal")
                csv = gr.Button("Download the answers (CSV)", elem_id="class-csv")
                end = gr.Button("End class", variant="stop", elem_id="class-end")
            said = gr.Markdown(elem_id="class-said")
            answers = gr.File(label="The class's answers", visible=False, elem_id="class-answers")
        with gr.Column(visible=False, elem_id="class-student") as learning:
            with gr.Row():
                explore = gr.Button("Explore on my own", size="sm", elem_id="class-explore")
                follow = gr.Button("Follow the teacher", size="sm", elem_id="class-follow")
        with gr.Column(visible=False, elem_id="class-view") as view_box:
            question = gr.Markdown(elem_id="class-question")
            grid = gr.HTML("", elem_id="class-grid", js_on_load=TAP_JS, css_template=TAP_CSS)
            choices = Radio([], label="Your prediction", visible=False, elem_id="class-choices")
            line = gr.Markdown(elem_id="class-line")
            with gr.Row():  # the model's heatmap and the class's guesses on its axes, side by side once revealed
                with gr.Column(visible=False) as shown:  # hidden while a question is open: the figure is kept
                    view = gr.Plot(label="What your teacher shows", elem_id="class-figure")
                guesses = gr.Plot(label="The class's guesses", elem_id="class-guesses")
            split = gr.Plot(label="How the class answered", elem_id="class-split")
    return Components(panel=panel, code=code, role=role, seen=seen, seen_answered=seen_answered, seen_push=seen_push,
                      stamp=stamp, following=following, base=base, timer=timer, entry=entry, typed=typed, join=join,
                      start=start, status=status, teaching=teaching, shown_code=shown_code, qr=qr, link=link,
                      which=which, push=push, push_hidden=push_hidden, row=row, ask=ask, ask_demo=ask_demo, reveal=reveal,
                      csv=csv, end=end,
                      said=said, answers=answers, learning=learning, explore=explore, follow=follow,
                      view_box=view_box, question=question, grid=grid, choices=choices, line=line, shown=shown,
                      view=view, split=split, guesses=guesses)


def _kept():
    return field(default_factory=gr.skip)


@dataclass(frozen=True)
class Started(Answer):
    """The teacher's panel after starting a class: its code, the role, the code shown, the link and its QR code,
    the panels shown and hidden, the poll started from nothing seen, the status line emptied (widgets.answers: each
    field sets the tab's component of its name)."""

    code: Any
    role: Any
    shown_code: Any
    link: Any
    qr: Any
    teaching: Any = field(default_factory=lambda: gr.Column(visible=True))
    entry: Any = field(default_factory=lambda: gr.Row(visible=False))
    view_box: Any = field(default_factory=lambda: gr.Column(visible=True))
    timer: Any = field(default_factory=lambda: gr.Timer(active=True))
    seen: Any = -1
    seen_answered: Any = -1
    status: Any = ""
    seen_push: Any = -1
    stamp: Any = ""


@dataclass(frozen=True)
class Joined(Answer):
    """A student's panel after joining (each left as it is unless given): the class's code, the role, the panels
    shown and hidden, the poll started from nothing seen and following the teacher, the line the student reads,
    the page's tab, and no figure of the class held."""

    code: Any = _kept()
    role: Any = _kept()
    entry: Any = _kept()
    learning: Any = _kept()
    view_box: Any = _kept()
    timer: Any = _kept()
    seen: Any = _kept()
    seen_answered: Any = _kept()
    following: Any = _kept()
    status: Any = _kept()
    tabs: Any = _kept()
    seen_push: Any = _kept()
    stamp: Any = _kept()


@dataclass(frozen=True)
class Shown(Answer):
    """After a push: the rows a question can ask about, and what the teacher reads."""

    row: Any
    said: Any


@dataclass(frozen=True)
class Ended(Answer):
    """After the class's end: the line that says so, no code or role, the entry shown again, the poll stopped."""

    status: Any
    code: Any = ""
    role: Any = ""
    teaching: Any = field(default_factory=lambda: gr.Column(visible=False))
    entry: Any = field(default_factory=lambda: gr.Row(visible=True))
    view_box: Any = field(default_factory=lambda: gr.Column(visible=False))
    timer: Any = field(default_factory=lambda: gr.Timer(active=False))


@dataclass(frozen=True)
class Following(Answer):
    """Whether a student follows the teacher, the state it saw (-1: redraw whole), the page's tab and the class's
    stamp ("": poll now), each left as it is unless given."""

    following: Any
    seen: Any = _kept()
    tabs: Any = _kept()
    stamp: Any = _kept()


def joined(code, said) -> Joined:
    return Joined(code, STUDENT, gr.Row(visible=False), gr.Column(visible=True), gr.Column(visible=True),
                  gr.Timer(active=True), -1, -1, True, said, gr.Tabs(selected="class"), -1, "")


def explore_alone() -> Following:
    """Exploring on its own: the Attention tab, the class's view no longer redrawn."""
    return Following(False, tabs=gr.Tabs(selected="attention"))


def follow_teacher() -> Following:
    """Following the teacher again: back to the class, its view redrawn whole."""
    return Following(True, -1, gr.Tabs(selected="class"), "")


def class_shown() -> Following:
    """The Class tab opened: its view followed and redrawn whole."""
    return Following(True, -1, stamp="")


def wire_class_tab(demo, tabs, c: Components, attention, positional: dict, demos: list, vocab) -> None:
    """Wire the tab (`tabs`: the page's tabs, which a joining student is taken to): `attention` and `positional`
    are those tabs' handles (their record, pair and sliders are what the teacher pushes), `demos` the demo buttons
    (each sets the view to show to its own), `vocab` what a link may name (store.view_link.Vocabulary: the pushed
    view's link)."""
    c = Components(**vars(c), tabs=tabs)  # the tab's components and the page's tabs, for the answers to set
    # each period a short text; the poll when it changed (a stamp set to "" by a join or a follow: poll now)
    c.timer.tick(handler(student.stamp), c.code, c.stamp, api_name="class_stamp", api_visibility="undocumented",
                 **QUIET)
    c.stamp.change(answered(c, handler(student.poll)), [c.code, c.role, c.seen, c.seen_answered, c.following,
                                                        c.seen_push],
                   named_outputs(c, Polled), api_name="class_poll", api_visibility="undocumented", **QUIET)

    def teacher_started(base, request: gr.Request = None) -> Started:
        code, shown, link, qr = teacher.start(base, request)
        return Started(code, TEACHER, shown, link, qr)

    c.start.click(answered(c, handler(teacher_started)), c.base, named_outputs(c, Started), js=PAGE_JS,
                  api_name="class_start", api_visibility="undocumented", **QUIET)
    student_in = named_outputs(c, Joined)

    def typed_join(typed, request: gr.Request = None) -> Joined:
        return joined(*student.join(typed, request))

    def link_join(request: gr.Request = None) -> Joined:
        typed = student.code_in_link(request)
        if typed is None:
            return Joined()
        try:
            return joined(*student.join(typed, request))
        except ValueError as e:  # the load is not queued: gradio would show a bare "Error"; said in the panel
            return Joined(status=str(e), tabs=gr.Tabs(selected="class"))

    c.join.click(answered(c, handler(typed_join)), c.typed, student_in, api_name="class_join",
                 api_visibility="undocumented", **QUIET).success(None, c.code, None, js=REMEMBER_JS)
    c.typed.submit(answered(c, handler(typed_join)), c.typed, student_in, api_visibility="private",
                   **QUIET).success(None, c.code, None, js=REMEMBER_JS)
    demo.load(answered(c, link_join), None, student_in, api_visibility="private", **QUIET)

    # every parameter named: gradio puts the request at its parameter's place, which a *view would shift
    def pushed(code, record, made_by, given, kind, layer, head, cells, words, score, which, record_b, given_b,
               answer, other, position, d_model, length, request: gr.Request = None, covered: bool = False) -> Shown:
        rows, said = teacher.push(code, vocab, which, HeadView(record, made_by, given, kind, layer, head, cells,
                                                               words, score),
                                  PairView(record_b, given_b, answer, other, position), SinusoidView(d_model, length),
                                  covered=covered, request=request)
        return Shown(gr.Dropdown(choices=rows, value=rows[0][1] if rows else None), said)

    def pushed_hidden(code, record, made_by, given, kind, layer, head, cells, words, score, which, record_b, given_b,
                      answer, other, position, d_model, length, request: gr.Request = None) -> Shown:
        return pushed(code, record, made_by, given, kind, layer, head, cells, words, score, which, record_b, given_b,
                      answer, other, position, d_model, length, request=request, covered=True)

    view_inputs = [getattr(attention, name) for name in ("record", "made_by", "given", "kind", "layer", "head",
                                                         "cells", "words", "score")] + [c.which] + \
        [attention.record_b, attention.given_b] + \
        [attention.patch.answer, attention.patch.other, attention.patch.position] + \
        [positional["d_model"], positional["length"]]
    c.push.click(answered(c, handler(pushed)), [c.code] + view_inputs, named_outputs(c, Shown), api_name="class_push",
                 api_visibility="undocumented", **QUIET).success(None, c.code, None, js=SHOWN_JS)
    c.push_hidden.click(answered(c, handler(pushed_hidden)), [c.code] + view_inputs, named_outputs(c, Shown),
                        api_name="class_push_hidden", api_visibility="undocumented", **QUIET).success(
                            None, js=ASKING_JS)  # the projector's own heatmap hidden too, until Reveal
    for button, shown in zip(demos, available_demos()):  # in the page: the view the demo leaves on screen
        button.click(None, None, c.which, js=f"() => {json.dumps(view_of(shown))}", api_visibility="private")
    c.ask.click(handler(teacher.ask_row), [c.code, c.row], c.said, api_name="class_ask",
                api_visibility="undocumented", **QUIET).success(None, js=ASKING_JS)
    c.ask_demo.click(handler(teacher.ask_demo), c.code, c.said, api_name="class_ask_demo",
                     api_visibility="undocumented", **QUIET).success(None, js=ASKING_JS)
    c.reveal.click(handler(teacher.reveal), c.code, c.said, js=SHOWN_JS, api_name="class_reveal",
                   api_visibility="undocumented", **QUIET)

    def downloaded(code, request: gr.Request = None):
        return gr.File(teacher.download(code, request), visible=True)

    c.csv.click(handler(downloaded), c.code, c.answers, api_name="class_csv", api_visibility="undocumented", **QUIET)

    def ended(code, request: gr.Request = None) -> Ended:
        return Ended(teacher.end(code, request))

    c.end.click(answered(c, handler(ended)), c.code, named_outputs(c, Ended), js=SHOWN_JS, api_name="class_end",
                api_visibility="undocumented", **QUIET)
    mine = named_outputs(c, Answered)
    c.choices.input(answered(c, handler(student.answer_label)), [c.code, c.choices], mine, api_name="class_answer",
                    api_visibility="undocumented", **QUIET)

    def tapped(code, event: gr.EventData, request: gr.Request = None) -> Answered:
        return student.answer_tap(code, getattr(event, "column", None), request)

    c.grid.click(answered(c, handler(tapped)), c.code, mine, api_visibility="private", **QUIET)
    # exploring on its own: the Attention tab, the class's view no longer redrawn; following: back, redrawn whole
    following = named_outputs(c, Following)
    for trigger, fn in ((c.explore.click, explore_alone), (c.follow.click, follow_teacher),
                        (c.panel.select, class_shown)):
        trigger(answered(c, fn), None, following, api_visibility="private", **QUIET)
