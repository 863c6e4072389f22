"""What every tab shares: the checkpoint list, model loading, the per-browser model store, input checks, and
turning errors into messages."""
from __future__ import annotations

import functools
import inspect
import math
from dataclasses import dataclass
from pathlib import Path

import gradio as gr

from transformer.checkpoint import CheckpointError, load_checkpoint
from transformer.pretrained import cached_gpt2_models, load_gpt2
from transformer.tokenization import unknown_characters

from .controls import Number, Radio, Slider  # noqa: F401  (re-exported for the tabs)
from .gpu import DEVICE, onto_device
from .user_models import UserModels

CHECKPOINTS = Path(__file__).resolve().parents[1] / "checkpoints"
SHIPPED = sorted(p.parent.name for p in CHECKPOINTS.glob("*/config.json"))
MAX_PROMPT_CHARS = 2000
ATTENTION_CAP = 64  # tokens shown on a heatmap's axes
FAST = dict(trigger_mode="always_last", show_progress="hidden", concurrency_limit=8, concurrency_id="draw")
USER_MODELS = UserModels(per_browser=3, browsers=64)  # what the Train tab says: "your last 3 models are kept"


class UserError(Exception):
    """Raised by handlers for bad input; shown to the user as it is."""


def _message(e: Exception) -> str:
    return str(e) if not isinstance(e, KeyError) else str(e.args[0] if e.args else e)


def handler(fn):
    """Turn library errors (bad values, bad checkpoints) into a visible gr.Error instead of a stack trace; a
    gr.Error raised inside passes through as it is."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def wrapped_generator(*args, **kwargs):
            try:
                yield from fn(*args, **kwargs)
            except gr.Error:
                raise
            except (UserError, ValueError, CheckpointError) as e:
                raise gr.Error(_message(e)) from None
        return wrapped_generator

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except (UserError, ValueError, CheckpointError) as e:
            raise gr.Error(_message(e)) from None
    return wrapped


@functools.lru_cache(maxsize=None)
def shipped_model(name: str):
    """Load a shipped checkpoint once per process (on the GPU when there is one)."""
    return load_checkpoint(CHECKPOINTS / name)


@functools.lru_cache(maxsize=1)
def pretrained() -> dict[str, str]:
    """{"gpt2 (pretrained)": local directory} for every GPT-2 in this machine's Hugging Face cache (no network;
    read once per process: restart the app after `python -m transformer.pretrained gpt2`)."""
    return dict(cached_gpt2_models())


@functools.lru_cache(maxsize=1)
def pretrained_model(name: str):
    """Load a pretrained model on first use; one stays in memory at a time (GPT-2 small is ~0.5 GB)."""
    gr.Info(f"Loading {name}: a real pretrained model, a few seconds the first time…")
    return load_gpt2(pretrained()[name])


def fixed_choices() -> list[str]:
    """The checkpoints every browser sees: the shipped ones and the pretrained ones found in the local cache."""
    return SHIPPED + sorted(pretrained())


def browser_key(key, request: gr.Request | None = None) -> str:
    """The key of this browser's model store: the random key kept in its local storage, or, for an API client
    (which has no local storage), its session."""
    if isinstance(key, str) and key:
        return key
    session = getattr(request, "session_hash", None) if request is not None else None
    return f"session:{session}" if session else ""


def resolve(name, key: str):
    """(model, tokenizer, info) of a checkpoint name: a shipped one, or one this browser trained."""
    if not isinstance(name, str) or not name:
        raise UserError("pick a checkpoint from the list")
    if name in SHIPPED:
        return shipped_model(name)
    if name in pretrained():
        return pretrained_model(name)
    entry = USER_MODELS.get(key, name)
    if entry is not None:
        return entry
    raise UserError(f"unknown checkpoint {name[:80]!r}: pick one from the list (a model trained here is kept for "
                    f"the browser that trained it, its last {USER_MODELS.per_browser} models)")


@dataclass(frozen=True)
class ModelRef:
    """What a @gpu function (tabs.gpu) is given to find its model: the name of a shipped or pretrained one (every
    process has those: on a GPU they are loaded at import, before ZeroGPU forks its worker), or the entry of a model
    a browser trained, which lives only in the app's process (on ZeroGPU it travels with the call, pickled)."""

    name: str
    trained: tuple | None = None  # (model, tokenizer, info) of a browser's own model

    def load(self):
        """(model on the app's device, tokenizer, info)."""
        if self.trained is None:
            return shipped_model(self.name) if self.name in SHIPPED else pretrained_model(self.name)
        model, tokenizer, info = self.trained
        return onto_device(model), tokenizer, info


def model_ref(name, key: str) -> ModelRef:
    """The ModelRef of a checkpoint name (checked as `resolve` checks it, without loading anything)."""
    if isinstance(name, str) and (name in SHIPPED or name in pretrained()):
        return ModelRef(name)
    return ModelRef(name, resolve(name, key))  # this browser's model, or a UserError


def load_at_start() -> None:
    """With a GPU, every shipped model and the cached pretrained ones go onto it now, at import: ZeroGPU moves the
    weights it finds on CUDA at start-up into each GPU worker, and a handler never waits for a load. On a CPU the
    models load on first use, which keeps the app's start fast."""
    if DEVICE.type == "cuda":
        for name in SHIPPED:
            shipped_model(name)
        for name in sorted(pretrained())[:1]:  # pretrained_model keeps one in memory
            pretrained_model(name)


def checkpoint_choices(key: str) -> list[str]:
    return fixed_choices() + USER_MODELS.names(key)


def check_text(text, what: str = "input", limit: int = MAX_PROMPT_CHARS) -> str:
    if text is not None and not isinstance(text, str):
        raise UserError(f"the {what} must be text")
    if text is None or not text.strip():
        raise UserError(f"the {what} is empty: type something first")
    if len(text) > limit:
        raise UserError(f"the {what} is {len(text):,} characters long; the limit here is {limit:,}")
    return text


def check_number(value, what: str, lo: float, hi: float, integer: bool = False):
    """A number from a UI control, checked: finite, within [lo, hi], whole when `integer`; the error names it."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UserError(f"{what} must be a number between {lo:g} and {hi:g}, got {str(value)[:40]!r}")
    if not lo <= value <= hi:
        raise UserError(f"{what} must be between {lo:g} and {hi:g}, got {value:g}")
    if integer:
        if value != int(value):
            raise UserError(f"{what} must be a whole number, got {value:g}")
        return int(value)
    return float(value)


def check_choice(value, what: str, choices) -> str:
    if not isinstance(value, str) or value not in choices:
        raise UserError(f"{what} must be one of {', '.join(map(str, choices))}; got {str(value)[:40]!r}")
    return value


def unknown_notice(tokenizer, text: str) -> str:
    unknown = unknown_characters(tokenizer, text)
    if not unknown:
        return ""
    return f"Characters this model never saw became `<unk>`: {' '.join(repr(c) for c in unknown)}. "
