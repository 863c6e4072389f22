"""The training line serves clients in turn, checked from outside on what the server recorded (issue 30: "served in
turn by address, then by browser; an honest student's run starts after at most the runs already running plus one per
other client ahead of it").

A real scenario on 127.0.0.1: while the line is paused (tests.reliability.test_fair_lines.paused), a flooder joins 6
short trainings from 6 session ids of one address, then 3 students behind one school address join one each; the
line is resumed and every run trains (10 steps). The record of the line (tests.turn_record.record_turns, around the
server's own functions: joins, starts, ends, salted client hashes) is checked with tests.turn_rule, the function the
benchmark uses. Oracle: the rule's statement (tests/turn_rule.py). Served first come, first served
(server.fair_line.fair_order made to return the line as it came), the first student waits for the flooder's 6 runs and the check fails: "6 runs of one other
address started after its turn came (its turn allows one)". Not timed: the check is on the order the server
recorded."""
from __future__ import annotations

import time

from tests.reliability.test_fair_lines import (BAD_TRAINING, fn_index, forwarded, join, new_session,  # noqa: F401
                                               paused, served)  # (forwarded, served: the fixtures, shared)

from tests.turn_record import record_turns
from tests.turn_rule import check_turns

SHORT = ["task", "reverse", "", None, "", 1, 4, 32, 3e-3, 10, 8, "mha", "sinusoidal"]  # 10 steps: about a second
FLOODER, SCHOOL = "203.0.113.5", "198.51.100.7"


def test_students_behind_one_address_start_within_their_turn_behind_a_flooder_of_many_sessions(served):
    """Every run of the scenario started within its turn, each of the 3 students' included; the students' runs are
    found in the record by their (address, session) hashes, and neither a session id nor an address is in it."""
    demo, url, config = served
    index = fn_index(config, "train")
    record = record_turns(demo._queue)
    flood, students = [new_session() for _ in range(6)], [new_session() for _ in range(3)]
    with paused(demo, url, config, "train", "train", BAD_TRAINING):
        for session in flood:
            assert join(url, index, SHORT, session, FLOODER).status_code == 200
        for session in students:
            assert join(url, index, SHORT, session, SCHOOL).status_code == 200
    keys = {record.key(address, session) for address, sessions in ((FLOODER, flood), (SCHOOL, students))
            for session in sessions}
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and sum(r.ended is not None and (r.address, r.browser) in keys
                                              for r in record.snapshot()) < len(keys):
        time.sleep(0.2)
    runs = record.snapshot()
    ours = {(r.address, r.browser): r for r in runs if (r.address, r.browser) in keys}
    assert len(ours) == 9 and all(r.started is not None for r in ours.values()), ours
    verdicts = check_turns(runs)
    student_runs = [ours[record.key(SCHOOL, s)].number for s in students]
    assert all(verdicts[n].ok for n in student_runs), [verdicts[n] for n in student_runs]
    assert all(verdicts[r.number].ok for r in ours.values()), [verdicts[r.number] for r in ours.values()]
    assert not any(secret in repr(runs) for secret in [*flood, *students, FLOODER, SCHOOL])
