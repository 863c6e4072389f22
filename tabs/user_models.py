"""Models trained in the Train tab, kept per browser in a bounded server-side store (no gradio here).

A browser is known by a random key kept in its local storage (gr.BrowserState), so its models survive a page
reload. The store is bounded twice: each browser keeps its last `per_browser` models, and the store remembers the
last `browsers` browsers (least recently used first out). A model is kept for inference only: eval mode, no
gradients, no optimiser. A name is reserved when a run starts, so two runs never get the same name.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

PENDING = None  # the entry of a reserved name whose run has not finished


@dataclass
class _Browser:
    models: OrderedDict = field(default_factory=OrderedDict)  # name -> (model, tokenizer, info) or PENDING
    counters: dict = field(default_factory=dict)  # task -> last number given


class UserModels:
    def __init__(self, per_browser: int = 3, browsers: int = 64):
        self.per_browser, self.max_browsers = per_browser, browsers
        self._browsers: OrderedDict[str, _Browser] = OrderedDict()
        self._lock = threading.Lock()

    def _browser(self, key: str) -> _Browser:
        if not isinstance(key, str) or not key:
            raise ValueError("this browser session has no key yet: reload the page")
        browser = self._browsers.get(key)
        if browser is None:
            browser = self._browsers[key] = _Browser()
            while len(self._browsers) > self.max_browsers:
                self._browsers.popitem(last=False)
        self._browsers.move_to_end(key)
        return browser

    def reserve(self, key: str, task: str | None) -> str:
        """A new name for a run that starts now ("my reverse model #2"), numbered per task in this browser."""
        with self._lock:
            browser = self._browser(key)
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
            dropped = []
            finished = [n for n, v in browser.models.items() if v is not PENDING]
            for old in finished[: max(0, len(finished) - self.per_browser)]:
                del browser.models[old]
                dropped.append(old)
            return dropped

    def release(self, key: str, name: str) -> None:
        """Forget a reservation whose run produced no model."""
        with self._lock:
            browser = self._browsers.get(key)
            if browser is not None and browser.models.get(name, 0) is PENDING:
                del browser.models[name]

    def get(self, key: str, name: str):
        """(model, tokenizer, info) of a finished model of this browser, or None."""
        with self._lock:
            browser = self._browsers.get(key) if isinstance(key, str) else None
            entry = browser.models.get(name) if browser is not None else None
            return entry if entry is not PENDING else None

    def names(self, key: str) -> list[str]:
        """The finished models of this browser, oldest first."""
        with self._lock:
            browser = self._browsers.get(key) if isinstance(key, str) else None
            return [n for n, v in browser.models.items() if v is not PENDING] if browser is not None else []

    def __len__(self) -> int:
        """Finished models across every browser."""
        with self._lock:
            return sum(1 for b in self._browsers.values() for v in b.models.values() if v is not PENDING)
