"""A class session through the app's own endpoints (gradio_client; each Client is a session of its own, so a browser
of its own): the teacher's actions refused in words to a student, the pushed figure equal to the teacher's heatmap
and to a fresh computation, computed once (no model run for a push, none for a poll), a second class seeing nothing
of the first, and a device told in words that its class ended when the app forgot it (a restart). Issue 39."""
from __future__ import annotations

import csv
import inspect
import json

import numpy as np
import pytest
from gradio_client.exceptions import AppError

from store.classes import CLASSES
from tests.app.test_app_api import decode, plot_json
from tests.app_server import api_client
from transformer.interpretability.probe import record_attention
from visualize.reading import heatmap_cells

VIEW = ("cross", 1, 2, "weights", False, "anti-diagonal")  # kind, layer, head, cells, words, overview colour
# /class_push's inputs after the code: the head's view, which view to show (the head), the patching section's answer,
# other token and position, the Positional tab's d_model and positions
PUSH = VIEW + ("att-one", "", "", -1, 128, 100)


SKIPPED = {"__type__": "update"}  # gr.skip(): the page keeps what it shows


def poll(client, code, role="student", seen=-1, answered=-1, following=True, held=-1):
    """/class_poll as a page sends it: what it has seen (-1: nothing) and the push whose figure it holds."""
    return client.predict(code, role, seen, answered, following, held, api_name="/class_poll")


def hidden(polled) -> bool:
    """Whether the poll sends no figure (its box's visibility, which an API client is not sent, is checked in
    tests/app/test_class_views.py)."""
    return "plot" not in json.dumps(polled[1])


def cells(value) -> list:
    figure = plot_json(value)
    return decode(next(t for t in figure["data"] if t.get("type") == "heatmap")["z"])


@pytest.fixture
def lesson(app_url):
    """(teacher, student, code): a class started, the teacher's view of `reverse` on "attention" pushed, one
    student joined."""
    teacher, student = api_client(app_url), api_client(app_url)
    code = teacher.predict("http://127.0.0.1:7860/", api_name="/class_start")[0]
    teacher.predict("reverse", "attention", "", api_name="/attention")
    teacher.predict(code, *PUSH, api_name="/class_push")
    student.predict(code, api_name="/class_join")
    yield teacher, student, code
    try:
        teacher.predict(code, api_name="/class_end")
    except AppError:
        pass


def test_a_student_cannot_push_ask_reveal_end_or_download(lesson):
    """Each teacher's action from a student's session is refused with a sentence naming the rule."""
    teacher, student, code = lesson
    calls = {"/class_push": (code, *PUSH), "/class_ask": (code, 0), "/class_reveal": (code,), "/class_end": (code,),
             "/class_csv": (code,)}
    for api, args in calls.items():
        with pytest.raises(AppError, match="only the teacher of this class can"):
            student.predict(*args, api_name=api)
    assert poll(teacher, code, "teacher")[0].startswith(f"Class **{code}**: 1 student")  # the class goes on


def test_every_device_gets_the_teachers_figure_computed_once(lesson, app_url, shipped, monkeypatch):
    """The student's figure has the teacher's heatmap's cells (/draw_attention of the same head), which equal a
    fresh forward pass of the checkpoint (the record's weights); pushing and polling run no model at all."""
    teacher, student, code = lesson
    from transformer.model import Transformer

    model, tokenizer, _ = shipped("reverse")
    fresh = record_attention(model, tokenizer, "attention").patterns["cross"].weights[1, 2]
    calls = []  # the class's handlers on the stack of each pass through a model (other threads of the app may run one)

    def counted(original):
        def run(self, *args, **kwargs):
            calls.append([f.filename for f in inspect.stack() if "classroom" in f.filename])
            return original(self, *args, **kwargs)
        return run
    for method in ("forward", "encode", "decode"):
        monkeypatch.setattr(Transformer, method, counted(getattr(Transformer, method)))
    received = poll(student, code)
    np.testing.assert_allclose(cells(received[1]), np.asarray(fresh), atol=1e-6)
    teacher.predict(code, *PUSH, api_name="/class_push")
    for _ in range(3):
        poll(student, code)
    assert not any(calls), f"a push or a poll ran the model: {calls}"
    kind, layer, head, cells_show, words, score = VIEW
    teachers = teacher.predict(kind, layer, head, score, cells_show, words, api_name="/draw_attention")[0]
    assert cells(received[1]) == cells(teachers)


