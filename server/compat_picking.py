"""gradio's picking loop (`Queue.start_processing`) driven one pick at a time, for server.compat's probe.

What the app relies on: the loop calls the queue instance's `get_events` (server.lines replaces it) under
`delete_lock`, counts what it picks in the line's `current_concurrency` and in `active_jobs`, and starts the
instance's `process_events(events, batch, ...)` (server.lines wraps it), whose end frees both.

Run as a server runs it, the loop picks the next request while the last one's `process_events` is still finishing
(its analytics run in gradio's thread pool after the line is freed), so what the probe saw depended on which thread
the machine ran first: on a loaded machine the next request's function had sometimes run before the last one's
`process_events` returned, and the start was refused (1 probe in ~200 at load 7-8; 2 in 50 beside a busy thread).
Here each run of the loop lasts a count of turns (SteppedQueue), what it starts only records the call (`starting`),
and gradio's `process_events` then runs with what the loop passed, awaited to its end, before the loop runs again.
One event loop, one step at a time, no time limit: the facts depend on gradio's behaviour alone.
"""
from __future__ import annotations

from gradio.queueing import Queue

from limits import COMPAT_PROBE

TURNS = COMPAT_PROBE["turns"]  # of the loop per run: poll, pick, poll again (and its started call runs)


class LoopRanOn(RuntimeError):
    """gradio's picking loop slept more often than it turned: it no longer stops when `stopped` is set."""


class SteppedQueue(Queue):
    """gradio's queue (its class swapped on the probe's instance) whose picking loop, while `probe_turns` is set,
    ends after that many turns: the loop reads `stopped` at each, True once they are spent (or once gradio set it;
    the routes read it too, outside the loop). `sleep_when_free` is 0 (a sleep lets the tasks the loop started run,
    and takes no time) and ends a loop sleeping past the count."""

    probe_turns: int | None = None
    probe_sleeps = 0

    @property
    def stopped(self):
        if self.probe_turns is not None:
            self.probe_turns -= 1
            if self.probe_turns < 0:
                return True
        return self.__dict__.get("probe_stop", False)

    @stopped.setter
    def stopped(self, value):
        self.__dict__["probe_stop"] = value

    @property
    def sleep_when_free(self):
        self.probe_sleeps += 1
        if self.probe_sleeps > TURNS:
            raise LoopRanOn(f"Queue.start_processing slept {self.probe_sleeps} times in {TURNS} turns")
        return 0

    @sleep_when_free.setter
    def sleep_when_free(self, value):
        """gradio's __init__ sets it; the probe's loop never waits."""


class Picking:
    """The queue's `get_events` and `process_events` replaced on the instance (as server.lines replaces them) by
    recorders; `run` runs gradio's loop and then what it started, round by round. Facts in `picks` (each poll: the
    lock held, the line's waiting and running counts, what gradio picked) and `processed` (each call the loop started:
    its events, the line then, its arguments, what had run when gradio's process_events returned, the line freed)."""

    def __init__(self, queue: Queue, group: str, ran: list):
        self.queue, self.group, self.ran = queue, group, ran
        self.pick, self.process = queue.get_events, queue.process_events  # gradio's (or what a test put there)
        self.picks, self.processed, self.started = [], [], []
        queue.__class__ = SteppedQueue
        queue.get_events, queue.process_events = self.picking, self.starting

    def line(self):
        return self.queue.event_queue_per_concurrency_id[self.group]

    def picking(self):
        line = self.line()
        facts = dict(locked=self.queue.delete_lock.locked(), waiting=len(line.queue),
                     running=line.current_concurrency)
        picked = None if not self.picks else self.pick()  # the first poll picks none: gradio must poll again
        self.picks.append(dict(facts, picked=picked))
        return picked

    async def starting(self, events, *args, **kwargs):
        """What the loop started, as it was then; gradio's process_events runs it once the loop has ended."""
        facts = dict(ids=[e._id for e in events], running=self.line().current_concurrency,
                     active=any(job == events for job in self.queue.active_jobs), args=args)
        self.processed.append(facts)
        self.started.append((facts, events, args, kwargs))

    async def run(self, rounds: int):
        """`rounds` times: gradio's loop for TURNS turns, then each call it started, to its end."""
        for _ in range(rounds):
            self.queue.probe_turns, self.queue.probe_sleeps, self.queue.stopped = TURNS, 0, False
            try:
                await self.queue.start_processing()
            finally:
                self.queue.probe_turns = None
            started, self.started = self.started, []
            for facts, events, args, kwargs in started:
                await self.process(events, *args, **kwargs)
                facts["ran before return"] = list(self.ran)
                facts["freed"] = (self.line().current_concurrency == 0
                                  and not any(job == events for job in self.queue.active_jobs))
        self.queue.stopped = False
