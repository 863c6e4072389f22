"""No bearer secrets in reach: a session id opens nothing of a browser's, and the browser key is never taken from a
caller's data.

Regressions (issue 30, item 5): knowing a session id, a client stopped another's training and opened its models
(the session's state held the browser key); the private `adopt_browser_key` was callable through
/gradio_api/run/predict with any key, and restore_models then listed and opened that browser's models.

The page keeps its key in its local storage and sends it with each request as a cookie (set by its own load, in
the browser); here a client with that cookie is the page. Loopback only; the trainings are stopped at the end."""
from __future__ import annotations

import time
import uuid

import httpx
import pytest
from gradio_client import Client

from store.sessions import KEY_COOKIE
from tests.app_server import api_client, streaming

TINY = ("task", "reverse", "", None, "", 1, 4, 32, 3e-3, 10, 8)
LONG = ("task", "reverse", "", None, "", 1, 4, 32, 3e-3, 5000, 8)  # minutes, unless stopped


def page(url: str) -> tuple[Client, str]:
    """A client holding a browser's key, as the page does (its cookie)."""
    key = uuid.uuid4().hex
    return api_client(url, headers={"Cookie": f"{KEY_COOKIE}={key}"}), key


def thief(url: str, session: str) -> Client:
    """A client that knows a session id, and nothing else."""
    client = api_client(url)
    client.session_hash = session
    return client


def test_a_session_id_alone_opens_none_of_the_browsers_models(app_url):
    alice, _ = page(app_url)
    alice.predict(*TINY, api_name="/train")
    assert alice.predict("my reverse model #1", "abc", "", api_name="/attention") is not None
    with pytest.raises(Exception, match="unknown checkpoint"):  # opened it before
        thief(app_url, alice.session_hash).predict("my reverse model #1", "abc", "", api_name="/attention")


def test_no_function_takes_a_browser_key_from_a_callers_data(app_url):
    """Every function callable outside the queue is called with Alice's key as its data, from a new session: that
    session still opens none of Alice's models (before: fn adopt_browser_key made them its own)."""
    alice, key = page(app_url)
    alice.predict(*TINY, api_name="/train")
    mallory = api_client(app_url)
    config = httpx.get(app_url + "config", timeout=30).json()
    with httpx.Client(timeout=60) as http:
        for dep in config["dependencies"]:
            if dep.get("queue") is False and dep.get("backend_fn"):
                http.post(app_url + "gradio_api/run/predict", json={
                    "data": [key] * len(dep.get("inputs", [])), "fn_index": dep["id"],
                    "session_hash": mallory.session_hash, "event_data": None, "trigger_id": None})
    with pytest.raises(Exception, match="unknown checkpoint"):
        mallory.predict("my reverse model #1", "abc", "", api_name="/attention")


def test_stop_needs_the_browser_key_that_started_the_run(app_url):
    alice, _ = page(app_url)
    job = alice.submit(*LONG, api_name="/train")
    try:
        streaming(job)
        config = httpx.get(app_url + "config", timeout=30).json()
        stop = next(d["id"] for d in config["dependencies"] if d.get("api_name") == "stop")
        answer = httpx.post(app_url + "gradio_api/run/predict", timeout=30, json={  # stopped Alice's run before
            "data": [], "fn_index": stop, "session_hash": alice.session_hash, "event_data": None, "trigger_id": None})
        assert "Nothing is training" in answer.text, answer.text
        time.sleep(1)
        assert not job.done(), "a client knowing only the session id stopped the run"
        alice.predict(api_name="/stop")
        assert "Training stopped" in job.result(timeout=120)[1]
    finally:
        if not job.done():
            alice.predict(api_name="/stop")
            job.result(timeout=120)


@pytest.mark.parametrize("session", ["", "x" * 100_000, "../../x", "\u202eabcdef12", "abc def12", "ABCDEFGHIJ"],
                         ids=["empty", "100k", "path", "rtl", "space", "upper"])
def test_a_session_id_not_like_gradios_is_refused_with_a_message(app_url, session):
    """gradio's page makes session ids of 1-13 base-36 characters, gradio_client uuid4s; anything else is refused
    by the front door, naming the session id (before: queued, stored, or HTTP 500 for an empty one)."""
    body = {"data": ["reverse", "abc", "", None], "fn_index": 0, "session_hash": session, "event_data": None,
            "trigger_id": None}
    answer = httpx.post(app_url + "gradio_api/queue/join", json=body, timeout=30)
    assert answer.status_code == 400 and "session id" in answer.json()["detail"]
    answer = httpx.get(app_url + "gradio_api/queue/data", params={"session_hash": (session or "a/b")[:2000]}, timeout=30)
    assert answer.status_code == 400 and "session id" in answer.json()["detail"]


# the last as gradio_client makes them (uuid4); fixed, so that every pytest-xdist worker collects the same tests
@pytest.mark.parametrize("session", ["k3j4h5g6f7a", "a1", "2f1c9a4e-7b3d-4c58-9e6f-0a1b2c3d4e5f"])
def test_session_ids_like_gradios_pass(app_url, session):
    body = {"data": ["reverse", "abc", "", None], "fn_index": 0, "session_hash": session, "event_data": None,
            "trigger_id": None}
    assert httpx.post(app_url + "gradio_api/queue/join", json=body, timeout=30).status_code != 400
