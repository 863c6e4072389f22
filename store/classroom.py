"""One class's state (issue 39): the view pushed to its devices, the questions asked, its students and their
answers, what a device sees of it at a poll, and its answers as CSV. No gradio and no lock here: the registry of
classes (store.classes) holds each Classroom and changes it under its lock.

A student is an anonymous number in its class (1, 2, ... in the order they joined), its browser known by the hash
of its key (store.class_codes.browser_hash); the same browser joining again keeps its number."""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

from checks import UserError
from limits import CLASS

ENDED = ("The class {code} has ended: its teacher ended it, it was idle for {hours} hours, or the app restarted. "
         "Ask your teacher for the new code.")

NOT_JOINED = "this device has not joined this class: type its code to join"


class ClassEnded(UserError):
    """The class a device asks about is not running: ended, idle too long, or the app restarted."""


@dataclass(frozen=True)
class Pushed:
    """The view on every device: its link's query (store.view_link; "" for a model trained in the teacher's browser,
    which has no link), the figure as drawn once (opaque here: the page's), the labels of its rows and columns
    (what a question about it names), the label of the demo it shows whose question the class can be asked
    ("": none), and which view it is (the id of the figure on the teacher's page: the Attention tab's head
    "att-one", whose rows a question can ask about, or another: tabs/classroom/pushable.py)."""
    query: str
    figure: object
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    demo: str = ""
    view: str = "att-one"


@dataclass(frozen=True)
class Question:
    """A question put to the class: its words, its choices, the index of the right one (read off the pushed
    figure; None when no answer is known) and, for "which key will this query read?", the heatmap row it asks about
    (a tap on a cell of that row answers with the cell's column)."""
    number: int
    ask: str
    choices: tuple[str, ...]
    right: int | None = None
    row: int | None = None
    asked_at: float = 0.0


def check_question(ask, choices: tuple, right) -> None:
    """Refuse in words a question outside CLASS's bounds: its words, its choices' number and length, the right one."""
    if not isinstance(ask, str) or not ask.strip() or len(ask) > CLASS["question_chars"]:
        raise UserError(f"a question is 1 to {CLASS['question_chars']} characters of text")
    if not 2 <= len(choices) <= CLASS["choices"] or not all(
            isinstance(c, str) and 0 < len(c) <= CLASS["choice_chars"] for c in choices):
        raise UserError(f"a question has 2 to {CLASS['choices']} choices, each 1 to {CLASS['choice_chars']} "
                        "characters")
    if right is not None and not 0 <= right < len(choices):
        raise UserError("the right answer must be one of the choices")


@dataclass(frozen=True)
class Seen:
    """What one device of a class sees at a poll: the class's state, and for a student its number and answer."""
    code: str
    version: int
    answered: int
    pushed: Pushed | None
    question: Question | None
    revealed: bool
    counts: tuple[int, ...]
    students: int
    student: int | None = None  # this device's number (None: the teacher)
    answer: int | None = None  # this student's choice of the current question
    guesses: tuple[tuple[int, tuple[int, ...]], ...] = ()  # Classroom.guesses: (row, counts per key) on the view
    push: int = 0  # the number of the push shown (Classroom.pushes): a device that holds its figure is not sent it
    covered: bool = False  # the view was pushed hidden until Reveal (the class predicts first: Classroom.covered)


@dataclass
class Classroom:
    code: str
    teacher: str  # SHA-256 of the teacher's browser key
    started: float
    touched: float
    students: dict[str, int] = field(default_factory=dict)  # SHA-256 of a student's browser key -> its number
    pushed: Pushed | None = None
    question: Question | None = None
    revealed: bool = False
    version: int = 0  # changes at each push, question and reveal: a device redraws its class view then
    answered: int = 0  # changes at each join and answer: the projector redraws its count and split then
    questions: list[Question] = field(default_factory=list)  # every question asked, in order (the CSV's)
    answers: dict[int, dict[int, tuple[int, float]]] = field(default_factory=dict)  # question -> student ->
    #                                                                                  (choice, seconds after asked)
    since: int = 0  # how many questions were asked before the view now shown was pushed
    pushes: int = 0  # how many views were pushed: the number of the one shown
    covered: bool = False  # the pushed view stays hidden on every device until Reveal, so that a question asked
    #                        about it is predicted, not read off the figure

    def counts_of(self, question: Question) -> list[int]:
        """How many students chose each choice of `question`."""
        counts = [0] * len(question.choices)
        for choice, _ in self.answers.get(question.number, {}).values():
            counts[choice] += 1
        return counts

    def counts(self) -> list[int]:
        """How many students chose each choice of the current question."""
        return [] if self.question is None else self.counts_of(self.question)

    def guesses(self) -> tuple[tuple[int, tuple[int, ...]], ...]:
        """The class's guesses on the view now shown, as (row, counts per key column) for each heatmap row asked
        about since it was pushed ("which key will this query read?"), the last question about a row counting:
        how many students tapped or picked each key of it. Rows never asked are not in it."""
        rows: dict[int, tuple[int, ...]] = {}
        for question in self.questions[self.since:]:
            if question.row is not None:
                rows[question.row] = tuple(self.counts_of(question))
        return tuple(sorted(rows.items()))

    def stamp_for(self, who: str) -> str:
        """A short text that changes whenever the device whose browser hashes to `who` has something new to show:
        the class's version (a push, a question, a reveal), for the teacher its count of joins and answers too (the
        projector's split). A browser that is neither is refused, as by seen_by."""
        if who == self.teacher:
            return f"{self.code} {self.version} {self.answered}"
        if who not in self.students:
            raise UserError(NOT_JOINED)
        return f"{self.code} {self.version}"

    def seen_by(self, who: str) -> Seen:
        """What the device whose browser hashes to `who` sees: the teacher's or a student's (a browser that is
        neither is refused: a class shows nothing to a device that did not join it)."""
        student = self.students.get(who)
        if student is None and who != self.teacher:
            raise UserError(NOT_JOINED)
        answer = None
        if student is not None and self.question is not None:
            answer = self.answers[self.question.number].get(student, (None,))[0]
        return Seen(self.code, self.version, self.answered, self.pushed, self.question, self.revealed,
                    tuple(self.counts()), len(self.students), student, answer, self.guesses(), self.pushes,
                    self.covered)

    def answers_csv(self) -> str:
        """The class's answers, one row per question and student (a student is a number), as CSV text: the
        question, the student, the choice (empty: no answer), the right choice, whether it was right, and the
        seconds between the question and the answer."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["question", "asked", "student", "answer", "right_answer", "right", "seconds"])
        for q in self.questions:
            given = self.answers.get(q.number, {})
            right = q.choices[q.right] if q.right is not None else ""
            for student in sorted(self.students.values()):
                choice, seconds = given.get(student, (None, None))
                writer.writerow([q.number, q.ask.replace("**", ""), student,
                                 "" if choice is None else q.choices[choice], right,
                                 "" if choice is None or q.right is None else ("yes" if choice == q.right
                                                                               else "no"),
                                 "" if seconds is None else f"{seconds:.1f}"])
        return out.getvalue()
