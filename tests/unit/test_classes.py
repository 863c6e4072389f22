"""store.classes: a class's codes, who may act as its teacher, its bounds, its end, and its CSV (issue 39).

Each test states the rule it guards; the clock is a counter the test moves, so the idle end and the minute of wrong
codes are checked without waiting."""
from __future__ import annotations

import csv
import io
import re

import pytest

from checks import UserError
from limits import CLASS
from store.classes import ALPHABET, ClassEnded, Classes, Pushed

TEACHER, OTHER_TEACHER = "a" * 32, "b" * 32
STUDENTS = [f"{i:032x}" for i in range(1, 5)]


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def classes(clock):
    return Classes(clock)


def pushed(rows=("n", "o"), columns=("a", "b", "c")) -> Pushed:
    return Pushed("?tab=attention&ckpt=reverse", object(), tuple(rows), tuple(columns))


def test_a_code_is_short_typeable_and_unlike_any_other(classes):
    """Codes are CLASS["code_chars"] characters of the alphabet without look-alikes (no 0/O, 1/I/L), and no two
    classes running share one."""
    assert not set("01OIL") & set(ALPHABET)
    codes = {classes.start(f"{i:032x}").code for i in range(CLASS["classes"])}
    assert len(codes) == CLASS["classes"]
    assert all(re.fullmatch(f"[{ALPHABET}]{{{CLASS['code_chars']}}}", c) for c in codes)


def test_a_teacher_starting_again_gets_its_running_class(classes):
    assert classes.start(TEACHER).code == classes.start(TEACHER).code


def test_classes_at_once_are_bounded(classes):
    for i in range(CLASS["classes"]):
        classes.start(f"{i:032x}")
    with pytest.raises(UserError, match=f"{CLASS['classes']} classes are running"):
        classes.start("f" * 32)


def test_a_student_joins_with_any_case_and_keeps_its_number(classes):
    code = classes.start(TEACHER).code
    assert classes.join(f" {code.lower()[:3]}-{code.lower()[3:]} ", STUDENTS[0], "10.0.0.1") == 1
    assert classes.join(code, STUDENTS[1], "10.0.0.1") == 2
    assert classes.join(code, STUDENTS[0], "10.0.0.1") == 1  # the same browser again: the same number


def test_only_the_teacher_pushes_asks_reveals_ends_and_downloads(classes):
    """A student (or any other browser) is refused each teacher's action in words; the class is unchanged."""
    code = classes.start(TEACHER).code
    classes.join(code, STUDENTS[0], None)
    classes.push(code, TEACHER, pushed())
    actions = [lambda k: classes.push(code, k, pushed()), lambda k: classes.ask(code, k, "?", ("a", "b")),
               lambda k: classes.reveal(code, k), lambda k: classes.end(code, k), lambda k: classes.csv(code, k)]
    for key in (STUDENTS[0], OTHER_TEACHER, ""):
        for act in actions:
            with pytest.raises(UserError, match="only the teacher of this class"):
                act(key)
    assert classes.seen(code, TEACHER).version == 1 and classes.running() == 1


def test_a_wrong_code_is_said_and_attempts_per_address_are_limited(classes, clock):
    code = classes.start(TEACHER).code
    guesses = [c for c in (a * 6 for a in "ABCDEFGHJKMNPQRSTUVWXYZ") if c != code]  # a guesser's distinct codes
    for wrong in guesses[:CLASS["wrong_codes_per_minute"]]:
        with pytest.raises(UserError, match=f"no class has the code {wrong}"):
            classes.join(wrong, STUDENTS[0], "10.0.0.9")
    with pytest.raises(UserError, match="wrong class codes came from your network"):
        classes.join(code, STUDENTS[1], "10.0.0.9")  # even the right code waits out the minute
    assert classes.join(code, STUDENTS[1], "10.0.0.8") == 1  # another address is not held up
    clock.now += 61
    assert classes.join(code, STUDENTS[2], "10.0.0.9") == 2


