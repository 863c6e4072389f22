"""server.body_budget in the front door (server.http_gate): the large bodies read and parsed at once are bounded in
bytes (issue 37, item 4). Driven as ASGI, no server: a gate around an app that reads its body and holds it a moment,
as gradio's parse does; counted, not timed."""
from __future__ import annotations

import asyncio

from server.body_budget import BUSY, BodyBudget
from server.http_gate import RequestGate

SIZE = 2 << 20  # a large body (a figure sent to be exported)


def _held_at_once(bodies: BodyBudget | None, requests: int, size: int = SIZE, hold_s: float = 0.05):
    """Send `requests` POSTs of `size` bytes at once through a gate; (statuses, replies, the most bodies the app held
    at once)."""
    inside = {"now": 0, "most": 0}

    async def app(scope, receive, send):
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        inside["now"] += 1
        inside["most"] = max(inside["most"], inside["now"])
        await asyncio.sleep(hold_s)
        inside["now"] -= 1
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": str(len(body)).encode()})

    gate = RequestGate(app, max_body=16 << 20, bodies=bodies)

    async def one():
        scope = {"type": "http", "method": "POST", "path": "/upload", "query_string": b"",
                 "headers": [(b"content-length", str(size).encode()), (b"content-type", b"application/octet-stream")]}
        chunks = [{"type": "http.request", "body": b"x" * (size // 2), "more_body": True},
                  {"type": "http.request", "body": b"x" * (size - size // 2), "more_body": False}]
        sent = []

        async def receive():
            return chunks.pop(0) if chunks else {"type": "http.disconnect"}

        async def send(message):
            sent.append(message)
        await gate(scope, receive, send)
        return sent[0]["status"], sent[1]["body"]

    async def all_at_once():
        return await asyncio.gather(*(one() for _ in range(requests)))
    answers = asyncio.run(all_at_once())
    return [status for status, _ in answers], [reply for _, reply in answers], inside["most"]


def test_large_bodies_wait_for_room_and_all_are_answered():
    """Bound: with room for 3 bodies, 8 sent at once are held at most 3 at a time, and all 8 are answered whole.
    Without a budget the app held all 8 at once (the gate as it was)."""
    budget = BodyBudget(total=3 * SIZE, counted=1 << 20, wait_s=60)
    statuses, replies, most = _held_at_once(budget, 8)
    assert statuses == [200] * 8 and replies == [str(SIZE).encode()] * 8
    assert most <= 3 and budget.most <= 3 * SIZE and budget.used == 0
    assert _held_at_once(None, 8)[2] == 8


def test_a_body_with_no_room_in_time_is_refused_in_words():
    """Refusal: room for one body, a wait of 0: of 3 sent at once one is answered, the others get 503 saying why."""
    budget = BodyBudget(total=SIZE, counted=1 << 20, wait_s=0)
    statuses, replies, _ = _held_at_once(budget, 3)
    assert sorted(statuses) == [200, 503, 503] and budget.used == 0
    assert all(BUSY in reply.decode() for status, reply in zip(statuses, replies) if status == 503)


def test_small_bodies_never_wait():
    """Invariant: a body under `counted` (a call's few KiB) passes while large ones fill the budget."""
    budget = BodyBudget(total=SIZE, counted=1 << 20, wait_s=0)
    budget.used = SIZE  # full
    statuses, _, _ = _held_at_once(budget, 4, size=4096)
    assert statuses == [200] * 4 and budget.used == SIZE


def test_a_waiting_body_takes_its_room_as_soon_as_it_is_given():
    """Wake-up, counted in turns of the event loop (not timed): a body waiting for room takes it within a few turns
    after the room is given back. Before, a waiting body slept 50 ms between looks (polling while nothing changed):
    after 10 turns it had not taken it."""
    async def run():
        budget = BodyBudget(total=SIZE, counted=1 << 20, wait_s=60)
        assert await budget.take(SIZE)
        waiter = asyncio.ensure_future(budget.take(SIZE))
        for _ in range(10):
            await asyncio.sleep(0)
        waited = not waiter.done()
        budget.give(SIZE)
        for _ in range(10):
            await asyncio.sleep(0)
        return waited, waiter.done() and waiter.result(), budget.used
    assert asyncio.run(run()) == (True, True, SIZE)
