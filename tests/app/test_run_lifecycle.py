"""The Train tab's three runs (Start, Compare, Watch) share one lifecycle (tabs.train.lifecycle): the device they
train on, the throttle of their updates, and what is around them (store slot with the client's address, Stop,
release, memory).

Regressions (issue 26, item 2): with the device rule answering a non-CPU device, Compare and Watch built their
models on the CPU (compare_variants and build_run were not given a device); Watch reserved its store slot without the
client's address, so a flooder's watched models counted as one client per session and fair eviction took another
client's model first."""
from __future__ import annotations

from types import SimpleNamespace

import torch

import store.gpu
from store import sessions
from store.user_models import UserModels
from tabs.train import lifecycle, watch
from tabs.train.comparison import run_comparison_session
from tabs.train.request import TrainingRequest
from tabs.train.session import run_training_session
from tabs.train.stop_signal import StopSignal
from tabs.train.watch import WATCH, WatchProgress, run_watch, watch_stream
from transformer import Transformer


def request(**kw):
    base = dict(source="task", task="reverse", text=None, upload=None, hub=None, layers=1, heads=4, d_model=16,
                lr=3e-3, steps=10, batch_size=8)
    return TrainingRequest(**{**base, **kw})


def test_every_run_trains_on_the_device_the_rule_answers(monkeypatch):
    """Invariant: with store.gpu.DEVICE answering `meta` (as a GPU would answer cuda), every model Start, Compare and
    Watch build is asked onto `meta`. Transformer.to records what it is asked and moves the model to the CPU, so
    the runs still train here."""
    asked = []
    to = Transformer.to

    def record(self, *args, **kwargs):
        device = kwargs.get("device", args[0] if args else None)
        if isinstance(device, (str, torch.device)):
            asked.append(torch.device(device))
            return to(self, "cpu")
        return to(self, *args, **kwargs)

    monkeypatch.setattr(store.gpu, "DEVICE", torch.device("meta"))
    monkeypatch.setattr(Transformer, "to", record)
    runs = {
        "start": lambda: list(run_training_session(request(), UserModels(), "k")),
        "compare": lambda: list(run_comparison_session(request(), "kv-heads", control=StopSignal())),
        "watch": lambda: list(watch_stream(StopSignal(), steps=WATCH["eval_every"])),
    }
    devices = {}
    for name, run in runs.items():
        asked.clear()
        run()
        devices[name] = set(asked)
    assert devices == {"start": {torch.device("meta")}, "compare": {torch.device("meta")},
                       "watch": {torch.device("meta")}}


def call(host: str, session: str):
    """A gradio request as the handlers see it: the client's address and its session."""
    return SimpleNamespace(client=SimpleNamespace(host=host), headers={}, session_hash=session)


def fake_watch(control):
    """watch_on_gpu's stream cut to its last update: a finished run and its (tiny) model."""
    yield WatchProgress("<svg/>", "done", None, 1, 1, "finished", torch.nn.Linear(2, 2), None, {})


def test_a_watched_model_is_evicted_by_address_like_the_others(monkeypatch):
    """Oracle: store.user_models' rule on addresses (tests/reliability/test_fair_eviction.py): a flooder watching
    from six sessions of one address is one client; when the store is full one of its own models goes, not the
    model of a client that holds one (here, the model used longest ago: counted per session, it would go)."""
    store = UserModels(max_models=6)
    monkeypatch.setattr(watch, "USER_MODELS", store)
    monkeypatch.setattr(watch, "watch_on_gpu", fake_watch)
    victim_call = call("198.51.100.7", "svictim")
    list(run_watch(victim_call))  # first: its model is the one used longest ago (issue 30's eviction by use)
    victim = store.names(sessions.browser_key(victim_call))  # an API client's models are its session's (issue 30)
    floods = [call("203.0.113.9", f"sflood{i}") for i in range(6)]
    for flood in floods:
        list(run_watch(flood))
    assert len(victim) == 1 and store.names(sessions.browser_key(victim_call)) == victim
    assert len(store) == 6 and sum(len(store.names(sessions.browser_key(f))) for f in floods) == 5  # its own went


def test_a_run_holds_its_slot_and_stop_and_lets_them_go(monkeypatch):
    """Invariant of TabRun: while it runs, its name is reserved with the client's address and its Stop is the
    session's; after it (here, ended by an error before any model), Stop is detached, the signal discarded, the
    name released, and freed memory returned."""
    returned = []
    monkeypatch.setattr(lifecycle, "return_freed_memory", lambda: returned.append(True))
    store, request_ = UserModels(), call("192.0.2.5", "s-run")
    try:
        with lifecycle.TabRun(store, "k", "reverse", call=request_) as run:
            browser = store._browsers["k"]
            assert run.name in browser.models and browser.client == "192.0.2.5"
            assert sessions.run_of(request_) is run.control and not run.control.is_set()
            raise RuntimeError("the run failed")
    except RuntimeError:
        pass
    assert run.name not in browser.models and sessions.run_of(request_) is None and returned == [True]
    assert run.control.is_set()  # discarded: a late Stop finds nothing to stop


def test_the_throttle_lets_one_update_through_per_period(monkeypatch):
    """Oracle: a hand-driven clock. At 2 a second: the first call passes, then nothing until 0.5 s after the last
    that passed; a forced one passes at once and restarts the period."""
    now = [100.0]
    monkeypatch.setattr(lifecycle.time, "perf_counter", lambda: now[0])
    throttle = lifecycle.Throttle(per_second=2)
    passed = []
    for t, force in [(100.0, False), (100.2, False), (100.49, False), (100.5, False), (100.6, True), (100.9, False),
                     (101.1, False)]:
        now[0] = t
        passed.append(throttle.due(force))
    assert passed == [True, False, False, True, True, False, True]
