"""Every demo's view can be shown to a class (issue 39, what was left, item 1): the Attention tab's head, the
patching demos' heads grid and the Sinusoid waves' matrix are pushed as the teacher's page drew them (each
student's cells equal the teacher's figure's), drawn once for the class with no model run, and a demo's question
with choices can be sent after its view; the Train tab's run is refused in words. Through the app's endpoints
(gradio_client: each Client a session, so a browser, of its own)."""
from __future__ import annotations

import numpy as np
import pytest
from gradio_client.exceptions import AppError

from tabs.classroom.pushable import HEAD, PAIR, TRAINING, view_of
from tabs.demos import DEMOS, runs
from tabs.positional import PE_MATRIX
from tests.app.test_app_api import plot_json
from tests.app.test_class_session_in_app import cells, poll
from tests.app_server import api_client
from visualize.reading import heatmap_cells

PUSHED = [d for d in DEMOS if runs(d) and view_of(d) != TRAINING]


def push(teacher, code, demo, which):
    """/class_push as the teacher's page sends it after `demo` (head 0.0 of its kind open)."""
    return teacher.predict(code, demo.kind or "cross", 0, 0, demo.show, demo.words, demo.score or "entropy", which,
                           *demo.answers, -1, 128, 100, api_name="/class_push")


def teachers_figure(teacher, demo, which):
    """The figure of the view on the teacher's page, computed by the endpoints the page calls (queued)."""
    if which == PE_MATRIX:
        return teacher.predict(128, 100, "0, 1", "reverse", api_name="/positional")[0]
    teacher.predict(demo.ckpt, demo.text, demo.target, api_name="/attention")
    if which == PAIR:
        teacher.predict(demo.text_b, api_name="/compare_inputs")
        return teacher.predict(demo.kind, 0, 0, *demo.answers, -1, api_name="/patching")[2]
    return teacher.predict(demo.kind, 0, 0, demo.score, demo.show, demo.words, api_name="/draw_attention")[0]


@pytest.fixture
def passes(monkeypatch):
    """Every pass through a Transformer (forward, encode, decode) from now on, as a list."""
    from transformer.model import Transformer

    calls = []

    def counted(original):
        def run(self, *args, **kwargs):
            calls.append(original.__name__)
            return original(self, *args, **kwargs)
        return run
    for method in ("forward", "encode", "decode"):
        monkeypatch.setattr(Transformer, method, counted(getattr(Transformer, method)))
    return calls


@pytest.mark.parametrize("label", [d.label for d in PUSHED])
def test_every_demos_view_reaches_every_student_as_the_teacher_sees_it_with_no_model_run(label, app_url, passes):
    """Oracle: the figure the teacher's own page got from the queued endpoint of that view. Three students' polls
    carry its cells, the very same serialised figure for each (drawn once), and the push and the polls pass through
    no model. A demo whose question has choices can then be asked; the right one is the demo's own rule's
    reading of the figure shown (its head here is 0.0, not always the demo's).
    Failed before: the Sinusoid waves and patching views pushed the Attention tab's head (or nothing)."""
    demo = next(d for d in DEMOS if d.label == label)
    which = view_of(demo)
    teacher, students = api_client(app_url), [api_client(app_url) for _ in range(3)]
    code = teacher.predict("", api_name="/class_start")[0]
    for student in students:
        student.predict(code, api_name="/class_join")
    truth = cells(teachers_figure(teacher, demo, which))
    passes.clear()
    push(teacher, code, demo, which)
    received = [poll(student, code)[1] for student in students]
    assert passes == [], f"the push of {label} ran a model: {passes}"
    for figure in received:  # masked cells are NaN on both sides
        np.testing.assert_array_equal(np.asarray(cells(figure), dtype=float), np.asarray(truth, dtype=float))
    assert received[0] == received[1] == received[2]
    question = demo.question
    if question is not None and question.choices is not None:
        teacher.predict(code, api_name="/class_ask_demo")
        asked = poll(students[0], code)
        labels = [c[0] for c in asked[5]["choices"]]
        shown = heatmap_cells(plot_json(received[0]))  # the demo's own rule, read off the figure shown
        right = next(option.label for option in question.choices(shown) if option.fits(question.rule(shown)))
        students[0].predict(code, right, api_name="/class_answer")
        teacher.predict(code, api_name="/class_reveal")
        assert right in labels and poll(students[0], code)[6].startswith("**Right!**")
    assert passes == []
    teacher.predict(code, api_name="/class_end")


def test_the_train_tabs_run_is_not_pushed_and_says_why(app_url):
    teacher = api_client(app_url)
    code = teacher.predict("", api_name="/class_start")[0]
    demo = next(d for d in DEMOS if d.tab == "train")
    with pytest.raises(AppError, match="cannot be shown on every device: the Train tab's run streams"):
        push(teacher, code, demo, TRAINING)
    teacher.predict(code, api_name="/class_end")


