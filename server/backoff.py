"""A client that keeps being refused its share of a line waits longer for each refusal, so it cannot spin on the
server (server.admission asks it for the line's refusals only: a refused value is answered at once).

A flooder whose requests are refused asks again at once: the Show-attention flooder of bench/hostile_load.py, its 4
waiting places full, sent 34 refused joins a second, each 6 ms of the server's CPU on its one event loop (uvicorn,
FastAPI's dependencies in a worker thread, gradio's join path and the refusal), more than its one running
2,000-character translation cost (bench/flood_parts.py, bench/RESULTS.md). A client's first refusal in a row is
answered at once; each further one `first` x 2^(n - 2) seconds later, at most `most`:
    0, first, 2 first, 4 first, ..., most
(limits.REFUSAL_BACKOFF). A client that waits for its answers before asking again (a page, gradio_client, that
flooder's threads) then asks at most once per `most` seconds per request in flight. The wait is a sleep on the
event loop, holding nothing but the refused request: the requests of others are answered meanwhile.

Who counts as a client here: its browser, and apart from that its address (not loopback, every local page's):
an address that invents a browser per request (the training floods of bench/hostile_load.py) is backed off as one.
The wait is the longer of the two. Only refusals wait: an accepted request is never delayed, and it clears its
browser's count (a classmate's refusal, not its request, waits for a flooding address).

Bounded: `clients` counts are kept (the oldest dropped first), a count is forgotten after `forget` seconds without
a refusal, at most `waiting` refusals wait at once and only requests of at most `body_bytes` (a waiting refusal
keeps its request in memory): past either, the refusal is answered at once, as before.
"""
from __future__ import annotations

import asyncio
import time
from collections import OrderedDict


class RefusalBackoff:
    def __init__(self, first: float, most: float, forget: float, clients: int, waiting: int, body_bytes: int):
        self.first, self.most, self.forget, self.clients = first, most, forget, clients
        self.waiting_bound, self.body_bytes = waiting, body_bytes
        self.counts: OrderedDict[tuple, tuple[int, float]] = OrderedDict()  # key -> (refusals in a row, last at)
        self.waiting = 0
        self.sleep = asyncio.sleep  # how a refusal waits (on the event loop)

    def _count(self, key: tuple, now: float) -> int:
        n, last = self.counts.pop(key, (0, now))
        n = 1 if now - last > self.forget else n + 1
        self.counts[key] = (n, now)
        while len(self.counts) > self.clients:
            self.counts.popitem(last=False)
        return n

    def delay(self, address: str, browser: str, now: float) -> float:
        """Count a refusal of (address, browser) at `now`; the seconds its answer waits."""
        n = max(self._count(("browser", address, browser), now), self._count(("address", address), now)
                if address else 0)
        return 0.0 if n < 2 else min(self.first * 2 ** (n - 2), self.most)

    def admitted(self, address: str, browser: str) -> None:
        """A request of (address, browser) was accepted: its browser's refusals in a row are over."""
        self.counts.pop(("browser", address, browser), None)

    async def refused(self, address: str, browser: str, body_bytes: int | None) -> float:
        """Count a refusal and wait its delay (none for a large or unknown body, or while `waiting` others wait);
        the seconds waited."""
        delay = self.delay(address, browser, time.monotonic())
        if not delay or body_bytes is None or body_bytes > self.body_bytes or self.waiting >= self.waiting_bound:
            return 0.0
        self.waiting += 1
        try:
            await self.sleep(delay)
        finally:
            self.waiting -= 1
        return delay
