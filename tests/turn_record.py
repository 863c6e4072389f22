"""What happened in the training line, run by run, for checking its turns from outside (tests/turn_rule.py): when
each run joined, when it started, when it ended (or left the line without starting), whose it was, and which runs
were running and waiting, in the order the fair rule serves them, when it joined. The server keeps no such record:
`record_turns(queue)` records a served app's training line around server.lines' functions, in the process of the
tests (tests/reliability/test_training_turns.py) or of the benchmark's driver (bench/load.py).

Bounded and safe to read: the last limits.TURNS_RECORDED runs (a ring); a client is kept as two salted hashes (its
address, its browser), never its session id, its browser key or its address in clear; the salt is random per
process and never leaves it (`key` computes a client's hashes in the process, for a test or the benchmark that knows
whom it asks about). No client can read it: the app adds no endpoint for it; the tests read it in-process and
bench/load.py's driver prints it on its stdin's request.

Times are seconds of one clock, strictly increasing from one record to the next, so their order is the order in
which the server saw things happen (an end is recorded before the start of the run that took its place).
"""
from __future__ import annotations

import functools
import hashlib
import os
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Hashable, Sequence

from limits import TRAINING_GROUP, TURNS_RECORDED
from server import lines


@dataclass
class Run:
    """One request of the training line, as the server saw it."""
    number: int  # in the order runs joined
    address: str  # salted hash of the client's address ('' for loopback hashes too)
    browser: str  # salted hash of its browser (session)
    joined: float
    running: tuple[int, ...]  # the runs running when it joined
    line: tuple[int, ...]  # the line when it joined, in the order served (it included): its place is its index
    started: float | None = None
    ended: float | None = None  # its run's end; or, never started, when it left the line (made room, cancelled)

    @property
    def ahead(self) -> tuple[int, ...]:
        """The runs waiting ahead of it in turn order when it joined."""
        return self.line[:self.line.index(self.number)]


@dataclass
class TurnRecord:
    """The ring of the last `size` runs of a line, fed with the line's opaque request ids (gradio's Event._id)."""
    size: int = TURNS_RECORDED
    runs: deque = field(init=False)
    live: dict = field(default_factory=dict, repr=False)  # request id -> Run, while waiting or running (a line's worth)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    salt: bytes = field(default_factory=lambda: os.urandom(16), repr=False)  # never shown, never sent
    count: int = 0
    clock: float = 0.0

    def __post_init__(self):
        self.runs = deque(maxlen=self.size)

    def key(self, address: str, browser: str) -> tuple[str, str]:
        """The hashes a client (address, browser) is kept as."""
        def hashed(text: str) -> str:
            return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), key=self.salt, digest_size=6).hexdigest()
        return hashed(address), hashed(browser)

    def _now(self) -> float:
        self.clock = max(time.monotonic(), self.clock + 1e-6)
        return self.clock

    def joined(self, request: Hashable, client: tuple[str, str], line: Sequence[Hashable],
               running: Sequence[Hashable]) -> None:
        """`request` of `client` joined; `line` is the waiting line in fair order (it included), `running` the
        requests running now."""
        with self.lock:
            if request in self.live:
                return
            number = self.count
            self.count += 1
            places = {r: self.live[r].number for r in [*line, *running] if r in self.live}
            places[request] = number
            run = Run(number, *self.key(*client), self._now(), tuple(places[r] for r in running if r in places),
                      tuple(places[r] for r in line if r in places))
            self.live[request] = run
            self.runs.append(run)

    def started(self, request: Hashable) -> None:
        with self.lock:
            run = self.live.get(request)
            if run is not None and run.started is None:
                run.started = self._now()

    def gone(self, requests: Sequence[Hashable]) -> None:
        """These requests are neither waiting nor running any more: each ended (if it started) or left the line."""
        with self.lock:
            for request in requests:
                run = self.live.pop(request, None)
                if run is not None:
                    run.ended = self._now()

    def sweep(self, waiting: Sequence[Hashable], running: Sequence[Hashable]) -> None:
        """Every request the record holds live that is no longer in `waiting` or `running` is gone."""
        present = set(waiting) | set(running)
        self.gone([r for r in list(self.live) if r not in present])

    def running_count(self) -> int:
        with self.lock:
            return sum(run.started is not None for run in self.live.values())

    def waiting_count(self) -> int:
        with self.lock:
            return sum(run.started is None for run in self.live.values())

    def snapshot(self) -> list[Run]:
        """Copies of the runs recorded, oldest first."""
        with self.lock:
            return [Run(**vars(run)) for run in self.runs]


def record_turns(queue) -> TurnRecord:
    """Record `queue`'s training line from now on (gradio's Queue of a served app, after server.lines.install): each
    join once server.lines.settle has put the line in fair order, each start when gradio picks it, each end when its
    run returns or it left the line. Wraps the queue's get_events and process_events, and server.lines.settle (for
    the queues that record only); a second call returns the same record."""
    record = getattr(queue, "turn_record", None)
    if record is not None:
        return record
    record = queue.turn_record = TurnRecord()
    pick, process = queue.get_events, queue.process_events

    def recorded_pick():
        """Before gradio picks: the trainings that ended or left since are marked (so an end is always recorded
        before the start it makes room for); then the trainings it picked, started."""
        line = queue.event_queue_per_concurrency_id.get(TRAINING_GROUP)
        if line is not None and (line.current_concurrency < record.running_count()
                                 or len(line.queue) < record.waiting_count()):
            record.sweep([e._id for e in line.queue], [e._id for e in lines.running(queue, TRAINING_GROUP)])
        picked = pick()
        if picked and picked[2] == TRAINING_GROUP:
            for event in picked[0]:
                record.started(event._id)
        return picked

    async def recorded_process(events, *args, **kwargs):
        """gradio's run of a request; a training's end recorded when it returns (if no pick recorded it first)."""
        try:
            return await process(events, *args, **kwargs)
        finally:
            record.gone([e._id for e in events if e.concurrency_id == TRAINING_GROUP])

    queue.get_events, queue.process_events = recorded_pick, recorded_process
    if not getattr(lines.settle, "records_turns", False):
        lines.settle = _recording_joins(lines.settle)
    return record


def _recording_joins(settle):
    """server.lines.settle, then, in the training line of a queue that records, the line as it now stands: its
    runs gone, and each waiting run's join (the first time it is seen) with the runs running and the line's order."""
    @functools.wraps(settle)
    def settled(queue, group: str, victim=None, joined=None) -> None:
        settle(queue, group, victim, joined)
        record = getattr(queue, "turn_record", None)
        if record is None or group != TRAINING_GROUP:
            return
        line = queue.event_queue_per_concurrency_id[group]
        order, ran = [e._id for e in line.queue], [e._id for e in lines.running(queue, group)]
        record.sweep(order, ran)
        for event in line.queue:
            record.joined(event._id, lines.client_of(event), order, ran)
    settled.records_turns = True
    return settled
