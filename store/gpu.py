"""The app on a GPU: the device its models live on, and `gpu`, the decorator of every function that runs a model.

On a Hugging Face ZeroGPU Space, `spaces.GPU` lends the app a GPU only while a decorated function runs, and runs
it in a fork of the app: what it is given and what it returns or yields are pickled across, and whatever it
changes in memory (a cache, the store of trained models) is lost with the fork. So the functions decorated here
take plain values (a checkpoint's name, a model a browser trained, text) and return plain values, and the
handlers around them keep the app's state. Anywhere else (no `spaces` package, or any machine but a ZeroGPU
Space) `spaces.GPU` returns the function itself: the app runs exactly as it does without it.
"""
from __future__ import annotations

import os

try:  # before anything initialises CUDA: on ZeroGPU, importing spaces patches torch
    import spaces
except ImportError:  # the app runs without it; requirements.txt installs it
    spaces = None

from transformer.checkpoint import resolve_device

from limits import GPU_SECONDS_LIMIT, GPU_SECONDS_MARGIN

DEVICE = resolve_device()  # cuda when there is one (on ZeroGPU, spaces makes torch report it), else cpu
GPU_FUNCTIONS: dict[str, object] = {}  # "module.name" -> the undecorated function, for tests and for ZeroGPU


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


def gpu(duration):
    """Decorator for a function (or generator) that runs a model: on ZeroGPU each call gets a GPU for at most
    `duration` seconds, or `duration(*args, **kwargs)` seconds computed from the call's own arguments; elsewhere
    the function is returned as it is. The function is registered in GPU_FUNCTIONS either way."""
    def decorate(fn):
        GPU_FUNCTIONS[f"{fn.__module__}.{fn.__qualname__}"] = fn
        return fn if spaces is None else spaces.GPU(duration=_capped(duration))(fn)
    return decorate


def onto_device(model):
    """The model on DEVICE, inside a @gpu function. Shipped and trained models are already there (a no-op); on
    ZeroGPU a model a browser trained arrives pickled, on the CPU, and this moves the worker's own copy."""
    return model.to(DEVICE)


def for_the_app(model):
    """A model trained inside a @gpu function, ready to be handed back: on ZeroGPU it crosses to the app's process
    by pickling, which must not carry CUDA tensors, so it goes to the CPU; elsewhere it stays where it is."""
    return model.cpu() if on_zero_gpu() else model
