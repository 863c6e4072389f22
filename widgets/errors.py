"""Errors a user can act on: `handler` turns a library error (a bad value, a bad checkpoint) into a visible
gr.Error with its message instead of a stack trace."""
from __future__ import annotations

import functools
import inspect

import gradio as gr

from transformer.checkpoint import CheckpointError

from checks import UserError


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
