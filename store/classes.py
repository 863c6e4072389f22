"""A class session (issue 39): a teacher's class, the students' devices that joined it, the view pushed to them, the
question asked and everyone's answers. No gradio here: tabs/classroom wires it to the page.

Kept in the app's main process (a module-level registry, never a gr.State, which is per session, and never inside a
`@spaces.GPU` call, which runs in a fork on ZeroGPU): every device of a class reads the same record, so what the
teacher pushes is computed once and handed to every student as it is.

Who is who:
- the teacher is the browser that started the class: its key (store.sessions.browser_key, from the cookie the page
  sets; an API client is its session) is the teacher's secret. The record keeps only its SHA-256, and the join code
  and link carry nothing of it, so a student can never act as the teacher: push, ask, reveal, end and the CSV are
  refused in words to any other browser;
- a student is an anonymous number in its class (1, 2, ... in the order they joined), its browser known by the same
  hash; the same browser joining again keeps its number.

A join code is CLASS["code_chars"] characters of an alphabet without look-alikes (no 0/O, 1/I/L), from `secrets`:
short enough to type on a phone. It cannot be found by trying: a wrong code is said in words and counted per address
(store.clients: a school behind one NAT is one address; loopback and an unknown address count per browser), and
past CLASS["wrong_codes_per_minute"] distinct wrong codes in a minute every other code (the right one too) from that
address waits out the minute. The same wrong code again counts once: a class behind one NAT reloading the link of a
class that ended (or ran before a restart) is told so, each student, and can join the new code at once.

Bounded (limits.CLASS): classes at once, students per class, questions per class, choices per question and their
length; one answer per student and question (a new one replaces it until the reveal). A class ends when its teacher
ends it or after CLASS["idle_seconds"] without a teacher's action or a student's answer; nothing of it is kept
after it ends (the CSV the teacher downloaded is the teacher's).
"""
from __future__ import annotations

import csv
import hashlib
import io
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from checks import UserError
from limits import CLASS

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # 31 characters a phone's keyboard and a projector cannot confuse
ENDED = ("The class {code} has ended: its teacher ended it, it was idle for {hours} hours, or the app restarted. "
         "Ask your teacher for the new code.")


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def normal_code(code) -> str:
    """A typed code as the registry keeps it: capitals, spaces and dashes left out (a phone capitalises nothing)."""
    if not isinstance(code, str):
        raise UserError("the class code must be text")
    return "".join(c for c in code[: 2 * CLASS["code_typed"]].upper() if c not in " -\t")


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


