"""What every tab shares: the checkpoint list, model loading, input checks, and turning errors into messages."""
from __future__ import annotations

import functools
import inspect
from pathlib import Path

import gradio as gr

from transformer.checkpoint import CheckpointError, load_checkpoint
from transformer.tokenization import unknown_characters

CHECKPOINTS = Path(__file__).resolve().parents[1] / "checkpoints"
SHIPPED = sorted(p.parent.name for p in CHECKPOINTS.glob("*/config.json"))
MAX_PROMPT_CHARS = 2000
ATTENTION_CAP = 64  # tokens shown on a heatmap's axes
FAST = dict(trigger_mode="always_last", show_progress="hidden", concurrency_limit=8, concurrency_id="draw")


class UserError(Exception):
    """Raised by handlers for bad input; shown to the user as it is."""


def handler(fn):
    """Turn library errors (bad values, bad checkpoints) into a visible gr.Error instead of a stack trace."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def wrapped_generator(*args, **kwargs):
            try:
                yield from fn(*args, **kwargs)
            except (UserError, ValueError, CheckpointError) as e:
                raise gr.Error(str(e)) from None
        return wrapped_generator

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (UserError, ValueError, CheckpointError) as e:
            raise gr.Error(str(e)) from None
    return wrapped


@functools.lru_cache(maxsize=None)
def shipped_model(name: str):
    """Load a shipped checkpoint once per process (on the GPU when there is one)."""
    return load_checkpoint(CHECKPOINTS / name)


def resolve(name: str, user_models: dict):
    if name in (user_models or {}):
        return user_models[name]
    if name in SHIPPED:
        return shipped_model(name)
    raise UserError(f"unknown checkpoint {name!r}: pick one from the list")


def checkpoint_choices(user_models: dict) -> list[str]:
    return SHIPPED + sorted(user_models or {})


def check_text(text: str, what: str = "input") -> str:
    if text is None or not text.strip():
        raise UserError(f"the {what} is empty: type something first")
    if len(text) > MAX_PROMPT_CHARS:
        raise UserError(f"the {what} is {len(text):,} characters long; the limit here is {MAX_PROMPT_CHARS:,}")
    return text


def unknown_notice(tokenizer, text: str) -> str:
    unknown = unknown_characters(tokenizer, text)
    if not unknown:
        return ""
    return f"Characters this model never saw became `<unk>`: {' '.join(repr(c) for c in unknown)}. "
