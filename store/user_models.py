"""Models trained in the Train tab, kept per browser in a bounded server-side store (no gradio here).

A browser is known by a random key kept in its local storage (gr.BrowserState), so its models survive a page
reload. The store is bounded twice: each browser keeps its last `per_browser` models, and the store keeps at most
`max_models` models of all browsers together. When a new model would pass that, room is made fairly: a model goes
from the client holding the most (a client is the browser, or its address when the app knows it, so one address
with many sessions counts once), and among clients holding as many, the model used longest ago (trained or opened:
a flood's models are never opened again, a class opens its own, whether it came before the flood or after; issue
30: with the newest arrival losing, a flood that came first made 2 of 3 students evict each other). A browser whose
model went is told so, by name, when it asks for it. A model is kept for inference only: eval mode, no gradients, no optimiser. A name is
reserved when a run starts, so two runs never get the same name.
"""
from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from limits import BROWSERS_REMEMBERED, EVICTED_NAMES_KEPT, MODELS_PER_BROWSER, STORED_MODELS
from store.fair_room import fullest_oldest

PENDING = None  # the entry of a reserved name whose run has not finished


@dataclass
class _Browser:
    models: OrderedDict = field(default_factory=OrderedDict)  # name -> (model, tokenizer, info) or PENDING
    counters: dict = field(default_factory=dict)  # task -> last number given
    used: dict = field(default_factory=dict)  # name -> when it was last trained or opened (a tick of the store)
    client: str = ""  # the address it came from when known, else its key
    gone: OrderedDict = field(default_factory=OrderedDict)  # name -> why it is no longer kept (the last few)

    def finished(self) -> list[str]:
        return [n for n, v in self.models.items() if v is not PENDING]


class UserModels:
    def __init__(self, per_browser: int = MODELS_PER_BROWSER, max_models: int = STORED_MODELS):
        self.per_browser, self.max_models = per_browser, max_models
        self._browsers: OrderedDict[str, _Browser] = OrderedDict()
        self._lock = threading.Lock()
        self._ticks = itertools.count()

    def _browser(self, key: str, client: str | None = None) -> _Browser:
        if not isinstance(key, str) or not key:
            raise ValueError("this browser session has no key yet: reload the page")
        browser = self._browsers.get(key)
        if browser is None:
            browser = self._browsers[key] = _Browser(client=key)
            empty = [k for k, b in self._browsers.items() if not b.models and k != key]
            for old in empty[: max(0, len(self._browsers) - BROWSERS_REMEMBERED)]:
                del self._browsers[old]
        if client:
            browser.client = client
        self._browsers.move_to_end(key)
        return browser

    def _make_room(self, keep: tuple[str, str]) -> None:
        """Evict until at most max_models are kept: from the client holding the most, the model used longest ago."""
        while True:
            held = {(k, n) for k, b in self._browsers.items() for n in b.finished()}
            if len(held) <= self.max_models:
                return
            key, name = fullest_oldest(((b.client, b.used.get(n, -1), (k, n)) for k, b in self._browsers.items()
                                        for n in b.finished()), keep=keep)
            browser = self._browsers[key]
            del browser.models[name]
            self._forget(browser, name, f"“{name}” is no longer kept: the server keeps {self.max_models} trained "
                                        f"models for everyone together and made room for newer ones. Train it again "
                                        f"(the same settings give the same model).")

    def _forget(self, browser: _Browser, name: str, why: str) -> None:
        browser.gone[name] = why
        browser.used.pop(name, None)
        while len(browser.gone) > EVICTED_NAMES_KEPT:
            browser.gone.popitem(last=False)

    def why_gone(self, key: str, name: str) -> str | None:
        """Why a model this browser had is no longer kept, or None if it never had it (or it was long ago)."""
        with self._lock:
            browser = self._browsers.get(key) if isinstance(key, str) else None
            return browser.gone.get(name) if browser is not None and isinstance(name, str) else None

    def reserve(self, key: str, task: str | None, client: str | None = None) -> str:
        """A new name for a run that starts now ("my reverse model #2"), numbered per task in this browser;
        `client` is the address the browser comes from, when known."""
        with self._lock:
            browser = self._browser(key, client)
            kind = task or "text"
            browser.counters[kind] = browser.counters.get(kind, 0) + 1
            name = f"my {kind} model #{browser.counters[kind]}"
            browser.models[name] = PENDING
            return name

    def put(self, key: str, name: str, model, tokenizer, info: dict) -> list[str]:
        """Keep a finished model for inference under its reserved name; returns the names it pushed out."""
        model.eval().requires_grad_(False)
        for p in model.parameters():
            p.grad = None
        with self._lock:
            browser = self._browser(key)
            browser.models[name] = (model, tokenizer, info)
            browser.models.move_to_end(name)
            browser.used[name] = next(self._ticks)
            browser.gone.pop(name, None)
            dropped = []
            finished = browser.finished()
            for old in finished[: max(0, len(finished) - self.per_browser)]:
                del browser.models[old]
                self._forget(browser, old, f"“{old}” is no longer kept: a browser keeps its last "
                                           f"{self.per_browser} models.")
                dropped.append(old)
            self._make_room(keep=(key, name))
            return dropped

    def release(self, key: str, name: str) -> None:
        """Forget a reservation whose run produced no model."""
        with self._lock:
            browser = self._browsers.get(key)
            if browser is not None and browser.models.get(name, 0) is PENDING:
                del browser.models[name]

    def get(self, key: str, name: str):
        """(model, tokenizer, info) of a finished model of this browser, or None; a model found counts as used now."""
        with self._lock:
            browser = self._browsers.get(key) if isinstance(key, str) else None
            entry = browser.models.get(name) if browser is not None else None
            if entry is None or entry is PENDING:
                return None
            browser.used[name] = next(self._ticks)
            return entry

    def names(self, key: str) -> list[str]:
        """The finished models of this browser, oldest first."""
        with self._lock:
            browser = self._browsers.get(key) if isinstance(key, str) else None
            return browser.finished() if browser is not None else []

    def __len__(self) -> int:
        """Finished models across every browser."""
        with self._lock:
            return sum(1 for b in self._browsers.values() for v in b.models.values() if v is not PENDING)