class Classes:
    """Every class running in this process (the one registry: CLASSES)."""

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._lock = threading.Lock()
        self._classes: dict[str, Classroom] = {}
        self._wrong: OrderedDict[str, OrderedDict] = OrderedDict()  # address -> {its distinct wrong codes of the
        #                                                               last minute: when last tried}, oldest first

    # --- the teacher -------------------------------------------------------------------------------------------
    def start(self, key: str) -> Classroom:
        """The class of the browser `key`: the one it runs already, else a new one with a fresh code."""
        if not key:
            raise UserError("this page has no browser key yet: reload the page, then start the class")
        with self._lock:
            self._sweep()
            teacher = _hash(key)
            for room in self._classes.values():
                if room.teacher == teacher:
                    room.touched = self._clock()
                    return room
            if len(self._classes) >= CLASS["classes"]:
                raise UserError(f"{CLASS['classes']} classes are running on this app already, the most it holds: "
                                "try again when one has ended")
            code = self._new_code()
            now = self._clock()
            room = self._classes[code] = Classroom(code, teacher, now, now)
            return room

    def check_teacher(self, code, key: str, what: str) -> None:
        """Refuse in words (naming `what`) unless the browser `key` is the teacher of the class `code`."""
        with self._lock:
            self._teachers(code, key, what)

    def push(self, code, key: str, pushed: Pushed) -> Classroom:
        """Show every device of the class `pushed`: a new view closes the question asked about the last one."""
        with self._lock:
            room = self._teachers(code, key, "show everyone a view")
            room.pushed, room.question, room.revealed = pushed, None, False
            room.since = len(room.questions)
            room.version += 1
            return room

    def ask(self, code, key: str, ask: str, choices, right: int | None = None, row: int | None = None) -> Question:
        """Put a question to the class: every device shows it with its choices, the answers start from none."""
        choices = tuple(choices)
        if not isinstance(ask, str) or not ask.strip() or len(ask) > CLASS["question_chars"]:
            raise UserError(f"a question is 1 to {CLASS['question_chars']} characters of text")
        if not 2 <= len(choices) <= CLASS["choices"] or not all(
                isinstance(c, str) and 0 < len(c) <= CLASS["choice_chars"] for c in choices):
            raise UserError(f"a question has 2 to {CLASS['choices']} choices, each 1 to {CLASS['choice_chars']} "
                            "characters")
        if right is not None and not 0 <= right < len(choices):
            raise UserError("the right answer must be one of the choices")
        with self._lock:
            room = self._teachers(code, key, "ask the class")
            if len(room.questions) >= CLASS["questions"]:
                raise UserError(f"this class has asked {CLASS['questions']} questions, the most a class keeps: "
                                "download the CSV, end the class and start a new one")
            question = Question(len(room.questions) + 1, ask, choices, right, row, self._clock())
            room.questions.append(question)
            room.answers[question.number] = {}
            room.question, room.revealed = question, False
            room.version += 1
            return question

    def reveal(self, code, key: str) -> Classroom:
        with self._lock:
            room = self._teachers(code, key, "reveal the answer")
            if room.question is None:
                raise UserError("there is no question to reveal: ask one first")
            room.revealed = True
            room.version += 1
            return room

    def end(self, code, key: str) -> None:
        """End the class: nothing of it is kept (the CSV downloaded before is the teacher's)."""
        with self._lock:
            room = self._teachers(code, key, "end the class")
            del self._classes[room.code]

    def csv(self, code, key: str) -> str:
        """The class's answers, one row per question and student (a student is a number), as CSV text: the
        question, the student, the choice (empty: no answer), the right choice, whether it was right, and the
        seconds between the question and the answer."""
        with self._lock:
            room = self._teachers(code, key, "download the class's answers")
            out = io.StringIO()
            writer = csv.writer(out, lineterminator="\n")
            writer.writerow(["question", "asked", "student", "answer", "right_answer", "right", "seconds"])
            for q in room.questions:
                given = room.answers.get(q.number, {})
                right = q.choices[q.right] if q.right is not None else ""
                for student in sorted(room.students.values()):
                    choice, seconds = given.get(student, (None, None))
                    writer.writerow([q.number, q.ask.replace("**", ""), student,
                                     "" if choice is None else q.choices[choice], right,
                                     "" if choice is None or q.right is None else ("yes" if choice == q.right
                                                                                   else "no"),
                                     "" if seconds is None else f"{seconds:.1f}"])
            return out.getvalue()

    # --- a student ---------------------------------------------------------------------------------------------
    def join(self, code, key: str, address: str | None) -> int:
        """The number of the browser `key` in the class of `code`, joining it when new. A wrong code is said in
        words and counted against `address` (None: loopback or unknown, then against the browser)."""
        if not key:
            raise UserError("this page has no browser key yet: reload the page, then join")
        typed = normal_code(code)
        who = address or f"browser:{_hash(key)}"
        with self._lock:
            self._sweep()
            now = self._clock()
            wrong = self._wrong.get(who)
            while wrong and now - next(iter(wrong.values())) > 60:
                wrong.popitem(last=False)
            room = self._classes.get(typed)
            if wrong is not None and typed not in wrong and len(wrong) >= CLASS["wrong_codes_per_minute"]:
                wait = max(1, int(60 - (now - next(iter(wrong.values())))) + 1)
                raise UserError(f"{len(wrong)} wrong class codes came from your network in the last minute: wait "
                                f"{wait} s, then type the code on the projector again")
            if room is None:
                self._count_wrong(who, typed, now)
                shown = typed[:CLASS["code_chars"] + 2] or "(nothing)"
                raise UserError(f"no class has the code {shown}: check it on the projector ({CLASS['code_chars']} "
                                "letters and digits; no 0, 1, O, I or L). A class that ended, or ran before the "
                                "app restarted, has no code any more: ask your teacher for the new one")
            student = _hash(key)
            if student == room.teacher:
                raise UserError("this browser is the teacher of this class: join from another device or browser")
            if student not in room.students:
                if len(room.students) >= CLASS["students"]:
                    raise UserError(f"this class is full ({CLASS['students']} students)")
                room.students[student] = len(room.students) + 1
                room.answered += 1
            return room.students[student]

    def answer(self, code, key: str, choice) -> int:
        """Record the student's answer (an index of the current question's choices); returns the choice. A new
        answer replaces the last until the reveal."""
        with self._lock:
            room = self._room(code)
            student = room.students.get(_hash(key))
            if student is None:
                raise UserError("only a student of this class can answer: join it first")
            question = room.question
            if question is None:
                raise UserError("there is no question to answer yet: wait for your teacher's")
            if room.revealed:
                raise UserError("the answer has been revealed: answers to this question are closed")
            if isinstance(choice, bool) or not isinstance(choice, int) or not 0 <= choice < len(question.choices):
                raise UserError(f"an answer is one of the question's {len(question.choices)} choices")
            room.answers[question.number][student] = (choice, self._clock() - question.asked_at)
            room.answered += 1
            room.touched = self._clock()
            return choice

    # --- every device ------------------------------------------------------------------------------------------
    def seen(self, code, key: str) -> Seen:
        """What the device of browser `key` sees of the class `code`: the teacher's or a student's (a browser that
        is neither is refused: a class shows nothing to a device that did not join it)."""
        with self._lock:
            room = self._room(code)
            who = _hash(key)
            student = room.students.get(who)
            if student is None and who != room.teacher:
                raise UserError("this device has not joined this class: type its code to join")
            answer = None
            if student is not None and room.question is not None:
                answer = room.answers[room.question.number].get(student, (None,))[0]
            return Seen(room.code, room.version, room.answered, room.pushed, room.question, room.revealed,
                        tuple(room.counts()), len(room.students), student, answer, room.guesses())

    def running(self) -> int:
        with self._lock:
            self._sweep()
            return len(self._classes)

    def clear(self) -> None:
        """Forget every class (what a restart of the app does)."""
        with self._lock:
            self._classes.clear()
            self._wrong.clear()

    # --- inside ------------------------------------------------------------------------------------------------
    def _new_code(self) -> str:
        while True:
            code = "".join(secrets.choice(ALPHABET) for _ in range(CLASS["code_chars"]))
            if code not in self._classes:
                return code

    def _room(self, code) -> Classroom:
        typed = normal_code(code)
        self._sweep()
        room = self._classes.get(typed)
        if room is None:
            raise ClassEnded(ENDED.format(code=typed[:CLASS["code_chars"] + 2] or "(none)",
                                          hours=CLASS["idle_seconds"] // 3600))
        return room

    def _teachers(self, code, key: str, what: str) -> Classroom:
        room = self._room(code)
        if not key or _hash(key) != room.teacher:
            raise UserError(f"only the teacher of this class can {what}: this device joined it as a student")
        room.touched = self._clock()
        return room

    def _count_wrong(self, who: str, code: str, now: float) -> None:
        """A wrong `code` from `who`: the same code again counts once (a class reloading the link of a class that
        ended is no guess), its time renewed."""
        codes = self._wrong.setdefault(who, OrderedDict())
        codes.pop(code, None)
        codes[code] = now
        self._wrong.move_to_end(who)
        while len(self._wrong) > CLASS["addresses_remembered"]:
            self._wrong.popitem(last=False)

    def _sweep(self) -> None:
        now = self._clock()
        for code in [c for c, room in self._classes.items() if now - room.touched > CLASS["idle_seconds"]]:
            del self._classes[code]


class ClassEnded(UserError):
    """The class a device asks about is not running: ended, idle too long, or the app restarted."""


CLASSES = Classes()
