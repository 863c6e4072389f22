"""What the server spends per request, apart from the request's own work: nothing for a dashboard nobody sees, no
config of the whole page for a new session, no search for a module that is not installed.

Regressions (issue 30, what was left of the flooder's cost, and of honest Show attention's p95 under the hostile
load; py-spy in bench/RESULTS.md): after every event, gradio's queue rebuilt a pandas DataFrame of its last 10,000
events for its monitoring summary (7-12 ms of CPU each, 20-38% of the server's Python time under a classroom's
load), and its /monitoring routes were open; a request naming a new session id made gradio build the config of
every component of the page on its event loop (~30 ms of CPU; 13% of the event loop's samples under the hostile
load, whose training floods name a new session id with every request); gradio looked for matplotlib twice per call
and for bokeh once per Plot config, searching sys.path each time (5% of the event loop's samples). Invariants, not
timings: the DataFrames the queue builds while the app answers requests (0), the event records it keeps (0), the
monitoring routes' answer (403), the component configs built for a new session's call (at most its inputs' and
outputs'), equal to gradio's own, the module lookups per call (0). Loopback only."""
from __future__ import annotations

import sys

import httpx
import pytest
from gradio.blocks import BlocksConfig
from gradio.queueing import Queue
from gradio.state_holder import SessionState

from server.optional_modules import LOOKED_FOR
from server.session_state import PageSession

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


def test_a_new_session_builds_the_configs_of_its_calls_components_only(served, monkeypatch):
    """A Show attention from a new session: gradio built the config of each of the page's components (502) when
    the session was made; now only those its call reads and writes, each at most twice (gradio builds one when it
    files an updated component in the session, one when it first records a value there; 19 for its 15; before:
    502 more)."""
    demo, url = served
    client = api_client(url)  # its /config is read here, before the count
    built = []
    config_for_block = BlocksConfig.config_for_block

    def counted(_id, *args, **kwargs):
        built.append(_id)
        return config_for_block(_id, *args, **kwargs)

    monkeypatch.setattr(BlocksConfig, "config_for_block", staticmethod(counted))
    client.predict("reverse", "attention", "", api_name="/attention")
    fn = next(f for f in demo.fns.values() if f.api_name == "attention")
    assert client.session_hash in demo.state_holder.session_data
    assert len(built) <= 2 * (len(fn.inputs) + len(fn.outputs)) < len(demo.blocks), \
        f"{len(built)} component configs built for one call of a new session ({len(demo.blocks)} on the page)"


def test_a_session_built_on_demand_reads_what_gradio_would_have_built(served):
    """The oracle: gradio's own SessionState of the page. Every config a PageSession gives when read is the one
    gradio built up front; one that a call replaced stays replaced, one removed stays removed."""
    demo, _ = served
    gradio_s, ours = SessionState(demo), PageSession(demo)
    some, other = list(gradio_s.config_values)[:2]
    assert len(ours.config_values) == len(gradio_s.config_values) and some in ours.config_values
    assert ours.config_values[some] == gradio_s.config_values[some]
    ours.config_values[other] = {"replaced": True}
    assert ours.config_values.pop(some) == gradio_s.config_values[some] and some not in ours.config_values
    assert dict(ours.config_values.items()) == {**{k: v for k, v in gradio_s.config_values.items() if k != some},
                                                other: {"replaced": True}}


def test_no_call_searches_for_a_module_that_is_not_installed(served, monkeypatch):
    """Three Show attentions and three redraws from a new session: no import system lookup of matplotlib or
    bokeh (before: gradio searched sys.path for matplotlib twice per call, for bokeh once per Plot config)."""
    _, url = served
    looked = []

    class Watcher:
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name.split(".")[0] in LOOKED_FOR:
                looked.append(name)
            return None  # the next finder decides

    monkeypatch.setattr(sys, "meta_path", [Watcher(), *sys.meta_path])
    client = api_client(url)
    for text in ("attention", "transformer", "attention"):
        client.predict("reverse", text, "", api_name="/attention")
        client.predict("cross", 0, 0, "entropy", api_name="/draw_attention")
    assert looked == [], f"{len(looked)} module lookups: {looked[:4]}"