def test_a_poll_that_saw_this_state_gets_nothing(lesson):
    teacher, student, code = lesson
    first = poll(student, code)
    again = poll(student, code, seen=first[7], answered=first[8])
    assert first[1] is not None and "plot" in first[1] and again[1] == SKIPPED and again[0] == SKIPPED


def test_a_question_answered_counts_on_the_projector_and_reveals_to_the_student(lesson):
    """Ask about the first query row: the right choice is that row's largest cell of the pushed figure; the
    projector counts the answer before the reveal (its right bar not marked), the student reads whether it was
    right after it."""
    teacher, student, code = lesson
    truth = cells(poll(student, code)[1])
    right = max(range(len(truth[0])), key=lambda j: truth[0][j])
    teacher.predict(code, 0, api_name="/class_ask")
    asked = poll(student, code)
    assert hidden(asked), "the model's answer is shown while the question is open"
    choices = [c[0] for c in asked[5]["choices"]]
    student.predict(code, choices[right], api_name="/class_answer")
    projector = poll(teacher, code, "teacher")
    bars = plot_json(projector[2])["data"][0]
    assert decode(bars["y"])[right] == 1 and "1 of 1 answered" in projector[3]
    assert len(set(bars["marker"]["color"])) == 1  # no bar marked right before the reveal
    teacher.predict(code, api_name="/class_reveal")
    revealed = poll(student, code)
    assert revealed[6].startswith("**Right!**") and cells(revealed[1]) == truth


def test_a_second_class_sees_nothing_of_the_first(lesson, app_url):
    teacher, student, code = lesson
    other_teacher, other_student = api_client(app_url), api_client(app_url)
    other = other_teacher.predict("", api_name="/class_start")[0]
    other_student.predict(other, api_name="/class_join")
    seen = poll(other_student, other)
    assert seen[1] is None and seen[3] == ""  # nothing pushed, nothing asked
    refused = poll(other_student, code)  # said on its page, its timer stopped, nothing of the first class sent
    assert "has not joined this class" in refused[0] and refused[9]["active"] is False
    assert "plot" not in json.dumps(refused[1:9]) and "Question" not in json.dumps(refused[1:9])
    with pytest.raises(AppError, match="has not joined this class"):
        other_student.predict(code, "a (1)", api_name="/class_answer")
    other_teacher.predict(other, api_name="/class_end")


def test_a_wrong_code_is_said_in_words(app_url):
    with pytest.raises(AppError, match="no class has the code"):
        api_client(app_url).predict("ZZZZZZ9", api_name="/class_join")


def test_a_restart_tells_the_students_page_that_the_class_ended(lesson):
    """A restarted app holds no class (the registry lives in the process): the page still sends its class's code,
    and its poll says in words that the class ended, and stops polling."""
    teacher, student, code = lesson
    CLASSES.clear()  # what a new process starts with
    said = poll(student, code)
    assert said[0].startswith(f"The class {code} has ended") and "restarted" in said[0]
    assert said[9]["active"] is False


