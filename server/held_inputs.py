"""The input values every session holds, bounded in bytes in total.

gradio keeps, in each session's copy of the page config (`SessionState.config_values`), the last value every input
of a call sent (`_update_value_in_config` in `Blocks.preprocess_data`): the figure a page sent to be saved as HTML
(up to the 16 MiB a body may carry), a pasted training text (up to 2,000,000 characters). The call has used it by
then; only gradio's deep links (`/gradio_api/deep_link`, which this app never makes) read it again. 256 sessions
are kept (limits.SESSIONS), so 40 sessions each sending one 12.5 MiB figure held +1.2 GB until 300 newer sessions
pushed them out, and 256 would have held ~7.7 GB (issue 37).

`HeldInputs.account(configs, keys)` runs after each input preparation (server.session_state.tidying): each held
value of at least HELD_INPUTS["counted"] bytes is counted, and past HELD_INPUTS["bytes"] in all the oldest counted
values go back to their component's default (built again if a deep link ever reads it). What is counted is the
value's size as gradio holds it (its strings' characters, a few bytes a number), not RSS.
"""
from __future__ import annotations

import threading
import weakref
from collections import OrderedDict


def value_bytes(value, stop: int | None = None) -> int:
    """About how many bytes `value` (JSON-like: strings, numbers, lists, dicts) holds; counting stops past `stop`."""
    total, pending = 0, [value]
    while pending and (stop is None or total <= stop):
        item = pending.pop()
        if isinstance(item, (str, bytes)):
            total += len(item) + 48
        elif isinstance(item, dict):
            total += 64 + 32 * len(item)
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, (list, tuple)):
            total += 56 + 8 * len(item)
            pending.extend(item)
        else:
            total += 32
    return total


def held_value(configs, key):
    """The value gradio holds for the component `key` in a session's configs (None when it holds none)."""
    config = dict.get(configs, key)  # never builds one (server.session_state.PageConfigs builds on a read)
    return config.get("props", {}).get("value") if isinstance(config, dict) else None


class HeldInputs:
    def __init__(self, budget: int, counted: int):
        self.budget, self.counted = budget, counted
        self.total = 0
        self._held: OrderedDict[tuple[int, object], tuple[weakref.ref, int]] = OrderedDict()  # oldest first
        self._lock = threading.Lock()

    def account(self, configs, keys) -> None:
        """Count the values `configs` (a session's PageConfigs) holds for `keys` (the inputs a call just sent), and
        drop the oldest counted values of every session past the budget."""
        if configs is None or not hasattr(configs, "forget_value"):
            return
        with self._lock:
            for key in keys:
                entry = (id(configs), key)
                self.total -= self._held.pop(entry, (None, 0))[1]
                size = value_bytes(held_value(configs, key), stop=self.budget)
                if size >= self.counted:
                    self._held[entry] = weakref.ref(configs), size
                    self.total += size
            if self.total > self.budget:
                self._forget_gone()
            while self.total > self.budget and self._held:
                (_, key), (ref, size) = self._held.popitem(last=False)
                self.total -= size
                if (owner := ref()) is not None:
                    owner.forget_value(key)

    def _forget_gone(self) -> None:
        """Stop counting the values of sessions gradio no longer keeps (under the lock)."""
        for entry, (ref, size) in list(self._held.items()):
            if ref() is None:
                del self._held[entry]
                self.total -= size
