"""The class sessions running in this process (issue 39): a teacher's class, the students' devices that joined it,
the view pushed to them, the question asked and everyone's answers. No gradio here: tabs/classroom wires it to the
page. One class's state is store.classroom's; its join code and the wrong codes tried are store.class_codes'.

Kept in the app's main process (a module-level registry, never a gr.State, which is per session, and never inside a
`@spaces.GPU` call, which runs in a fork on ZeroGPU): every device of a class reads the same record, so what the
teacher pushes is computed once and handed to every student as it is.

Who is who: the teacher is the browser that started the class: its key (store.sessions.browser_key, from the cookie
the page sets; an API client is its session) is the teacher's secret. The record keeps only its SHA-256, and the join
code and link carry nothing of it, so a student can never act as the teacher: push, ask, reveal, end and the CSV are
refused in words to any other browser.

Bounded (limits.CLASS): classes at once, students per class, questions per class, choices per question and their
length; one answer per student and question (a new one replaces it until the reveal). A class ends when its teacher
ends it or after CLASS["idle_seconds"] without a teacher's action or a student's answer; nothing of it is kept
after it ends (the CSV the teacher downloaded is the teacher's).
"""
from __future__ import annotations

import threading
import time

from checks import UserError
from limits import CLASS
from store.class_codes import ALPHABET, WrongCodes, browser_hash, new_code, normal_code, shown_code
from store.classroom import ENDED, ClassEnded, Classroom, Pushed, Question, Seen, check_question

__all__ = ["ALPHABET", "CLASSES", "ClassEnded", "Classes", "Classroom", "Pushed", "Question", "Seen",
           "normal_code"]  # the names the tabs and tests import from here


class Classes:
    """Every class running in this process (the one registry: CLASSES)."""

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._lock = threading.Lock()
        self._classes: dict[str, Classroom] = {}
        self._wrong = WrongCodes()

    # --- the teacher -------------------------------------------------------------------------------------------
    def start(self, key: str) -> Classroom:
        """The class of the browser `key`: the one it runs already, else a new one with a fresh code."""
        if not key:
            raise UserError("this page has no browser key yet: reload the page, then start the class")
        with self._lock:
            self._sweep()
            teacher = browser_hash(key)
            for room in self._classes.values():
                if room.teacher == teacher:
                    room.touched = self._clock()
                    return room
            if len(self._classes) >= CLASS["classes"]:
                raise UserError(f"{CLASS['classes']} classes are running on this app already, the most it holds: "
                                "try again when one has ended")
            code = new_code(self._classes)
            now = self._clock()
            room = self._classes[code] = Classroom(code, teacher, now, now)
            return room

    def check_teacher(self, code, key: str, what: str) -> None:
        """Refuse in words (naming `what`) unless the browser `key` is the teacher of the class `code`."""
        with self._lock:
            self._teachers(code, key, what)

    def push(self, code, key: str, pushed: Pushed, covered: bool = False) -> Classroom:
        """Show every device of the class `pushed` (`covered`: hidden until Reveal, so that the class predicts
        before it sees): a new view closes the question asked about the last one."""
        with self._lock:
            room = self._teachers(code, key, "show everyone a view")
            room.pushed, room.question, room.revealed, room.covered = pushed, None, False, bool(covered)
            room.since = len(room.questions)
            room.version, room.pushes = room.version + 1, room.pushes + 1
            return room

    def ask(self, code, key: str, ask: str, choices, right: int | None = None, row: int | None = None) -> Question:
        """Put a question to the class: every device shows it with its choices, the answers start from none."""
        choices = tuple(choices)
        check_question(ask, choices, right)
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
        """Reveal the open question's answer, and the view pushed hidden (covered), on every device."""
        with self._lock:
            room = self._teachers(code, key, "reveal the answer")
            if room.question is None and not room.covered:
                raise UserError("there is no question to reveal: ask one first")
            room.revealed = room.question is not None
            room.covered = False
            room.version += 1
            return room

    def end(self, code, key: str) -> None:
        """End the class: nothing of it is kept (the CSV downloaded before is the teacher's)."""
        with self._lock:
            room = self._teachers(code, key, "end the class")
            del self._classes[room.code]

    def csv(self, code, key: str) -> str:
        """The class's answers as CSV text (store.classroom.Classroom.answers_csv), for its teacher only."""
        with self._lock:
            return self._teachers(code, key, "download the class's answers").answers_csv()

    # --- a student ---------------------------------------------------------------------------------------------
    def join(self, code, key: str, address: str | None) -> int:
        """The number of the browser `key` in the class of `code`, joining it when new. A wrong code is said in
        words and counted against `address` (None: loopback or unknown, then against the browser)."""
        if not key:
            raise UserError("this page has no browser key yet: reload the page, then join")
        typed = normal_code(code)
        who = address or f"browser:{browser_hash(key)}"
        with self._lock:
            self._sweep()
            now = self._clock()
            self._wrong.refuse_guessing(who, typed, now)
            room = self._classes.get(typed)
            if room is None:
                self._wrong.count(who, typed, now)
                raise UserError(f"no class has the code {shown_code(typed, '(nothing)')}: check it on the projector "
                                f"({CLASS['code_chars']} letters and digits; no 0, 1, O, I or L). A class that "
                                "ended, or ran before the app restarted, has no code any more: ask your teacher for "
                                "the new one")
            student = browser_hash(key)
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
            student = room.students.get(browser_hash(key))
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
        """What the device of browser `key` sees of the class `code` (store.classroom.Classroom.seen_by)."""
        with self._lock:
            return self._room(code).seen_by(browser_hash(key))

    def stamp(self, code, key: str) -> str:
        """What changes when the device of browser `key` has something new to see of the class `code`
        (store.classroom.Classroom.stamp_for): a page asks for it each poll period, and for the class (seen) only
        when it changed."""
        with self._lock:
            return self._room(code).stamp_for(browser_hash(key))

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
    def _room(self, code) -> Classroom:
        typed = normal_code(code)
        self._sweep()
        room = self._classes.get(typed)
        if room is None:
            raise ClassEnded(ENDED.format(code=shown_code(typed, "(none)"), hours=CLASS["idle_seconds"] // 3600))
        return room

    def _teachers(self, code, key: str, what: str) -> Classroom:
        room = self._room(code)
        if not key or browser_hash(key) != room.teacher:
            raise UserError(f"only the teacher of this class can {what}: this device joined it as a student")
        room.touched = self._clock()
        return room

    def _sweep(self) -> None:
        now = self._clock()
        for code in [c for c, room in self._classes.items() if now - room.touched > CLASS["idle_seconds"]]:
            del self._classes[code]


CLASSES = Classes()