def test_the_class_guesses_live_on_the_projector_and_beside_the_models_heatmap_on_reveal(lesson, app_url, shipped):
    """Three students answer "which key will query 1 read?": the projector's heatmap of guesses (live, the model's
    own hidden) has in each cell the count recounted here from store.classes' answers, on the rows and columns of
    the pushed heatmap; a student sees no guesses before the reveal. On Reveal every device gets the guesses and,
    beside them, the model's heatmap, whose cells equal a fresh forward pass of the checkpoint."""
    teacher, student, code = lesson
    others = [api_client(app_url), api_client(app_url)]
    for other in others:
        other.predict(code, api_name="/class_join")
    teacher.predict(code, 1, api_name="/class_ask")
    choices = [c[0] for c in poll(student, code)[5]["choices"]]
    for client, choice in zip([student] + others, (0, 2, 2)):
        client.predict(code, choices[choice], api_name="/class_answer")
    assert poll(student, code)[10] is None, "a student sees the class's guesses before the reveal"
    projector = poll(teacher, code, "teacher")
    assert hidden(projector), "the model's answer is shown while the question is open"
    room = CLASSES._classes[code]
    question = room.questions[-1]
    recounted = np.zeros((len(room.pushed.rows), len(room.pushed.columns)))
    recounted[:] = np.nan
    recounted[question.row] = 0
    for choice, _ in room.answers[question.number].values():
        recounted[question.row, choice] += 1
    guesses = plot_json(projector[10])
    main = next(t for t in guesses["data"] if t.get("type") == "heatmap")
    written = np.array([[float(v) if v != "" else np.nan for v in row] for row in main["text"]])
    np.testing.assert_array_equal(written, recounted)
    assert np.nansum(written) == 3 and written[1, 2] == 2
    teacher.predict(code, api_name="/class_reveal")
    model, tokenizer, _ = shipped("reverse")
    kind, layer, head = VIEW[:3]
    fresh = record_attention(model, tokenizer, "attention").patterns[kind].weights[layer, head]
    for device, role in ((student, "student"), (others[0], "student"), (teacher, "teacher")):
        seen = poll(device, code, role)
        np.testing.assert_allclose(cells(seen[1]), np.asarray(fresh), atol=1e-6)
        model_cells, guess_cells = heatmap_cells(plot_json(seen[1])), heatmap_cells(plot_json(seen[10]))
        assert (guess_cells.rows, guess_cells.columns) == (model_cells.rows, model_cells.columns)
        assert plot_json(seen[10])["data"][0]["text"] == main["text"]