def test_a_class_ends_when_idle_and_its_devices_are_told_in_words(classes, clock):
    code = classes.start(TEACHER).code
    classes.join(code, STUDENTS[0], None)
    clock.now += CLASS["idle_seconds"] + 1
    with pytest.raises(ClassEnded, match=f"The class {code} has ended"):
        classes.seen(code, STUDENTS[0])
    assert classes.running() == 0


def test_a_restart_forgets_every_class(classes):
    code = classes.start(TEACHER).code
    classes.join(code, STUDENTS[0], None)
    classes.clear()
    with pytest.raises(ClassEnded, match="or the app restarted"):
        classes.seen(code, STUDENTS[0])


def test_students_per_class_and_answers_are_bounded(classes, monkeypatch):
    monkeypatch.setitem(CLASS, "students", 2)
    code = classes.start(TEACHER).code
    classes.join(code, STUDENTS[0], None)
    classes.join(code, STUDENTS[1], None)
    with pytest.raises(UserError, match="this class is full"):
        classes.join(code, STUDENTS[2], None)
    classes.push(code, TEACHER, pushed())
    with pytest.raises(UserError, match="2 to"):
        classes.ask(code, TEACHER, "?", ("only one",))
    with pytest.raises(UserError, match="characters"):
        classes.ask(code, TEACHER, "?", ("a", "b" * (CLASS["choice_chars"] + 1)))
    classes.ask(code, TEACHER, "Which?", ("a", "b", "c"), right=2)
    for bad in (3, -1, "a", True, None):
        with pytest.raises(UserError, match="one of the question's 3 choices"):
            classes.answer(code, STUDENTS[0], bad)
    classes.answer(code, STUDENTS[0], 0)
    classes.answer(code, STUDENTS[0], 2)  # a new answer replaces the last: one per student
    assert classes.seen(code, TEACHER).counts == (0, 0, 1)
    with pytest.raises(UserError, match="only a student of this class"):
        classes.answer(code, TEACHER, 1)
    classes.reveal(code, TEACHER)
    with pytest.raises(UserError, match="answers to this question are closed"):
        classes.answer(code, STUDENTS[1], 1)


def test_questions_per_class_are_bounded(classes, monkeypatch):
    monkeypatch.setitem(CLASS, "questions", 2)
    code = classes.start(TEACHER).code
    for _ in range(2):
        classes.ask(code, TEACHER, "?", ("a", "b"))
    with pytest.raises(UserError, match="2 questions"):
        classes.ask(code, TEACHER, "?", ("a", "b"))


def test_a_second_class_sees_nothing_of_the_first(classes):
    first, second = classes.start(TEACHER).code, classes.start(OTHER_TEACHER).code
    classes.join(first, STUDENTS[0], None)
    classes.join(second, STUDENTS[1], None)
    classes.push(first, TEACHER, pushed())
    classes.ask(first, TEACHER, "?", ("a", "b"))
    with pytest.raises(UserError, match="has not joined this class"):
        classes.seen(first, STUDENTS[1])
    with pytest.raises(UserError, match="only a student of this class"):
        classes.answer(first, STUDENTS[1], 0)
    seen = classes.seen(second, STUDENTS[1])
    assert seen.pushed is None and seen.question is None and seen.version == 0
    with pytest.raises(UserError, match="only the teacher"):
        classes.push(first, OTHER_TEACHER, pushed())


def test_the_csv_has_one_row_per_question_and_student(classes, clock):
    """Oracle: the answers given, written out by hand; a student who did not answer has an empty row; the student is
    a number only."""
    code = classes.start(TEACHER).code
    for key in STUDENTS[:3]:
        classes.join(code, key, None)
    classes.ask(code, TEACHER, "The query **i**: which key?", ("a (1)", "b (2)"), right=1)
    clock.now += 2.5
    classes.answer(code, STUDENTS[0], 1)
    classes.answer(code, STUDENTS[1], 0)
    classes.reveal(code, TEACHER)
    classes.ask(code, TEACHER, "Second", ("x", "y"))  # no right answer known
    classes.answer(code, STUDENTS[2], 0)
    rows = list(csv.reader(io.StringIO(classes.csv(code, TEACHER))))
    assert rows == [["question", "asked", "student", "answer", "right_answer", "right", "seconds"],
                    ["1", "The query i: which key?", "1", "b (2)", "b (2)", "yes", "2.5"],
                    ["1", "The query i: which key?", "2", "a (1)", "b (2)", "no", "2.5"],
                    ["1", "The query i: which key?", "3", "", "b (2)", "", ""],
                    ["2", "Second", "1", "", "", "", ""],
                    ["2", "Second", "2", "", "", "", ""],
                    ["2", "Second", "3", "x", "", "", "0.0"]]
    assert not any(key in classes.csv(code, TEACHER) for key in STUDENTS)


