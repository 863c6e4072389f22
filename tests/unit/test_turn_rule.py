"""The training line's turn rule (tests.turn_rule) on records made by hand, where it holds and where it is broken,
and on the record tests.turn_record keeps of a simulated line: served by server.fair_line.fair_order the rule holds
for every run of a flood with a class in it; served first come, first served it is broken for a student.

Oracles: hand-counted records (which runs started after a run's turn came, per address); the rule's own statement
(module docstring) for the verdicts. The record: bounded by its ring, and no client's address or session in it."""
from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field

import pytest

from server.fair_line import fair_order
from tests.turn_record import Run, TurnRecord
from tests.turn_rule import check_turns


def flood_then_student(order: str) -> list[Run]:
    """Runs 0-7 of one flooding address (8 browsers) joined while the line waited; student run 8 of another address
    joined after them; 2 places, each run 1 s. `order`: 'fair' (the student second, in the flood's first round) or
    'first come' (after all 8)."""
    line = (0, 8, *range(1, 8)) if order == "fair" else tuple(range(9))
    runs = [Run(i, "F", f"f{i}", i * 0.1, (), tuple(range(i + 1))) for i in range(8)]
    runs.append(Run(8, "S", "s", 1.0, (), line))
    for slot, number in enumerate(line):  # two at a time: slots 0, 1 start at 2.0, slots 2, 3 at 3.0 ...
        runs[number].started = 2.0 + slot // 2 + slot % 2 * 0.01
        runs[number].ended = runs[number].started + 1.0 - 0.001
    return runs


def test_a_student_served_in_the_floods_first_round_started_within_its_turn():
    """Oracle: one run of the flooding address (run 0) started after the student joined and before it: one per
    other address, allowed."""
    turn = check_turns(flood_then_student("fair"))[8]
    assert turn.ok is True and turn.overtaken_by == (0,), turn


def test_first_come_first_served_lets_a_flooders_eight_runs_go_before_a_student_and_breaks_the_rule():
    """Oracle: all 8 of the flooder's runs started after the student joined and before it: 8 of one address where
    the rule allows one."""
    turn = check_turns(flood_then_student("first come"))[8]
    assert turn.ok is False and turn.overtaken_by == tuple(range(8)) and "8 runs of one other address" in turn.why


def class_behind_one_address(starts: dict[int, float], ends: dict[int, float]) -> list[Run]:
    """Runs 0-2: a class of 3 behind address C (browsers c0-c2, joined in that order at 0, 0.1, 0.2); runs 3-6:
    another address X (joined at 0.3-0.6); nothing running when they joined; each line as fair_order gives it."""
    lines = {0: (0,), 1: (0, 1), 2: (0, 1, 2), 3: (0, 3, 1, 2), 4: (0, 3, 1, 4, 2), 5: (0, 3, 1, 4, 2, 5),
             6: (0, 3, 1, 4, 2, 5, 6)}
    return [Run(i, "C" if i < 3 else "X", f"b{i}", i * 0.1, (), lines[i], starts.get(i), ends.get(i))
            for i in range(7)]


def test_a_classmate_waits_for_the_runs_of_its_address_ahead_of_it_then_for_one_per_other_address():
    """Run 1 (the second student) waits for run 0 of its address to end (at 3); X's runs 3 and 4 started while run 0
    ran (its address's turn), only run 5 after: within its turn. Oracle: the hand-written timeline."""
    runs = class_behind_one_address({0: 1, 3: 1.1, 4: 2, 5: 3.1, 1: 3.2, 2: 4, 6: 5},
                                    {3: 1.9, 4: 3.0, 0: 3.0, 5: 4, 1: 4.5, 2: 5, 6: 6})
    verdicts = check_turns(runs)
    assert verdicts[1].ok is True and verdicts[1].came == 3.0 and verdicts[1].overtaken_by == (5,), verdicts[1]
    assert all(v.ok for v in verdicts.values()), verdicts