def test_a_question_about_a_query_row_is_refused_in_words_on_a_view_that_is_no_head(app_url):
    teacher = api_client(app_url)
    code = teacher.predict("", api_name="/class_start")[0]
    push(teacher, code, next(d for d in DEMOS if d.tab == "positional"), PE_MATRIX)
    with pytest.raises(AppError, match="the class sees no attention heatmap now"):
        teacher.predict(code, 0, api_name="/class_ask")
    teacher.predict(code, api_name="/class_end")


def test_a_view_pushed_is_the_head_when_the_demo_is_an_attention_demo():
    assert {view_of(d) for d in DEMOS if d.kind and not d.text_b} == {HEAD}
    assert {view_of(d) for d in DEMOS if d.text_b} == {PAIR}


def test_a_revealed_figure_is_built_once_however_many_devices_ask_at_once(monkeypatch):
    """The whole class polls within a second of the reveal: 40 polls at once for the revealed split get one build
    of it (the same serialised figure), not one each. Oracle: the split's drawing function, counted. Failed
    before: built by each poll that came while the first was building (40 students: 1.3 s p95 reveal -> device
    at load 5, bench/class_session.py)."""
    import threading

    from store.classes import Question, Seen
    from tabs.classroom import view

    built, ready = [], threading.Barrier(40)
    drawn = view.class_split

    def counted(*args):
        built.append(1)
        return drawn(*args)
    monkeypatch.setattr(view, "class_split", counted)
    question = Question(1, "Which key?", ("a (1)", "b (2)"), right=1)
    seen = Seen("ONCE39", 7, 3, None, question, True, (1, 2), 3)
    got = []

    def poll_now():
        ready.wait()
        got.append(view.split_figure(seen, True))
    threads = [threading.Thread(target=poll_now) for _ in range(40)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert len(built) == 1 and len(got) == 40 and all(g is got[0] for g in got)


def test_a_pairs_grid_not_drawn_on_the_teachers_page_is_refused_in_words_and_computed_nowhere(app_url, passes):
    """The teacher compared two inputs but never opened the patching section: pushing its heads grid would need
    the pair's patched runs, which a push (outside the queue) never computes: said in words, no model pass."""
    demo = next(d for d in DEMOS if d.text_b and runs(d))
    teacher = api_client(app_url)
    code = teacher.predict("", api_name="/class_start")[0]
    teacher.predict(demo.ckpt, demo.text, demo.target, api_name="/attention")
    teacher.predict(demo.text_b + " ", api_name="/compare_inputs")  # a pair no test has patched in this process
    passes.clear()
    with pytest.raises(AppError, match="the heads grid of this pair is not computed here"):
        push(teacher, code, demo, PAIR)
    assert passes == []
    teacher.predict(code, api_name="/class_end")


def test_the_pushed_view_is_hidden_while_a_question_is_open_and_sent_to_a_device_that_lacks_it_only():
    """What a changed poll sets for the pushed view (tabs.classroom.student.updates): its box shown unless a
    question is open (the model's own answer), the figure sent only to a device that does not hold this push's
    (`held`) and only when it is to be seen, and the push's number with it; nothing pushed: no figure, box hidden.
    Oracle: the cases written out. Failed before: the figure was sent again at every reveal, and set to nothing
    while a question was open."""
    import gradio as gr

    from store.classes import Pushed, Question, Seen
    from tabs.classroom.student import updates

    figure, skip = object(), gr.skip()
    pushed = Pushed("", figure, ("n", "o"), ("a", "b"))
    question = Question(1, "Which key?", ("a (1)", "b (2)"), right=1, row=0)

    def polled(pushed, question, revealed, held):
        seen = Seen("HIDE39", 3, 1, pushed, question, revealed, (0, 1), 1, 1, None, (), 2 if pushed else 0)
        got = updates(seen, False, True, held)
        return got.view, got.shown.visible, got.seen_push
    assert polled(pushed, None, False, -1) == (figure, True, 2)
    assert polled(pushed, None, False, 1) == (figure, True, 2)  # an older push's figure held: this one is sent
    assert polled(pushed, None, False, 2) == (skip, True, skip)
    assert polled(pushed, question, False, -1) == (skip, False, skip)  # not sent while hidden
    assert polled(pushed, question, False, 2) == (skip, False, skip)
    assert polled(pushed, question, True, 2) == (skip, True, skip)  # the reveal: shown again, not sent again
    assert polled(pushed, question, True, -1) == (figure, True, 2)
    assert polled(None, None, False, 2) == (None, False, -1)
