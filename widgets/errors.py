"""Errors a user can act on: `handler` turns a library error (a bad value, a bad checkpoint) into a visible
gr.Error with its message instead of a stack trace."""
from __future__ import annotations

import functools
import inspect

import gradio as gr

from transformer.checkpoint import CheckpointError

from checks import UserError


def refusal(message: str) -> gr.Error:
    """The error a user sees for a value the app refuses, in words: gradio shows its message, and prints no
    traceback in the server's log (gr.Error prints one by default: a refusal is not a fault of the server)."""
    return gr.Error(message, print_exception=False)


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
                raise refusal(_message(e)) from None
        return wrapped_generator

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except (UserError, ValueError, CheckpointError) as e:
            raise refusal(_message(e)) from None
    return wrapped
