"""Number controls whose bad values from a client (None, text, NaN, a list) get a clear error naming the control.

gradio's own Slider check crashes on None or text with a generic "raised an exception" message
(tests/reliability/test_endpoint_fuzz.py found it). A subclass keeps its checks when gradio rebuilds a component
for a session's gr.update. (gradio writes a `.pyi` stub beside this file when it defines these classes; it is
ignored by git.)
"""
from __future__ import annotations

import math

import gradio as gr


def _checked_number(component, payload):
    if payload is None and isinstance(component, gr.Number):
        return None
    if isinstance(payload, bool) or not isinstance(payload, (int, float)) or not math.isfinite(payload):
        bounds = (f" between {component.minimum:g} and {component.maximum:g}"
                  if component.minimum is not None and component.maximum is not None else "")
        raise gr.Error(f"{component.label} must be a number{bounds}, got {str(payload)[:40]!r}")
    return payload


class Slider(gr.Slider):
    """gr.Slider whose bad values from a client (None, text, NaN, a list) get a clear error naming the control;
    gradio's own check crashes on them with a generic message."""

    def preprocess(self, payload):
        return super().preprocess(_checked_number(self, payload))


class Number(gr.Number):
    """gr.Number with the same clear error as Slider for text, NaN, infinities or a list (None stays None)."""

    def preprocess(self, payload):
        return super().preprocess(_checked_number(self, payload))
