"""The app on a GPU: the device its models live on, and `gpu`, the decorator of every function that runs a model.

On a Hugging Face ZeroGPU Space, `spaces.GPU` lends the app a GPU only while a decorated function runs, and runs
it in a fork of the app: what it is given and what it returns or yields are pickled across, and whatever it
changes in memory (a cache, the store of trained models) is lost with the fork. So the functions decorated here
take plain values (a checkpoint's name, a model a browser trained, text) and return plain values, and the
handlers around them keep the app's state. Anywhere else (no `spaces` package, or any machine but a ZeroGPU
Space) `spaces.GPU` returns the function itself: the app runs exactly as it does without it.
"""
from __future__ import annotations

import functools
import inspect
import os
from contextlib import contextmanager
from contextvars import ContextVar

try:  # before anything initialises CUDA: on ZeroGPU, importing spaces patches torch
    import spaces
except ImportError:  # the app runs without it; requirements.txt installs it
    spaces = None

from transformer.checkpoint import resolve_device

from checks import UserError
from limits import GPU_SECONDS_LIMIT, GPU_SECONDS_MARGIN

DEVICE = resolve_device()  # cuda when there is one (on ZeroGPU, spaces makes torch report it), else cpu
GPU_FUNCTIONS: dict[str, object] = {}  # "module.name" -> the undecorated function, for tests and for ZeroGPU
_NO_MODEL: ContextVar[str | None] = ContextVar("no_model", default=None)  # why no model may run here, or None


def on_zero_gpu() -> bool:
    """Whether this process is a ZeroGPU Space (the variable spaces.config reads, with the same rule)."""
    return os.environ.get("SPACES_ZERO_GPU", "").lower() in ("1", "t", "true")


def wall_seconds(seconds: float) -> float:
    """A run's wall-clock limit here: as asked, or, on ZeroGPU, short enough to end inside the GPU time a call may
    ask for (a call that overruns its time is aborted, and its model lost)."""
    return min(seconds, GPU_SECONDS_LIMIT - GPU_SECONDS_MARGIN) if on_zero_gpu() else seconds


def _capped(duration):
    """`duration` (seconds, or a function of the call's arguments giving seconds) no longer than the limit."""
    if callable(duration):
        return lambda *args, **kwargs: min(int(duration(*args, **kwargs)), GPU_SECONDS_LIMIT)
    return min(int(duration), GPU_SECONDS_LIMIT)


class ModelRefused(UserError):
    """A model was asked to run where none may (inside `no_model`): said in words, nothing computed."""


@contextmanager
def no_model(why: str):
    """Within this block (this thread or task) every @gpu function refuses to start, raising ModelRefused with
    `why`: an event answered outside the queue (server.unqueued) must stay cheap, and a model's run would take
    the CPU from the requests waiting their turn in the queue's fair lines."""
    token = _NO_MODEL.set(why)
    try:
        yield
    finally:
        _NO_MODEL.reset(token)


def gpu(duration):
    """Decorator for a function (or generator) that runs a model: on ZeroGPU each call gets a GPU for at most
    `duration` seconds, or `duration(*args, **kwargs)` seconds computed from the call's own arguments; elsewhere
    the function runs as it is. Either way a call inside `no_model` is refused before it starts (checked here, in
    the app's process, before spaces would fork). The undecorated function is registered in GPU_FUNCTIONS."""
    def decorate(fn):
        GPU_FUNCTIONS[f"{fn.__module__}.{fn.__qualname__}"] = fn
        lent = fn if spaces is None else spaces.GPU(duration=_capped(duration))(fn)

        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def guarded_stream(*args, **kwargs):
                _allowed()
                yield from lent(*args, **kwargs)
            return guarded_stream

        @functools.wraps(fn)
        def guarded(*args, **kwargs):
            _allowed()
            return lent(*args, **kwargs)
        return guarded
    return decorate


def _allowed() -> None:
    why = _NO_MODEL.get()
    if why is not None:
        raise ModelRefused(why)


def onto_device(model):
    """The model on DEVICE, inside a @gpu function. Shipped and trained models are already there (a no-op); on
    ZeroGPU a model a browser trained arrives pickled, on the CPU, and this moves the worker's own copy."""
    return model.to(DEVICE)


def for_the_app(model):
    """A model trained inside a @gpu function, ready to be handed back: on ZeroGPU it crosses to the app's process
    by pickling, which must not carry CUDA tensors, so it goes to the CPU; elsewhere it stays where it is."""
    return model.cpu() if on_zero_gpu() else model