def test_two_runs_of_another_address_after_a_classmates_turn_came_break_the_rule():
    """As above, but after run 0 ended X's runs 5 and 6 both started before run 1: two of one other address."""
    runs = class_behind_one_address({0: 1, 3: 1.1, 4: 2, 5: 3.1, 6: 3.15, 1: 4.1, 2: 4.2},
                                    {3: 1.9, 0: 3.0, 4: 4.0, 5: 4.05, 6: 5, 1: 5, 2: 5})
    turn = check_turns(runs)[1]
    assert turn.ok is False and turn.overtaken_by == (5, 6) and "2 runs of one other address" in turn.why, turn


def test_a_student_that_starts_while_its_classmate_runs_is_within_its_turn():
    """Run 1 started at 2.5 while run 0 of its address still ran (till 3): its address held one place and it took
    the other, whatever started before it (X's 3 and 4 did)."""
    runs = class_behind_one_address({0: 1, 3: 1.1, 4: 2, 1: 2.5, 2: 4, 5: 4.1, 6: 5},
                                    {3: 1.9, 4: 2.4, 0: 3, 1: 4, 2: 5, 5: 5, 6: 6})
    assert check_turns(runs)[1].ok is True and "was running" in check_turns(runs)[1].why


def test_within_an_address_browsers_go_in_the_order_they_joined():
    """Run 2 (the third student) started before run 1 (the second): run 1 was overtaken by its own address."""
    runs = class_behind_one_address({0: 1, 3: 1.1, 2: 2, 1: 3.1, 4: 3.2, 5: 4, 6: 4.1},
                                    {3: 1.9, 0: 3.0, 2: 3.05, 1: 4, 4: 4, 5: 5, 6: 5})
    turn = check_turns(runs)[1]
    assert turn.ok is False and turn.overtaken_by == (2,) and "own address" in turn.why, turn


def test_no_verdict_without_a_start_or_without_the_runs_it_joined_behind():
    """A run still waiting, one that left the line, and one whose runs ahead the record's ring dropped: None."""
    runs = flood_then_student("fair")
    runs[3].started = runs[3].ended = runs[4].started = None
    runs[4].ended = 2.5  # left the line (made room) without starting
    verdicts = check_turns(runs)
    assert verdicts[3].ok is None and "still waiting" in verdicts[3].why
    assert verdicts[4].ok is None and "never started" in verdicts[4].why
    assert check_turns(runs[1:])[8].ok is None  # run 0, ahead of the student, dropped


@dataclass
class Request:
    """A simulated training request: its id, client (address, browser) and how long it runs."""
    id: int
    client: tuple[str, str]
    seconds: float
    ends: float = field(default=0.0)


def simulate(order, seconds: float = 120, places: int = 2, seed: int = 0) -> tuple[TurnRecord, dict]:
    """A training line of `places` fed for `seconds` (steps of 0.1 s) by floods as hostile_load sends them (one
    address inventing browsers, 10 addresses, each keeping 8 waiting), a class of 5 behind one address and 2
    students of their own joining at 5 s; runs of 1-3 s. `order(waiting, running)` orders the line at each join
    and before each start, as server.lines does. The record it leaves, and the students' run numbers."""
    rng, ids, record = random.Random(seed), itertools.count(), TurnRecord()
    waiting, running, students, numbers = [], [], [], {}
    flood = ["203.0.113.1"] + [f"203.0.113.{10 + i}" for i in range(10)]
    for step in range(int(seconds * 10)):
        now = step / 10
        for request in [r for r in running if r.ends <= now]:
            running.remove(request)
            record.gone([request.id])
        joins = [Request(next(ids), (a, f"flood{next(ids)}"), rng.uniform(1, 3)) for a in flood
                 if sum(r.client[0] == a for r in waiting) < 8 and rng.random() < 0.5]
        if step == 50:
            students = [Request(next(ids), ("198.51.100.7", f"class{i}"), rng.uniform(1, 3)) for i in range(5)]
            students += [Request(next(ids), (f"192.0.2.{i}", "alone"), rng.uniform(1, 3)) for i in (1, 2)]
            joins += students
        for request in joins:
            waiting.append(request)
            waiting[:] = order(waiting, running)
            record.joined(request.id, request.client, [r.id for r in waiting], [r.id for r in running])
            numbers[request.id] = record.runs[-1].number
        while waiting and len(running) < places:
            waiting[:] = order(waiting, running)
            request = waiting.pop(0)
            request.ends = now + request.seconds
            running.append(request)
            record.started(request.id)
    return record, {numbers[s.id] for s in students}


