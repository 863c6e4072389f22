"""Fair to every client in every line: a client holds at most a few waiting requests of each kind, a line serves
clients in turn (by address, then by browser), and a full line gives a place to an address holding fewer.

Regressions (issue 30, items 1-3): the lines were per kind of request, first come first served: one client keeping
the 64 Show-attention places full had the honest client refused 24 times of 25; a class of 5 behind one address got
1 training queued and 4 refused (a client was its session or its address); new session ids from 10 addresses held
every training place and an honest student was refused 89 times of 89.

A line also bounds what a client runs (issue 30, what was left: the honest request was first in line but waited for
one of the flooder's 4 running 2,000-character translations to end, p95 6.9 s).

Deterministic, not timed: the line under test is paused (its running count raised by a million, so gradio starts
nothing from it) while requests join it, and its order is read from gradio's queue; the joined trainings are invalid (3
heads of d_model 32), so the line empties at once when it is resumed. Loopback only (X-Forwarded-For values are
addresses only with ATTENTION_LAB_TRUST_FORWARDED=1)."""
from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.app_server import api_client, launch_local, wait_for

from limits import (ADDRESS_WAITING, ATTENTION_CONCURRENCY, BROWSER_WAITING, DEFAULT_BROWSER_WAITING, QUEUE_WAITING,
                    REFUSAL_BACKOFF)
from server.fair_line import running_bounds
from server.lines import client_of

PAUSE = 10**6
BAD_TRAINING = ["task", "reverse", "", None, "", 1, 3, 32, 3e-3, 10, 8, "mha", "sinusoidal"]


@pytest.fixture(scope="module")
def served():
    demo, url = launch_local()
    try:
        yield demo, url, httpx.get(url + "config", timeout=30).json()
    finally:
        demo.close()


