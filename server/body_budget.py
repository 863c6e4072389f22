"""The bytes of large request bodies the server reads and parses at once, bounded (issue 37, item 4).

A request's body is held several times over while it is read and parsed, before gradio's queue takes or refuses the
call: the front door's copy (server.http_gate checks its session id and function), starlette's, the JSON parse,
gradio's request model. The export line keeps 10 figure exports (2 running, 8 waiting) and refuses the rest, yet 32
exports of a 12.5 MiB figure sent at once peaked at +1,071 MB, every one of them parsed before its refusal
(bench/held_memory.py), and nothing bounded how many arrive at once. Here each body of at least `counted` bytes takes
its size (its Content-Length, else the most a body may be) before it is read and gives it back once its request is
answered; a body that finds no room waits its turn, up to `wait_s`, then is refused in words. One body is always let
through (a body is at most limits.BODY_BYTES, under the budget). Smaller bodies (a call's few KiB) never wait.
"""
from __future__ import annotations

import asyncio
import time

BUSY = ("the server is reading other large requests (figures, texts) right now and has no room for this one: "
        "try again in a moment")


class BodyBudget:
    def __init__(self, total: int, counted: int, wait_s: float):
        self.total, self.counted, self.wait_s = total, counted, wait_s
        self.used = 0  # bytes of the large bodies being read or answered now
        self.most = 0  # the most `used` has been (the tests read it)
        self._waiting: list[asyncio.Future] = []  # one per body waiting for room, woken by `give`

    def share(self, size: int) -> int:
        """What a body of `size` bytes takes from the budget: its size if it is counted, else nothing."""
        return size if size >= self.counted else 0

    async def take(self, size: int) -> bool:
        """Wait until `size` bytes fit (or nothing else is taken), then take them; False after `wait_s`. Runs on
        the server's event loop: the check and the take have no await between them. A body that waits sleeps until
        some room is given back (no polling)."""
        deadline = time.monotonic() + self.wait_s
        while size and self.used and self.used + size > self.total:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            woken = asyncio.get_running_loop().create_future()
            self._waiting.append(woken)
            try:
                await asyncio.wait_for(woken, left)
            except asyncio.TimeoutError:
                return False
            finally:
                if woken in self._waiting:
                    self._waiting.remove(woken)
        self.used += size
        self.most = max(self.most, self.used)
        return True

    def give(self, size: int) -> None:
        """Give `size` bytes back and wake every waiting body: each looks again whether it fits (in the order they
        came)."""
        self.used -= size
        waiting, self._waiting = self._waiting, []
        for woken in waiting:
            if not woken.done():
                woken.set_result(None)