def test_nothing_is_kept_after_the_class_ends(classes):
    code = classes.start(TEACHER).code
    classes.join(code, STUDENTS[0], None)
    classes.end(code, TEACHER)
    assert classes.running() == 0
    with pytest.raises(ClassEnded):
        classes.csv(code, TEACHER)
    with pytest.raises(ClassEnded):
        classes.seen(code, STUDENTS[0])


def test_the_teacher_cannot_join_its_own_class_as_a_student(classes):
    code = classes.start(TEACHER).code
    with pytest.raises(UserError, match="this browser is the teacher"):
        classes.join(code, TEACHER, None)


def test_the_guesses_are_the_answers_per_row_asked_since_the_push(classes):
    """Classroom.guesses counts, per heatmap row asked about since the view was pushed, each key column's answers
    (the last question about a row counting, a changed answer counted once), computed here afresh from the answers
    recorded; a new push starts from none."""
    code = classes.start(TEACHER).code
    for key in STUDENTS:
        classes.join(code, key, None)
    classes.push(code, TEACHER, pushed(rows=("n", "o", "p"), columns=("a", "b", "c")))
    classes.ask(code, TEACHER, "row 1?", ("a (1)", "b (2)", "c (3)"), right=0, row=0)
    for key, choice in zip(STUDENTS, (0, 2, 2, 1)):
        classes.answer(code, key, choice)
    classes.answer(code, STUDENTS[3], 2)  # changed: counted once, as its last answer
    assert classes.seen(code, TEACHER).guesses == ((0, (1, 0, 3)),)
    classes.ask(code, TEACHER, "row 3?", ("a (1)", "b (2)", "c (3)"), right=2, row=2)
    classes.answer(code, STUDENTS[0], 1)
    classes.ask(code, TEACHER, "no row", ("yes", "no"))  # a question of choices only: no row of guesses
    classes.answer(code, STUDENTS[1], 0)
    room = classes._classes[code]
    fresh = {}
    for q in room.questions[room.since:]:
        if q.row is not None:
            fresh[q.row] = [sum(1 for choice, _ in room.answers[q.number].values() if choice == j)
                            for j in range(len(q.choices))]
    assert dict(classes.seen(code, STUDENTS[0]).guesses) == {r: tuple(c) for r, c in fresh.items()} \
        == {0: (1, 0, 3), 2: (0, 1, 0)}
    classes.push(code, TEACHER, pushed())
    assert classes.seen(code, TEACHER).guesses == ()


def test_a_class_reloading_an_ended_classs_link_is_told_so_and_joins_the_new_code(classes, clock):
    """After a restart (or the end of a class) a whole class behind one NAT reloads the join link of the old code:
    each student is told in words that a class that ended has no code, and the teacher's new code joins at once,
    since one wrong code repeated is no guess. Guessing stays bounded: distinct wrong codes are counted. Failed
    before: from the 21st student on, 'wrong class codes came from your network' and the new code refused."""
    old = classes.start(TEACHER).code
    classes.clear()  # what a restart does
    for student in range(40):
        with pytest.raises(UserError, match=f"no class has the code {old}.*ended.*restarted"):
            classes.join(old, f"student-{student}", "10.0.0.9")
    new = classes.start(TEACHER).code
    assert classes.join(new, STUDENTS[0], "10.0.0.9") == 1
    guesses = [c for c in (a * 6 for a in "ABCDEFGHJKMNPQRSTUVWXYZ") if c not in (old, new)]
    for guess in guesses[:CLASS["wrong_codes_per_minute"] - 1]:
        with pytest.raises(UserError, match="no class has the code"):
            classes.join(guess, STUDENTS[1], "10.0.0.9")
    with pytest.raises(UserError, match="wrong class codes came from your network"):
        classes.join(new, STUDENTS[1], "10.0.0.9")  # past the bound even the right code waits out the minute


