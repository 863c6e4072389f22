"""What the server spends per request, apart from the request's own work: nothing for a dashboard nobody sees.

Regression (issue 30, what was left of the flooder's cost): after every event, gradio's queue rebuilt a pandas
DataFrame of its last 10,000 events for its monitoring summary (7-12 ms of CPU each, 20-38% of the server's Python
time under a classroom's load, py-spy in bench/RESULTS.md), and its /monitoring routes were open. Invariants, not
timings: the number of DataFrames the queue builds while the app answers requests (0), the event records it keeps
(0), and the monitoring routes' answer (403). Loopback only."""
from __future__ import annotations

import httpx
import pytest
from gradio.queueing import Queue

from tests.app_server import api_client, serve_demo


@pytest.fixture(scope="module")
def served():
    with serve_demo() as served:
        yield served


def test_no_analytics_summary_is_computed_per_event(served, monkeypatch):
    """Three Show-attention calls and three redraws: the queue builds no DataFrame of its events and keeps no
    record of them (before: one DataFrame per event, of up to 10,000 records)."""
    demo, url = served
    built = []
    get_df = Queue._get_df

    def counted(records):
        built.append(len(records))
        return get_df(records)

    monkeypatch.setattr(Queue, "_get_df", staticmethod(counted))
    client = api_client(url)
    for text in ("attention", "transformer", "attention"):
        client.predict("reverse", text, "", api_name="/attention")
        client.predict("cross", 0, 0, "entropy", api_name="/draw_attention")
    assert built == [], f"the queue built {len(built)} DataFrames of its events (of {built} records)"
    assert len(demo._queue.event_analytics) == 0


def test_the_monitoring_routes_are_closed(served):
    """gradio opens /monitoring unless told otherwise: its summary of every function's traffic (before: 200)."""
    _, url = served
    for path in ("monitoring", "monitoring/summary"):
        assert httpx.get(url + path, timeout=30).status_code == 403, path
