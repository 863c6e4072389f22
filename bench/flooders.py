"""The hostile clients of issue 30 and the honest ones they must not hurt, for bench/hostile_load.py (loopback only:
every request goes to the app's 127.0.0.1 URL; "addresses" are X-Forwarded-For values the app trusts only with
ATTENTION_LAB_TRUST_FORWARDED=1, which hostile_load sets for the app it starts).

- attention_flood: one client (one session) keeps `in_flight` Show-attention requests of distinct 2,000-character
  translate-en-es inputs (nothing cached) going, as fast as the app answers or refuses them.
- training_flood: raw queue joins of short trainings, each from a new session id, from one or more addresses.
- Student: a training from a browser behind an address (a class of 5 shares one), timed from its join to its first
  update, with the place in line the app told it first and its session (to find its run in the server's record).
"""
from __future__ import annotations

import random
import string
import threading
import time
import uuid

import httpx

SHORT = ("task", "reverse", "", None, "", 1, 4, 32, 3e-3, 60, 8)  # a few seconds: the flood's and the students' runs


def fn_index(url: str, api_name: str) -> int:
    config = httpx.get(url + "config", timeout=30).json()
    return next(d["id"] for d in config["dependencies"] if d.get("api_name") == api_name)


def count(counts: dict, what, lock: threading.Lock) -> None:
    with lock:
        counts[what] = counts.get(what, 0) + 1


def attention_flood(url: str, end: float, counts: dict, in_flight: int = 16, chars: int = 2000,
                    most: int | None = None) -> list[threading.Thread]:
    """Threads sharing one session, each sending a new input of `chars` characters as soon as its last is answered
    or refused (past the Textbox's 2,000, every one is refused at the door); each sends at most `most`."""
    from load import make_client

    client, lock = make_client(url, 120), threading.Lock()

    def one(seed: int):
        rng, sent = random.Random(seed), 0
        while time.perf_counter() < end and (most is None or sent < most):
            sent += 1
            text = " ".join("".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9)))
                            for _ in range(chars))[:chars]
            try:
                client.predict("translate-en-es", text, "", api_name="/attention")
                count(counts, "attention flood answered", lock)
            except Exception as e:  # noqa: BLE001  (refusals are what the flooder gets, and counts)
                count(counts, f"attention flood {type(e).__name__}", lock)
                time.sleep(0.05)

    return [threading.Thread(target=one, args=(i,), daemon=True) for i in range(in_flight)]


def training_flood(url: str, end: float, counts: dict, addresses: list[str], label: str) -> threading.Thread:
    """A thread joining short trainings from new session ids, cycling through `addresses`, as fast as it can."""
    index, lock = fn_index(url, "train"), threading.Lock()
    data = list(SHORT) + ["mha", "sinusoidal"]

    def run():
        n = 0
        with httpx.Client(timeout=30) as http:
            while time.perf_counter() < end:
                body = {"data": data, "fn_index": index, "session_hash": uuid.uuid4().hex[:10], "event_data": None,
                        "trigger_id": None}
                headers = {"x-forwarded-for": addresses[n % len(addresses)]}
                count(counts, f"{label} {http.post(url + 'gradio_api/queue/join', json=body, headers=headers).status_code}",
                      lock)
                n += 1
                time.sleep(0.02)

    return threading.Thread(target=run, daemon=True)


class Student:
    """A training from a browser behind `address`: joined, first place in line it was told, started, ended."""

    def __init__(self, url: str, address: str):
        from gradio_client import Client
        from gradio_client.utils import Status

        self.address, self.rank, self.started, self.ended, self.error = address, None, None, None, None
        client = Client(url, verbose=False, download_files=False, analytics_enabled=False, ssl_verify=False,
                        headers={"X-Forwarded-For": address}, httpx_kwargs={"timeout": 600})
        self.session = client.session_hash
        self.joined = time.perf_counter()
        self.job = client.submit(*SHORT, api_name="/train")
        self._status = Status
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self):
        while not self.job.done():
            status = self.job.status()
            if self.rank is None and status.code == self._status.IN_QUEUE and status.rank is not None:
                self.rank = status.rank
            if self.started is None and (self.job.outputs() or status.code == self._status.ITERATING):
                self.started = time.perf_counter()
            time.sleep(0.05)
        try:
            self.job.result(timeout=5)
        except Exception as e:  # noqa: BLE001
            self.error = f"{type(e).__name__}: {str(e)[:100]}"
        self.started = self.started or time.perf_counter()
        self.ended = time.perf_counter()

    @property
    def wait(self) -> float:
        return (self.started or time.perf_counter()) - self.joined

    @property
    def run_time(self) -> float:
        return (self.ended or time.perf_counter()) - (self.started or time.perf_counter())
