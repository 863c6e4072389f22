"""Number controls whose bad values from a client (None, text, NaN, a list) get a clear error naming the control.

gradio's own Slider check crashes on None or text with a generic "raised an exception" message
(tests/reliability/test_endpoint_fuzz.py found it). A subclass keeps its checks when gradio rebuilds a component
for a session's gr.update. (gradio writes a `.pyi` stub beside this file when it defines these classes; it is
ignored by git.)
"""
from __future__ import annotations

import gradio as gr

from .checks import UserError, real_number


def _checked_number(component, payload):
    """The payload when it is a number (tabs.checks.real_number), else a gr.Error naming the control."""
    if payload is None and isinstance(component, gr.Number):
        return None
    try:
        return real_number(payload, component.label, component.minimum, component.maximum)
    except UserError as e:
        raise gr.Error(str(e)) from None


def index_slider(count: int, value: int | None = None) -> dict:
    """The update of a slider that picks one of `count` things (a layer, a head, a token, a step): 0 to count - 1,
    at `value` (clamped; None keeps the slider's value). Gradio refuses a slider whose minimum is not below its
    maximum (gr.Slider raises ValueError when it rebuilds the component for the update), so with one thing there
    is nothing to slide: the slider is hidden, its value 0 still reaching the handlers (say so with `only_one`),
    instead of a greyed 0-1 range that promises a second layer the model does not have."""
    update = dict(maximum=max(count - 1, 1), visible=count > 1, interactive=count > 1)
    if value is not None:
        update["value"] = min(max(int(value), 0), max(count - 1, 0))
    return gr.update(**update)


def only_one(**counts: int) -> str:
    """What the hidden sliders of `index_slider` would have said: "One layer (layer 0) and one head (head 0)."
    for only_one(layer=1, head=1); "" when every count is above one."""
    single = [f"one {name} ({name} 0)" for name, count in counts.items() if count == 1]
    if not single:
        return ""
    text = " and ".join(single)
    return f"This model has {text}: nothing to choose."

from gradio.events import Dependency

class Slider(gr.Slider):
    """gr.Slider whose bad values from a client (None, text, NaN, a list) get a clear error naming the control;
    gradio's own check crashes on them with a generic message. The range is the handler's to check (every handler
    clamps or refuses with the field's name): a change sent just before a new checkpoint narrowed the range (head 6
    of a model that now has 4) must not end in an error toast."""

    def preprocess(self, payload):
        return gr.Number.round_to_precision(_checked_number(self, payload), self.precision)
    from typing import Callable, Literal, Sequence, Any, TYPE_CHECKING
    from gradio.blocks import Block
    if TYPE_CHECKING:
        from gradio.components import Timer
        from gradio.components.base import Component


class Number(gr.Number):
    """gr.Number with the same clear error as Slider for text, NaN, infinities or a list (None stays None)."""

    def preprocess(self, payload):
        value = _checked_number(self, payload)
        if value is not None and self.precision == 0 and value != int(value):  # gradio would round 1.5 to 2
            raise gr.Error(f"{self.label} must be a whole number, got {value:g}")
        return super().preprocess(value)
    from typing import Callable, Literal, Sequence, Any, TYPE_CHECKING
    from gradio.blocks import Block
    if TYPE_CHECKING:
        from gradio.components import Timer
        from gradio.components.base import Component


class Radio(gr.Radio):
    """gr.Radio that passes a value outside its current choices on to the handler instead of failing in gradio.

    When a new record changes the choices (a model without cross-attention), change events already on their way
    still carry the old choice; the handler, which knows the record, decides what to draw (tabs.attention)."""

    def preprocess(self, payload):
        if payload is not None and not isinstance(payload, str):
            raise gr.Error(f"{self.label} must be one of the listed choices, got {str(payload)[:40]!r}")
        return payload
    from typing import Callable, Literal, Sequence, Any, TYPE_CHECKING
    from gradio.blocks import Block
    if TYPE_CHECKING:
        from gradio.components import Timer
        from gradio.components.base import Component


class Dropdown(gr.Dropdown):
    """gr.Dropdown that passes a name outside its current choices on to the handler instead of failing in gradio
    (the checkpoint list). A page whose session state gradio let go (tabs.sessions) still lists the models it
    trained, while the server's fresh copy of its list has only the fixed checkpoints; the handler
    (tabs.catalogue.resolve) knows the browser's models and answers an unknown name with a clear message. (Named
    as gradio's: the page draws a component by its class name.)"""

    def preprocess(self, payload):
        if payload is not None and not isinstance(payload, str):
            raise gr.Error(f"{self.label} must be one of the listed choices, got {str(payload)[:40]!r}")
        return payload
    from typing import Callable, Literal, Sequence, Any, TYPE_CHECKING
    from gradio.blocks import Block
    if TYPE_CHECKING:
        from gradio.components import Timer
        from gradio.components.base import Component