"""Number controls whose bad values from a client (None, text, NaN, a list) get a clear error naming the control.

gradio's own Slider check crashes on None or text with a generic "raised an exception" message
(tests/reliability/test_endpoint_fuzz.py found it). A subclass keeps its checks when gradio rebuilds a component
for a session's gr.update. (gradio writes a `.pyi` stub beside this file when it defines these classes; it is
ignored by git.)
"""
from __future__ import annotations

import gradio as gr

from checks import UserError, real_number
from widgets.errors import refusal


def _checked_number(component, payload):
    """The payload when it is a number (checks.real_number), else a gr.Error naming the control."""
    if payload is None and isinstance(component, gr.Number):
        return None
    try:
        return real_number(payload, component.label, component.minimum, component.maximum)
    except UserError as e:
        raise refusal(str(e)) from None


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


def index_control(count: int, **kwargs) -> "Slider":
    """A slider that picks one of `count` things (0 to count - 1, at 0) until the page knows how many there are:
    its range is then set by `index_slider`. Its count is a placeholder, not a limit (the limits are in limits.py)."""
    return Slider(0, count - 1, value=0, step=1, **kwargs)


def only_one(**counts: int) -> str:
    """What the hidden sliders of `index_slider` would have said: "One layer (layer 0) and one head (head 0)."
    for only_one(layer=1, head=1); "" when every count is above one."""
    single = [f"one {name} ({name} 0)" for name, count in counts.items() if count == 1]
    if not single:
        return ""
    text = " and ".join(single)
    return f"This model has {text}: nothing to choose."


class Slider(gr.Slider):
    """gr.Slider whose bad values from a client (None, text, NaN, a list) get a clear error naming the control;
    gradio's own check crashes on them with a generic message. The range is the handler's to check (every handler
    clamps or refuses with the field's name): a change sent just before a new checkpoint narrowed the range (head 6
    of a model that now has 4) must not end in an error toast."""

    def preprocess(self, payload):
        return gr.Number.round_to_precision(_checked_number(self, payload), self.precision)


class Number(gr.Number):
    """gr.Number with the same clear error as Slider for text, NaN, infinities or a list (None stays None), and for
    a number outside its range (gradio's own says "Value 9 is greater than maximum value 4." of no field)."""

    def preprocess(self, payload):
        value = _checked_number(self, payload)
        if value is not None and self.precision == 0 and value != int(value):  # gradio would round 1.5 to 2
            raise refusal(f"{self.label} must be a whole number, got {value:g}")
        if value is not None and self.minimum is not None and value < self.minimum:
            raise refusal(f"{self.label} must be at least {self.minimum:g}, got {value:g}")
        if value is not None and self.maximum is not None and value > self.maximum:
            raise refusal(f"{self.label} must be at most {self.maximum:g}, got {value:g}")
        return super().preprocess(value)


class Radio(gr.Radio):
    """gr.Radio that passes a value outside its current choices on to the handler instead of failing in gradio
    (whose "Value: ... is not in the list of choices" names no field): every handler checks the value and names the
    field (checks.check_choice, tabs.train.request).

    When a new record changes the choices (a model without cross-attention), change events already on their way
    still carry the old choice; the handler, which knows the record, decides what to draw (tabs.attention.page)."""

    def preprocess(self, payload):
        if payload is not None and not isinstance(payload, str):
            raise refusal(f"{self.label} must be one of the listed choices, got {str(payload)[:40]!r}")
        return payload


class CheckboxGroup(gr.CheckboxGroup):
    """gr.CheckboxGroup that passes ticked values outside its current choices on to the handler, as Radio does
    (the heads to switch off: tabs.attention.inside names the head the model does not have); anything but a list
    of texts gets an error naming the control."""

    def preprocess(self, payload):
        if payload is not None and not (isinstance(payload, list) and all(isinstance(v, str) for v in payload)):
            raise refusal(f"{self.label} must be a list of the listed choices, got {str(payload)[:40]!r}")
        return payload


class Dropdown(gr.Dropdown):
    """gr.Dropdown that passes a name outside its current choices on to the handler instead of failing in gradio,
    as Radio does: the handler names the field. The checkpoint list: a page whose session state gradio let go
    (store.sessions) still lists the models it trained, while the server's fresh copy of its list has only the fixed
    checkpoints; the handler (store.catalogue.resolve) knows the browser's models and answers an unknown name with a
    clear message. (Named as gradio's: the page draws a component by its class name.)"""

    def preprocess(self, payload):
        if payload is not None and not isinstance(payload, str):
            raise refusal(f"{self.label} must be one of the listed choices, got {str(payload)[:40]!r}")
        return payload
