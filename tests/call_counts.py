"""Count how often functions are called, wherever they were imported, and how often a call repeated an earlier one:
`with counting(f, g) as calls: ...` replaces `f` and `g` in every loaded module that holds them (their own module
too, so calls from inside it count) with a counting wrapper, and puts them back afterwards.

`calls.total[name]` counts every call; `calls.repeats[name]` the calls whose first argument has the content of an
earlier call's (a tensor's values, a pattern's kind and weights, a WordCross's weights): the same work done again.

`with forwards() as calls: ...` lists every Transformer forward in the block: "unpatched" (no point written) or
"patched".
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import sys
import threading
from collections import Counter
from dataclasses import dataclass, field

import torch

from transformer import points
from transformer.model import Transformer


def fingerprint(value) -> str:
    """What a computation's first argument holds: a digest of a tensor's values (through `.weights` for a pattern or
    a WordCross, with the pattern's kind), else its repr."""
    weights = getattr(value, "weights", value)
    if isinstance(weights, torch.Tensor):
        data = weights.detach().contiguous().cpu()
        digest = hashlib.sha1(data.numpy().tobytes()).hexdigest()
        return f"{getattr(value, 'kind', '')} {tuple(data.shape)} {digest}"
    return repr(value)


@dataclass
class Calls:
    total: Counter = field(default_factory=Counter)
    repeats: Counter = field(default_factory=Counter)
    seen: set = field(default_factory=set)


@contextlib.contextmanager
def counting(*functions):
    calls, lock, replaced = Calls(), threading.Lock(), []

    def wrap(fn):
        name = f"{fn.__module__.rsplit('.', 1)[-1]}.{fn.__qualname__}"

        @functools.wraps(fn)
        def counted(*args, **kwargs):
            seen = (name, fingerprint(args[0]) if args else "")
            with lock:
                calls.total[name] += 1
                calls.repeats[name] += seen in calls.seen
                calls.seen.add(seen)
            return fn(*args, **kwargs)
        return counted

    wrappers = {id(fn): (fn, wrap(fn)) for fn in functions}
    for module in list(sys.modules.values()):
        for attr, value in list(getattr(module, "__dict__", {}).items()):
            if id(value) in wrappers and wrappers[id(value)][0] is value:
                setattr(module, attr, wrappers[id(value)][1])
                replaced.append((module, attr, value))
    try:
        yield calls
    finally:
        for module, attr, value in replaced:
            setattr(module, attr, value)


@contextlib.contextmanager
def forwards():
    """Every Transformer forward in the block, in order: "unpatched" (no point written) or "patched"."""
    calls, original = [], Transformer.forward

    def counted(self, *args, **kwargs):
        scope = points._ACTIVE.get()
        calls.append("patched" if scope is not None and scope.write else "unpatched")
        return original(self, *args, **kwargs)

    Transformer.forward = counted
    try:
        yield calls
    finally:
        Transformer.forward = original
