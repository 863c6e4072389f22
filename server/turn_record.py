"""What happened in the training line, run by run, for checking its turns from outside (server.turn_rule): when each
run joined, when it started, when it ended (or left the line without starting), whose it was, and which runs were
running and waiting, in the order the fair rule serves them, when it joined. No gradio here: server.lines feeds it.

Bounded and safe to read: the last limits.TURNS_RECORDED runs (a ring); a client is kept as two salted hashes (its
address, its browser), never its session id, its browser key or its address in clear; the salt is random per
process and never leaves it (`key` computes a client's hashes in the process, for a test or the benchmark that knows
whom it asks about). No client can read it: the app adds no endpoint for it; the tests read it in-process and
bench/load.py's driver prints it on its stdin's request (server.lines.recorded_turns).

Times are seconds of one clock, strictly increasing from one record to the next, so their order is the order in
which the server saw things happen (an end is recorded before the start of the run that took its place).
"""
from __future__ import annotations

import hashlib
import os
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Hashable, Sequence

from limits import TURNS_RECORDED


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
