"""The one lifecycle of a Train-tab run, shared by Start, Compare and Watch: the device it trains on, how often it
sends an update, and everything around it (`TabRun`): its name reserved in the store with the client's address, its
Stop attached to the session, the model put in the store, the name released when no model came, and the freed
memory given back to the system. No gradio here."""
from __future__ import annotations

import time

from limits import TRAINING
from store import gpu, sessions
from store.clients import client_address
from store.memory import return_freed_memory
from tabs.train.stop_signal import StopSignal


def training_device():
    """The device every run of the Train tab trains on: the app's one device rule (store.gpu.DEVICE), read when the
    run is built (in the ZeroGPU worker there)."""
    return gpu.DEVICE


class Throttle:
    """At most `per_second` updates a second: `due()` is True at its first call, then once 1 / per_second seconds
    have passed since it was last True; `due(force=True)` is True at once (a moment a run must show) and counts as
    an update."""

    def __init__(self, per_second: float = TRAINING["updates_per_second"]):
        self.period, self._last = 1 / per_second, None

    def due(self, force: bool = False) -> bool:
        now = time.perf_counter()
        if force or self._last is None or now - self._last >= self.period:
            self._last = now
            return True
        return False


class TabRun:
    """One run of the Train tab, as a context manager: `with TabRun(store, key, task, call=request) as run:`.

    On entry: a StopSignal (`run.control`) attached to the call's session (store.sessions: Stop finds it even when
    gradio has let the session's state go) and, when the run makes a model (`store` given), its name (`run.name`)
    reserved in `store` for browser `key` with the client's address (store.clients: fair eviction counts a
    client's models by it). `run.keep(model, tokenizer, info)` puts the model in the store under that name. On exit,
    however the run ended: Stop detached, the signal discarded, the name released if no model was kept, and the
    run's freed memory (activations, optimiser state) given back to the system."""

    def __init__(self, store=None, key: str = "", task: str | None = None, *, call=None):
        self.store, self.key, self.task, self.call = store, key, task, call
        self.name, self.control, self.kept = None, None, False

    def __enter__(self) -> "TabRun":
        if self.store is not None:
            self.name = self.store.reserve(self.key, self.task, client_address(self.call))
        self.control = StopSignal()
        sessions.attach_run(self.call, self.control)
        return self

    def keep(self, model, tokenizer, info: dict) -> list[str]:
        """Put the run's model in the store under its reserved name; the names it evicted from this browser."""
        dropped = self.store.put(self.key, self.name, model, tokenizer, info)
        self.kept = True
        return dropped

    def __exit__(self, *exc) -> None:
        sessions.detach_run(self.call, self.control)
        self.control.discard()
        if self.name is not None and not self.kept:
            self.store.release(self.key, self.name)
        return_freed_memory()