@pytest.fixture(autouse=True)
def forwarded(monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_TRUST_FORWARDED", "1")


def fn_index(config: dict, api_name: str) -> int:
    return next(d["id"] for d in config["dependencies"] if d.get("api_name") == api_name)


def join(url: str, index: int, data: list, session: str, address: str | None = None) -> httpx.Response:
    body = {"data": data, "fn_index": index, "session_hash": session, "event_data": None, "trigger_id": None}
    headers = {"x-forwarded-for": address} if address else {}
    return httpx.post(url + "gradio_api/queue/join", json=body, headers=headers, timeout=30)


def new_session() -> str:
    return uuid.uuid4().hex[:11]


@contextlib.contextmanager
def paused(demo, url: str, config: dict, group: str, api_name: str, data: list):
    """The line of `group`, starting nothing while the block runs; it exists once one call has joined it."""
    queue = demo._queue
    if group not in queue.event_queue_per_concurrency_id:
        assert join(url, fn_index(config, api_name), data, new_session()).status_code == 200
    line = queue.event_queue_per_concurrency_id[group]
    # that call starts before the pause: else it would wait in the line (seen in CI), first among the test's own
    wait_for(lambda: not line.queue)
    line.current_concurrency += PAUSE  # as if that many ran: gradio starts none (and counts down those that end)
    try:
        yield line
    finally:
        line.current_concurrency -= PAUSE
        wait_for(lambda: not line.queue)  # the joined calls run (and fail at once): drained


def sessions_in(line) -> list[str]:
    return [event.session_hash for event in line.queue]


def attention_data(text: str) -> list:
    return ["reverse", text, "", None]


def test_a_flooder_holds_a_few_waiting_and_an_honest_request_is_served_next(served):
    """One client sends 6 Show-attention requests while the line is paused: BROWSER_WAITING wait, the rest are
    refused with a message; an honest client's one request then waits behind one of the flooder's only (before:
    all 10 waited, and the honest one behind them)."""
    demo, url, config = served
    index, flooder, honest = fn_index(config, "attention"), new_session(), new_session()
    with paused(demo, url, config, "attention", "attention", attention_data("warm")) as line:
        answers = [join(url, index, attention_data(f"flood {i}"), flooder)
                   for i in range(BROWSER_WAITING.get("attention", DEFAULT_BROWSER_WAITING) + 2)]
        assert [a.status_code for a in answers].count(200) == BROWSER_WAITING.get("attention", DEFAULT_BROWSER_WAITING)
        refused = next(a for a in answers if a.status_code != 200)
        assert "waiting" in refused.text
        assert join(url, index, attention_data("honest"), honest).status_code == 200
        ahead = sessions_in(line)[:sessions_in(line).index(honest)]
        assert ahead.count(flooder) == 1, sessions_in(line)


def test_a_class_of_five_behind_one_address_all_queue_and_share_its_turn(served):
    """Five students behind one school address each queue a training (before: 1 queued, 4 refused); a student of
    another address that joins after them waits behind one of them, not five."""
    demo, url, config = served
    index, school = fn_index(config, "train"), "198.51.100.7"
    students, other = [new_session() for _ in range(5)], new_session()
    with paused(demo, url, config, "train", "train", BAD_TRAINING) as line:
        assert [join(url, index, BAD_TRAINING, s, school).status_code for s in students] == [200] * 5
        assert join(url, index, BAD_TRAINING, students[0], school).status_code == 422  # one per browser
        assert join(url, index, BAD_TRAINING, other, "192.0.2.1").status_code == 200
        assert sessions_in(line).index(other) == 1, sessions_in(line)


def test_new_sessions_from_ten_addresses_cannot_lock_an_honest_student_out(served):
    """New session ids from 10 addresses, as many as the line takes: an honest student of an 11th address still
    gets a place (a full line gives it one of an address holding more), and waits behind at most one request per
    other address (before: refused, every time). The addresses ask at once, each waiting for its answers (a refused
    address waits longer for each refusal: server.backoff)."""
    demo, url, config = served
    index, honest = fn_index(config, "train"), new_session()
    flood = [f"203.0.113.{10 + i}" for i in range(10)]
    with paused(demo, url, config, "train", "train", BAD_TRAINING) as line:
        with ThreadPoolExecutor(len(flood)) as pool:  # each address asks in turn, as fast as it is answered
            codes = sum(pool.map(lambda a: [join(url, index, BAD_TRAINING, new_session(), a).status_code
                                            for _ in range(10)], flood), [])
        assert len(line.queue) <= QUEUE_WAITING["train"] and 422 in codes
        per_address = [sum(client_of(e)[0] == a for e in line.queue) for a in flood]
        assert max(per_address) <= ADDRESS_WAITING["train"]
        assert join(url, index, BAD_TRAINING, honest, "192.0.2.9").status_code == 200
        assert sessions_in(line).index(honest) <= 10, sessions_in(line)


def test_a_full_line_tells_the_request_that_made_room_why(served):
    """A busy address holds three of a full line; a newcomer of an address holding none takes the place of the busy
    address's last served, and that request ends with a message saying why (it was not left waiting)."""
    demo, url, config = served
    index, busy = fn_index(config, "train"), "203.0.113.50"
    with paused(demo, url, config, "train", "train", BAD_TRAINING) as line:
        for _ in range(2):
            assert join(url, index, BAD_TRAINING, new_session(), busy).status_code == 200
        job = api_client(url, headers={"X-Forwarded-For": busy}).submit(*BAD_TRAINING[:11], api_name="/train")
        assert wait_for(lambda: len(line.queue) >= 3), sessions_in(line)
        while len(line.queue) < QUEUE_WAITING["train"]:
            assert join(url, index, BAD_TRAINING, new_session(), f"203.0.113.{60 + len(line.queue)}").status_code \
                == 200
        newcomer = new_session()
        assert join(url, index, BAD_TRAINING, newcomer, "192.0.2.77").status_code == 200
        assert newcomer in sessions_in(line) and len(line.queue) == QUEUE_WAITING["train"]
        with pytest.raises(Exception, match="made room"):
            job.result(timeout=60)


@contextlib.contextmanager
def gated(demo, index: int):
    """The Show-attention handler, made to wait at a gate while its input starts with "flood" (the flooder's slow
    requests, running as long as the test wants); yields (the gate, the inputs of the calls started, in order)."""
    fn, gate, started = demo.fns[index], threading.Event(), []
    original = fn.fn

    @functools.wraps(original)  # gradio reads the handler's parameters (its gr.Request) through __wrapped__
    def waiting(ckpt, text, *args, **kwargs):
        started.append(text)
        if text.startswith("flood"):
            gate.wait(300)
        return original(ckpt, text, *args, **kwargs)

    fn.fn = waiting
    try:
        yield gate, started
    finally:
        gate.set()
        fn.fn = original
        line = demo._queue.event_queue_per_concurrency_id.get("attention")
        # the flood's requests run (on `reverse`, short inputs: quickly) and the line is empty
        wait_for(lambda: line is None or not (line.queue or line.current_concurrency))


@pytest.mark.parametrize("flooder", ["one browser", "an address inventing browsers"])
def test_an_honest_request_starts_while_the_flooders_run(served, flooder):
    """A flooder has Show-attention requests running (held at a gate) and waiting: an honest client's request starts
    while they still run, in a place the flooder could not take; the flooder runs no more than its browser's bound
    (one browser, on loopback: every local page's address, which has no address bound) or its address's (browsers
    invented behind one address). Before: the flooder's requests took all 4 places and the honest one waited for
    one of them to end (here: it never started while the gate was shut)."""
    demo, url, config = served
    index, honest = fn_index(config, "attention"), new_session()
    browser_bound, address_bound = running_bounds("attention", ATTENTION_CONCURRENCY)
    if flooder == "one browser":
        session, bound = new_session(), browser_bound
        joins = [(session, None)] * (browser_bound + 3)
    else:
        bound = address_bound
        joins = [(new_session(), "198.51.100.23") for _ in range(address_bound + 2)]
    with gated(demo, index) as (gate, started):
        for i, (session, address) in enumerate(joins):
            assert join(url, index, attention_data(f"flood {i}"), session, address).status_code == 200
        assert wait_for(lambda: len(started) >= bound), started
        assert join(url, index, attention_data("honest"), honest).status_code == 200  # loopback: another address
        assert wait_for(lambda: "honest" in started), f"the honest request did not start; started: {started}"
        assert not gate.is_set()
        assert sum(text.startswith("flood") for text in started) == bound, started


def test_a_client_refused_again_and_again_waits_for_each_refusal_while_others_are_answered(served, monkeypatch):
    """A flooder holding its waiting places asks again and again: its first refusal is answered at once, each next
    one only after server.backoff's wait (limits.REFUSAL_BACKOFF: first, then twice that), and while a refusal
    waits an honest client's request joins. The wait is held here until the honest request has joined (an order,
    not a duration). Before: every refusal was answered at once, so the flooder's threads spun (bench/hostile_load.py:
    34 refused joins a second, each 6 ms of the server's CPU on its one event loop; bench/flood_parts.py)."""
    from server.admission import BACKOFF

    demo, url, config = served
    index, flooder, honest = fn_index(config, "attention"), new_session(), new_session()
    asked, release = [], threading.Event()

    async def held(seconds):
        asked.append(seconds)
        while not release.is_set():
            await asyncio.sleep(0.01)

    monkeypatch.setattr(BACKOFF, "sleep", held)
    with paused(demo, url, config, "attention", "attention", attention_data("warm")):
        for i in range(BROWSER_WAITING.get("attention", DEFAULT_BROWSER_WAITING)):
            assert join(url, index, attention_data(f"flood {i}"), flooder).status_code == 200
        assert join(url, index, attention_data("flood again"), flooder).status_code == 422 and asked == []
        with ThreadPoolExecutor(1) as pool:
            waiting = pool.submit(join, url, index, attention_data("flood again"), flooder)
            assert wait_for(lambda: len(asked) == 1), "the second refusal in a row did not wait"
            assert join(url, index, attention_data("honest"), honest).status_code == 200
            assert not waiting.done()
            release.set()
            assert waiting.result(timeout=60).status_code == 422
        assert join(url, index, attention_data("flood again"), flooder).status_code == 422
        assert asked == [REFUSAL_BACKOFF["first"], 2 * REFUSAL_BACKOFF["first"]]
