"""widgets.answers: a handler's Answer given to gradio as {component: value}, each field setting the component of
its name. Oracle: hand-made components (plain objects) and answers, whose expected mapping is written out."""
from __future__ import annotations

import inspect
from dataclasses import make_dataclass
from typing import Any

import gradio as gr
import pytest

from widgets.answers import Answer, Components, answered, by_name, named_outputs


def answer_type(name: str, *fields) -> type:
    """A frozen Answer dataclass of `fields` ((name, type[, default]) each)."""
    return make_dataclass(name, list(fields), bases=(Answer,), frozen=True)


Figures = answer_type("Figures", ("one", Any, None), ("grid", Any, None))
Section = answer_type("Section", ("note", Any), ("figures", Figures))
Opened = answer_type("Opened", ("notice", Any), ("figures", Figures), ("patch", Section))
Part = make_dataclass("Part", ["note", "one", "grid"], frozen=True)  # a section's own components: its Answers' go there

PAGE = Components(notice="notice-box", one="one-plot", grid="grid-plot",
                  patch=Part(note="patch-note", one="patch-one", grid="patch-grid"))


def test_each_field_sets_the_component_of_its_name_and_a_nested_answer_its_own():
    """A nested Answer's fields are set in the part of the same name when the components have one (a section's
    own), else in the components themselves; the outputs come in the fields' order."""
    answer = Opened("hi", Figures(1, 2), Section("n", Figures(3, 4)))
    assert by_name(PAGE, answer) == {"notice-box": "hi", "one-plot": 1, "grid-plot": 2, "patch-note": "n",
                                     "patch-one": 3, "patch-grid": 4}
    assert named_outputs(PAGE, Opened) == ["notice-box", "one-plot", "grid-plot", "patch-note", "patch-one",
                                           "patch-grid"]


def test_a_field_without_a_component_is_an_error_not_a_silent_skip():
    with pytest.raises(AttributeError):
        by_name(Components(notice="notice-box"), Opened("hi", Figures(), Section("n", Figures())))


def test_components_are_read_only():
    with pytest.raises(AttributeError):
        PAGE.notice = "other"


def test_answered_keeps_the_handlers_name_signature_and_streaming():
    """gradio reads the gr.Request parameter from the signature, names the event by the function, and streams a
    generator: the wrapped handler keeps all three, and each answer reaches gradio as {component: value}."""
    def draw(x, request: gr.Request = None) -> Figures:
        return Figures(x, x + 1)

    def stream(n):
        for i in range(n):
            yield Figures(i)

    wired, streamed = answered(PAGE, draw), answered(PAGE, stream)
    assert wired.__name__ == "draw" and "request" in inspect.signature(wired).parameters
    assert wired(1) == {"one-plot": 1, "grid-plot": 2} and wired.answers_by_name
    assert inspect.isgeneratorfunction(streamed)
    assert list(streamed(2)) == [{"one-plot": 0, "grid-plot": None}, {"one-plot": 1, "grid-plot": None}]