def by_client(waiting, running):
    return fair_order(waiting, running, lambda r: r.client)


def test_a_line_in_fair_order_keeps_every_run_within_its_turn_under_the_floods():
    """Oracle: the rule, on the record of two simulated minutes of hostile_load's floods and students served by
    fair_order: every run that started is within its turn, the 7 students' included (all started)."""
    record, students = simulate(by_client)
    verdicts = check_turns(record.snapshot())
    started = [v for v in verdicts.values() if v.ok is not None]
    assert len(started) > 30 and all(v.ok for v in started), [v for v in started if not v.ok][:3]
    assert all(verdicts[n].ok for n in students), [verdicts[n] for n in students]


def test_the_same_line_first_come_first_served_breaks_the_rule_for_the_students():
    """The same floods and students, the line first come, first served: students wait behind the floods' 8 per
    address, and the rule says so (at least one student not within its turn)."""
    record, students = simulate(lambda waiting, running: waiting)
    verdicts = check_turns(record.snapshot())
    assert any(verdicts[n].ok is False for n in students), [verdicts[n] for n in students]


def test_the_record_is_bounded_and_keeps_no_client_in_clear():
    """A ring of `size` runs whatever joins; a request gone is no longer held live; the address and the session id
    are nowhere in the record, only salted hashes, equal to what `key` gives for that client (and not another
    record's: the salt is per record, and not in the record's repr)."""
    record, session, address = TurnRecord(size=4), "Zq3secretsess", "198.51.100.7"
    for i in range(10):
        record.joined(i, (address, f"{session}{i}"), [i], [])
        record.started(i)
        record.gone([i])
    runs = record.snapshot()
    assert [r.number for r in runs] == [6, 7, 8, 9] and not record.live
    assert session not in repr(runs) and address not in repr(runs)
    assert repr(record.salt) not in repr(record) and session not in repr(record)  # nor the salt, nor a live request
    assert (runs[0].address, runs[0].browser) == record.key(address, f"{session}6") != TurnRecord().key(
        address, f"{session}6")
    assert all(r.joined < r.started < r.ended for r in runs)


@pytest.mark.parametrize("left", [True, False])
def test_the_record_marks_what_left_the_line_and_what_ended(left):
    """sweep: a waiting request no longer in the line left it (ended, never started); a running one no longer
    running ended; what is still there is untouched."""
    record = TurnRecord()
    for i in range(3):
        record.joined(i, ("", f"b{i}"), list(range(i + 1)), [])
    record.started(0)
    record.sweep(waiting=[2] if left else [1, 2], running=[])
    runs = record.snapshot()
    assert runs[0].ended is not None and runs[0].started is not None
    assert (runs[1].ended is not None) == left and runs[1].started is None and runs[2].ended is None


def test_the_server_keeps_no_record_of_the_line():
    """Invariant (issue 41 item 5): recording the training line is the tests' and the benchmark's
    (tests.turn_record.record_turns), not production's: server.lines.install reorders gradio's picking and leaves its
    runs and the queue's attributes alone. Failed before: install gave every queue a TurnRecord (`turn_record`) and
    wrapped gradio's process_events to record each training's end."""
    from types import SimpleNamespace

    from server import lines

    def process_events(*args):
        return None

    queue = SimpleNamespace(get_events=lambda: None, process_events=process_events,
                            event_queue_per_concurrency_id={})
    lines.install(queue)
    assert queue.process_events is process_events
    assert set(vars(queue)) == {"get_events", "process_events", "event_queue_per_concurrency_id"}
    assert queue.get_events() is None  # nothing waits: gradio's own pick, through the fair one
