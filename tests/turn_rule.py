"""Did each training start within its turn? The training line's rule, checked on a record of what happened
(tests.turn_record's runs, or runs made by hand), not on the code that orders the line (server.fair_line).

The rule (issue 30: "served in turn by address, then by browser; an honest student's run starts after at most the
runs already running plus one per other client ahead of it"), exactly:

- A turn is an address's: the browsers behind one address (a class behind a school's NAT) share it, in the order
  they joined. So a run waits for the runs of its own address that were running or ahead of it in line when it
  joined (its address's earlier turns), and no run of its address that joined after it starts before it.
- Its turn comes at the later of its join and the end (or leaving) of the last of those before it started. From
  then on it waits for no run of its own address, and for at most one run of each other address (that address's
  turn in the same round): the runs that start after its turn came and before it include at most one per other
  address. With P places and runs of about t seconds each, that is a wait of at most about t x (other addresses
  ahead + 1) / P after its address's earlier runs.
- A run that started while one of its address's earlier runs was still running did not wait for its address's turn
  at all (its address held a place and it took another): it started within its turn.

First come, first served breaks it: a flooder's 8 runs from one address joined before a student start before it,
8 runs of one other address where the rule allows one. Round robin by address with running runs counted as turns
taken (server.fair_line.fair_order) keeps it.

The rule is on the order the server recorded, not on seconds: a line that left a place idle while a run waited
would break no order here (gradio starts a waiting run as soon as a place is free; the record's times show each
wait, and bench/hostile_load.py prints them).

What a run "was running or ahead" of is read from the record (Run.running, Run.line); a run whose check needs a run
the record no longer holds (its ring dropped it), or that never started, gets no verdict (None).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from tests.turn_record import Run


@dataclass(frozen=True)
class Turn:
    """The verdict on one run: `ok` (None: not started, or the record lacks what the check needs), when its turn
    came, the runs that started after that and before it, and why, in words."""
    run: int
    ok: bool | None
    came: float | None
    overtaken_by: tuple[int, ...]
    why: str


def check_turn(run: Run, runs: dict[int, Run]) -> Turn:
    """The rule above for `run`; `runs` are the record's runs by number (every run it joined with, and after)."""
    if run.started is None:
        return Turn(run.number, None, None, (), "never started" if run.ended is not None else "still waiting")
    before = [n for n in (*run.running, *run.ahead) if n != run.number]
    if any(n not in runs for n in before):
        return Turn(run.number, None, None, (), "the record no longer holds a run it joined behind")
    own = [runs[n] for n in before if runs[n].address == run.address]
    late = [r.number for r in runs.values() if r.address == run.address and r.number > run.number
            and r.started is not None and r.started < run.started]
    if late:
        return Turn(run.number, False, None, tuple(late), f"run {late[0]} of its own address joined after it and "
                                                          f"started first")
    alongside = [r.number for r in own if r.started is not None and r.started < run.started
                 and (r.ended is None or r.ended > run.started)]
    if alongside:
        return Turn(run.number, True, run.joined, (), f"started while run {alongside[0]} of its address was running")
    came = max([run.joined] + [r.ended for r in own if r.ended is not None and r.ended < run.started])
    overtaken = tuple(sorted((r for r in runs.values() if r.number != run.number and r.started is not None
                              and came < r.started < run.started), key=lambda r: r.started))
    per_address = Counter(r.address for r in overtaken)
    numbers = tuple(r.number for r in overtaken)
    if per_address[run.address]:
        return Turn(run.number, False, came, numbers, "a run of its own address started after its turn came")
    extra = [address for address, n in per_address.items() if n > 1]
    if extra:
        return Turn(run.number, False, came, numbers, f"{per_address[extra[0]]} runs of one other address started "
                                                      f"after its turn came (its turn allows one)")
    return Turn(run.number, True, came, numbers, f"{len(numbers)} runs of {len(per_address)} other addresses "
                                                 f"started after its turn came, one each at most")


def check_turns(runs: Sequence[Run]) -> dict[int, Turn]:
    """The verdict on every run of a record, by its number."""
    by_number = {run.number: run for run in runs}
    return {run.number: check_turn(run, by_number) for run in runs}