def test_a_stamp_changes_exactly_when_a_device_has_something_new(classes):
    """A page polls only when its stamp changed (tabs/classroom/page.py), so the stamp must change at every push,
    question and reveal (every device redraws then), for the teacher also at each join and answer (the
    projector's count and split), and must not change for a student at another's join or answer (nothing of its
    page changes). A device of another class, or a class gone, gets no stamp: refused in words, as its poll is."""
    code = classes.start(TEACHER).code
    classes.join(code, STUDENTS[0], None)

    def stamps():
        return classes.stamp(code, TEACHER), classes.stamp(code, STUDENTS[0])
    seen = [stamps()]
    for step in (lambda: classes.push(code, TEACHER, pushed()), lambda: classes.ask(code, TEACHER, "?", ("a", "b")),
                 lambda: classes.join(code, STUDENTS[1], None), lambda: classes.answer(code, STUDENTS[1], 1),
                 lambda: classes.reveal(code, TEACHER), lambda: None):
        step()
        seen.append(stamps())
    teacher, student = zip(*seen)
    assert [a != b for a, b in zip(teacher, teacher[1:])] == [True, True, True, True, True, False]
    assert [a != b for a, b in zip(student, student[1:])] == [True, True, False, False, True, False]
    other = classes.start(OTHER_TEACHER).code
    classes.join(other, STUDENTS[2], None)
    with pytest.raises(UserError, match="has not joined this class"):
        classes.stamp(code, STUDENTS[2])
    classes.end(code, TEACHER)
    with pytest.raises(ClassEnded):
        classes.stamp(code, STUDENTS[0])


def test_each_push_has_its_own_number_that_a_device_holds_its_figure_by(classes):
    """A device is sent a pushed figure once (tabs.classroom.student.updates: not again when it holds the push's
    number), so a new push, even of an equal view, must get a new number; a question or a reveal keeps it."""
    code = classes.start(TEACHER).code
    classes.join(code, STUDENTS[0], None)
    numbers = []
    for step in (lambda: classes.push(code, TEACHER, pushed()), lambda: classes.ask(code, TEACHER, "?", ("a", "b")),
                 lambda: classes.reveal(code, TEACHER), lambda: classes.push(code, TEACHER, pushed())):
        step()
        numbers.append(classes.seen(code, STUDENTS[0]).push)
    assert numbers == [1, 1, 1, 2]


def test_a_view_pushed_hidden_is_uncovered_by_reveal_only(classes):
    """A push `covered` stays covered through a question and its answers, and Reveal uncovers it (with or without a
    question asked); a push not covered, and a Reveal with neither question nor cover, keep their old meaning."""
    code = classes.start(TEACHER).code
    classes.join(code, STUDENTS[0], None)
    classes.push(code, TEACHER, pushed(), covered=True)
    assert classes.seen(code, STUDENTS[0]).covered
    classes.ask(code, TEACHER, "?", ("a", "b"))
    classes.answer(code, STUDENTS[0], 0)
    assert classes.seen(code, STUDENTS[0]).covered
    classes.reveal(code, TEACHER)
    seen = classes.seen(code, STUDENTS[0])
    assert not seen.covered and seen.revealed
    classes.push(code, TEACHER, pushed(), covered=True)
    classes.reveal(code, TEACHER)
    seen = classes.seen(code, STUDENTS[0])
    assert not seen.covered and not seen.revealed and seen.question is None
    classes.push(code, TEACHER, pushed())
    assert not classes.seen(code, STUDENTS[0]).covered
    with pytest.raises(UserError, match="no question to reveal"):
        classes.reveal(code, TEACHER)