def test_a_demos_question_is_marked_by_its_own_rule(lesson, app_url):
    """The pushed view is the demo "Reading backwards" (reverse, "attention", cross-attention): the teacher sends
    its worded question with choices built from the figure; the right one is what the demo's own rule
    (tabs.demos, checked by tests/app/test_demo_questions.py) reads off the figure the students received. A student
    who picks it is told it was right, one who picks another that it was not, on the split and in the CSV."""
    from tabs.demos import DEMOS

    teacher, student, code = lesson
    other = api_client(app_url)
    other.predict(code, api_name="/class_join")
    figure = heatmap_cells(plot_json(poll(student, code)[1]))
    demo = next(d for d in DEMOS if d.label == "Reading backwards")
    teacher.predict(code, api_name="/class_ask_demo")
    asked = poll(student, code)
    assert demo.question.ask in asked[3] and hidden(asked)  # the worded question; the heatmap hidden
    choices = [c[0] for c in asked[5]["choices"]]
    reading = demo.question.rule(figure)  # the letter's position that output letter reads most
    right = next(i for i, label in enumerate(choices) if label.startswith(f"letter {reading} "))
    student.predict(code, choices[right], api_name="/class_answer")
    other.predict(code, choices[(right + 1) % len(choices)], api_name="/class_answer")
    bars = decode(plot_json(poll(teacher, code, "teacher")[2])["data"][0]["y"])
    assert bars[right] == 1 and sum(bars) == 2
    teacher.predict(code, api_name="/class_reveal")
    assert poll(student, code)[6].startswith("**Right!**")
    assert poll(other, code)[6].startswith("**Not this time.**")
    got = teacher.predict(code, api_name="/class_csv")  # a gr.File update: its value is the downloaded file
    path = got.get("value") if isinstance(got, dict) else got
    with open(path, encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert sorted(row[5] for row in rows[1:]) == ["no", "yes"]


def test_a_view_that_is_no_demos_has_no_demo_question(lesson):
    teacher, student, code = lesson
    teacher.predict("reverse", "hello", "", api_name="/attention")
    teacher.predict(code, *PUSH, api_name="/class_push")
    with pytest.raises(AppError, match="no demo's with a question"):
        teacher.predict(code, api_name="/class_ask_demo")


def test_a_device_is_sent_a_pushed_figure_once_not_again_at_the_question_or_the_reveal(lesson):
    """A page tells its poll the push whose figure it holds: the question hides that figure (its box:
    tests/app/test_class_views.py) without sending anything, and the reveal shows it again without sending it (the sinusoids' matrix is ~100 kB a device:
    bench/RESULTS.md); a new push sends the new figure. Oracle: the poll's outputs, and the figure first received
    equal to the teacher's. Failed before: the reveal sent every device the figure again (the poll took no push)."""
    teacher, student, code = lesson
    first = poll(student, code)
    held, figure = first[11], first[1]
    assert "plot" in figure and isinstance(held, (int, float))
    teacher.predict(code, 0, api_name="/class_ask")
    asked = poll(student, code, seen=first[7], answered=first[8], held=held)
    assert hidden(asked) and asked[1] == SKIPPED
    choices = [c[0] for c in asked[5]["choices"]]
    student.predict(code, choices[0], api_name="/class_answer")
    teacher.predict(code, api_name="/class_reveal")
    revealed = poll(student, code, seen=asked[7], answered=asked[8], held=held)
    assert revealed[1] == SKIPPED and revealed[11] == SKIPPED
    assert revealed[6].startswith(("**Right!**", "**Not this time.**"))
    teacher.predict(code, *PUSH, api_name="/class_push")
    again = poll(student, code, seen=revealed[7], answered=revealed[8], held=held)
    assert "plot" in again[1] and again[11] == held + 1 and cells(again[1]) == cells(figure)


def test_a_page_asks_a_short_stamp_each_second_and_polls_only_when_it_changed(lesson):
    """/class_stamp (the page's timer) answers one short text, the same while nothing changes for the device and
    another after a push: the poll's dozen outputs run only then. Failed before: no stamp, each device polled the
    whole class view every second (10-14 ms of the server's CPU each: bench/RESULTS.md)."""
    teacher, student, code = lesson
    stamps = [student.predict(code, api_name="/class_stamp") for _ in range(3)]
    assert len(set(stamps)) == 1 and len(stamps[0]) < 40
    teacher.predict(code, *PUSH, api_name="/class_push")
    assert student.predict(code, api_name="/class_stamp") != stamps[0]
    CLASSES.clear()  # a restart: the stamp changes, so the page polls and is told in words
    ended = student.predict(code, api_name="/class_stamp")
    assert ended != stamps[0] and poll(student, code)[0].startswith(f"The class {code} has ended")


def test_a_view_pushed_hidden_reaches_no_device_until_the_teacher_reveals_it(lesson):
    """Peer instruction: with "Hidden until Reveal" the class predicts before it sees. The students' and the
    projector's polls carry no figure after such a push, the student is told in words that a figure is kept for
    Reveal, the question asked about it is still marked against the pushed figure, and Reveal shows the figure
    (cells equal to the teacher's). Reveal with no question asked shows a hidden view as it is. Before this, a push
    showed every device the heatmap, and so the answer, before the question."""
    teacher, student, code = lesson
    truth = cells(poll(student, code)[1])
    said = teacher.predict(code, *PUSH, api_name="/class_push_hidden")[1]
    assert "hidden until you reveal it" in said
    covered = poll(student, code)
    assert hidden(covered) and hidden(poll(teacher, code, "teacher")), "a figure pushed hidden was sent"
    assert "hidden until **Reveal**" in covered[6]
    teacher.predict(code, 0, api_name="/class_ask")
    assert hidden(poll(student, code))
    teacher.predict(code, api_name="/class_reveal")
    assert cells(poll(student, code)[1]) == truth
    teacher.predict(code, *PUSH, api_name="/class_push_hidden")
    assert hidden(poll(student, code))
    assert teacher.predict(code, api_name="/class_reveal") == "Revealed on every device: the view you showed."
    assert cells(poll(student, code)[1]) == truth
