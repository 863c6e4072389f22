"""Fair queues: one client's flood of training requests cannot make Stop or the views answer "Queue is full" for
everyone, and a client has at most one training queued or running; a waiting training sees its place in line.

Regression (issue 18, item 2): gradio's queue limit counted every endpoint together, so two trainings plus 256
cheap training requests made every endpoint, Stop included, answer 503 "Queue is full" to everyone for minutes;
owners could not stop their own runs. Bounded: the trainings are stopped at the end, the flood's requests are
invalid (they fail at once when they run), and everything talks to 127.0.0.1.

The flood's bound is read where it holds: the training line's waiting requests, in-process, after each join (the
only change a sequential flood makes to the line). Counting the flood's accepted joins measured it only while both
trainings held both places: a training that ended (LONG's 5,000 small steps took 48 s alone) let the flood's
requests start and fail, each freeing a place in the line for another join, so 69 (and, with 300-step trainings,
283) were accepted by a line that never held more than 64."""
from __future__ import annotations

import uuid

import httpx
import pytest
from gradio_client.utils import Status

from tests.app_server import api_client, streaming, wait_for

from limits import QUEUE_WAITING, TRAINING_GROUP

FLOOD = 300  # more than gradio's old shared limit (256)
# Minutes, unless stopped (limits.TRAINING["seconds"], 300 s, at most): 2 layers, d_model 128, batches of 64 reached
# step 56 of 5,000 in 25 s at load 12; 1 layer of 32 in batches of 8 (before) ran its 5,000 steps in 48 s alone
LONG = ("task", "reverse", "", None, "", 2, 4, 128, 3e-3, 5000, 64)


@pytest.fixture(scope="module")
def served():
    from tests.app_server import serve_demo

    with serve_demo() as (demo, url):
        yield demo, url


@pytest.fixture(scope="module")
def app_url(served):
    return served[1]


def fn_index(url: str, api_name: str) -> int:
    config = httpx.get(url + "config", timeout=30).json()
    return next(d["id"] for d in config["dependencies"] if d.get("api_name") == api_name.lstrip("/"))


def join(url: str, index: int, data: list, session: str) -> int:
    """Ask to join the queue as a raw client would; the HTTP status (200 queued, 422 refused, 503 full)."""
    body = {"data": data, "fn_index": index, "session_hash": session, "event_data": None, "trigger_id": None}
    return httpx.post(url + "gradio_api/queue/join", json=body, timeout=30).status_code


def test_a_flood_of_training_requests_leaves_stop_and_views_answering(served):
    """Invariant: while two trainings run, the training line never holds more than limits.QUEUE_WAITING of the
    flood waiting (read after each join), the flood reaches that bound and is refused past it (422, never 503), and
    Stop and a view answer at once."""
    demo, app_url = served
    line = demo._queue.event_queue_per_concurrency_id
    owners = [api_client(app_url) for _ in range(2)]
    jobs = [owner.submit(*LONG, api_name="/train") for owner in owners]
    try:
        for job in jobs:
            streaming(job)
        index = fn_index(app_url, "/train")
        bad = ["task", "reverse", "", None, "", 1, 3, 32, 3e-3, 10, 8, "mha", "sinusoidal"]  # 3 heads: invalid
        codes, waiting = [], []
        for _ in range(FLOOD):
            codes.append(join(app_url, index, bad, uuid.uuid4().hex[:10]))
            waiting.append(len(line[TRAINING_GROUP].queue))
        print({c: codes.count(c) for c in set(codes)}, "most waiting:", max(waiting))
        assert not any(job.done() for job in jobs), "a training ended during the flood: its requests could start"
        assert codes.count(503) == 0, "the flood filled the queue"
        assert max(waiting) == QUEUE_WAITING[TRAINING_GROUP], f"{max(waiting)} requests waited in the training line"
        assert codes.count(422) == FLOOD - QUEUE_WAITING[TRAINING_GROUP], codes
        other = api_client(app_url)
        answer = other.predict(api_name="/stop")  # answered at once, not "Queue is full"
        assert "Nothing is training" in answer, answer  # in the status since 011b831 (issue 29, item 3)
        # answered while the flood still waits: Stop does not wait in the training line (an order, not a duration)
        still_waiting = len(line[TRAINING_GROUP].queue)
        assert other.predict("reverse", "attention", "", api_name="/attention") is not None
        owners[0].predict(api_name="/stop")  # an owner stops their own run while the flood waits
        assert "stopped" in jobs[0].result()[1]
        assert still_waiting == QUEUE_WAITING[TRAINING_GROUP], f"Stop answered once {still_waiting} waited"
    finally:
        for owner, job in zip(owners, jobs):
            if not job.done():
                try:
                    owner.predict(api_name="/stop")
                except Exception:  # noqa: BLE001  (already stopped)
                    pass
        for job in jobs:
            job.result(timeout=120)


def test_one_training_per_client_and_a_waiting_one_sees_its_place(app_url):
    """A second training from the same client is refused with a message while its first runs; a training from
    another client, waiting behind two, sees its rank in the queue."""
    clients = [api_client(app_url) for _ in range(3)]
    jobs = [c.submit(*LONG, api_name="/train") for c in clients[:2]]
    waiting = None
    try:
        for job in jobs:
            streaming(job)
        second = clients[0].submit(*LONG, api_name="/train")
        with pytest.raises(ValueError, match="already have a training"):
            second.result(timeout=60)
        waiting = clients[2].submit(*LONG, api_name="/train")
        wait_for(lambda: waiting.status().code == Status.IN_QUEUE)
        status = waiting.status()
        assert status.code == Status.IN_QUEUE and status.rank is not None and status.queue_size >= 1
    finally:
        if waiting is not None:
            waiting.cancel()
        for c in clients[:2]:
            try:
                c.predict(api_name="/stop")
            except Exception:  # noqa: BLE001
                pass
        for job in jobs:
            job.result(timeout=120)
