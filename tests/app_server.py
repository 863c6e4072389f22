"""Start the real app (app.launch, as `python app.py` does) on 127.0.0.1 for the app-API and browser tests."""
from __future__ import annotations

import contextlib
from pathlib import Path


UNREACHED = "localhost is not accessible"  # gradio's launch: the new server did not answer its one check in time
# gradio_client's HTTP calls (the config, joining the queue, uploads) give up after httpx's 5 s by default: on a loaded
# CI machine an app in the test's own process has been seen to answer later (httpx.ReadTimeout before any assertion).
# The stream of a call's updates carries gradio's heartbeat every 15 s, well inside this bound.
HTTP_TIMEOUT_S = 60


# How long a test waits for a condition on a running app before it fails: a training waits its turn in the training
# line behind the other runs of the test process, and a loaded 2-core machine runs it slowly. The wait ends as soon
# as the condition holds, so a longer bound only delays a failure.
WAIT_S = 300


def wait_for(condition, seconds: float = WAIT_S) -> bool:
    """Poll `condition()` until it holds or `seconds` have passed; its last value."""
    import time

    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


def streaming(job, updates: int = 1, seconds: float = WAIT_S) -> None:
    """Wait until the gradio_client `job` (a streaming call) has sent `updates` updates and is still running; fail
    saying so. A Stop sent before then would find nothing training and the run would go on to its end."""
    assert wait_for(lambda: len(job.outputs()) >= updates or job.done(), seconds), (
        f"{len(job.outputs())} updates after {seconds} s: {job.status()}")
    assert not job.done(), f"the run ended before it was stopped: {job.outputs()[-1:]}"


def api_client(url: str, cookies: dict | None = None, **kwargs):
    """A gradio_client Client of the app at `url` (quiet) whose HTTP calls wait up to HTTP_TIMEOUT_S for an answer
    and carry `cookies` (a browser's key: store.sessions.KEY_COOKIE); `kwargs` go to Client (headers, ...)."""
    from gradio_client import Client

    return Client(url, verbose=False, httpx_kwargs={"timeout": HTTP_TIMEOUT_S, "cookies": dict(cookies or {})},
                  **kwargs)


def launch_local(tries: int = 3):
    """(demo, url) of the app started on 127.0.0.1 on a free port. gradio's launch asks the new server for its page
    once, with a 3 s timeout, and gives up when a loaded machine (the suite runs in two processes) answers later: the
    app (closed by app.launch) is then started again, up to `tries` times."""
    import app

    for attempt in range(tries):
        try:
            demo, (_, url, _) = app.launch(server_name="127.0.0.1", server_port=None, prevent_thread_lock=True,
                                           quiet=True)
            return demo, url
        except ValueError as e:
            if UNREACHED not in str(e) or attempt == tries - 1:
                raise


SERVING: list = []  # the apps serve_demo runs now, the latest last


@contextlib.contextmanager
def serve_demo():
    """Yield (demo, local URL) of a running app; close it afterwards."""
    demo, url = launch_local()
    SERVING.append(demo)
    try:
        yield demo, url
    finally:
        SERVING.remove(demo)
        demo.close()


def running_app():
    """The gr.Blocks of the app serve_demo started last and still runs (a test reaches its queue's lines)."""
    assert SERVING, "no app is running in this process"
    return SERVING[-1]


def server_state(stack_lines: int = 12) -> str:
    """What the apps this process serves are doing, for a failed test's report: per line (concurrency group) the
    requests running and waiting (their function, session and seconds since they joined), and the stack of every
    thread inside the project's code (a computation stuck or slow is there). Empty when no app runs here."""
    import sys
    import threading
    import time
    import traceback

    root = str(Path(__file__).resolve().parent.parent)
    said = []
    for demo in SERVING:
        queue = demo._queue
        now = time.monotonic()

        def name(event) -> str:
            fn = getattr(event.fn, "name", None) or getattr(getattr(event.fn, "fn", None), "__name__", "?")
            return f"{fn}[{event.session_hash[:6]} {now - event.enqueue_time:.1f}s]"
        for group, line in queue.event_queue_per_concurrency_id.items():
            running = [name(e) for job in queue.active_jobs if job for e in job if e.concurrency_id == group]
            if running or line.queue:
                said.append(f"line {group}: running {running}, waiting {[name(e) for e in line.queue]}")
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    for ident, frame in sys._current_frames().items():
        stack = [f for f in traceback.extract_stack(frame) if f.filename.startswith(root)
                 and "/tests/" not in f.filename]
        if stack:
            said.append(f"thread {names.get(ident, ident)}: " + " <- ".join(
                f"{Path(f.filename).relative_to(root)}:{f.lineno} {f.name}" for f in reversed(stack[-stack_lines:])))
    return "\n".join(said)


@contextlib.contextmanager
def serve_app():
    """Yield the local URL of a running app; close it afterwards."""
    with serve_demo() as (_, url):
        yield url


@contextlib.contextmanager
def serve_app_with_hub_cache(cache):
    """serve_app with HF_HUB_CACHE set to `cache` (a Hugging Face hub cache of test models): the app lists and
    loads the pretrained models found there. The catalogue's caches are cleared before and after."""
    import os

    from store import catalogue

    saved = os.environ.get("HF_HUB_CACHE")
    os.environ["HF_HUB_CACHE"] = str(cache)
    catalogue.pretrained.cache_clear()
    catalogue.pretrained_model.cache_clear()
    try:
        with serve_app() as url:
            yield url
    finally:
        if saved is None:
            os.environ.pop("HF_HUB_CACHE", None)
        else:
            os.environ["HF_HUB_CACHE"] = saved
        catalogue.pretrained.cache_clear()
        catalogue.pretrained_model.cache_clear()


def join_and_wait(url: str, fn_index: int, data: list, session: str, cookies: dict | None = None,
                  timeout: float = HTTP_TIMEOUT_S) -> dict:
    """Call the function `fn_index` of the app at `url` as the page does (a queue join, then its session's stream
    read until the call completes); returns the join's refusal ({"status": code, "detail": ...}) or the completed
    message (its `success` and `output`)."""
    import json

    import httpx

    with httpx.Client(base_url=url, timeout=timeout, cookies=cookies or {}) as http:
        joined = http.post("gradio_api/queue/join", json={"data": data, "event_data": None, "fn_index": fn_index,
                                                          "trigger_id": None, "session_hash": session})
        if joined.status_code != 200:
            return {"status": joined.status_code, "detail": joined.text[:300]}
        with http.stream("GET", "gradio_api/queue/data", params={"session_hash": session}) as stream:
            for line in stream.iter_lines():
                if line.startswith("data:"):
                    message = json.loads(line[5:])
                    if message.get("msg") == "process_completed":
                        return message
    return {"status": None, "detail": "the stream ended before the call completed"}
