"""Handlers that answer by name: a handler returns an `Answer` (a frozen dataclass) whose each field sets the
component of the same name in a page's components (a frozen dataclass too), never a tuple matched to a list of
outputs by position. Gradio takes `{component: value}` and fills each listed output from it.

A field that is an Answer itself brings its own fields: set in the part of the components of the same name when
there is one (a section's own components, as `page.patch`), else in the components themselves."""
from __future__ import annotations

import functools
import inspect
import typing
from dataclasses import dataclass, fields, is_dataclass
from types import SimpleNamespace


@dataclass(frozen=True)
class Answer:
    """A handler's answer: each field sets the component of the same name; a field that is an Answer itself brings
    its own fields (a computation's answer and its figures' in one call; see the module's docstring)."""


class Components(SimpleNamespace):
    """Components by name, for Answers to set when no page structure holds them all (a demo's click sets
    components of several tabs): `Components(text=box, ...)`. Read-only once made."""

    def __setattr__(self, name, value):
        raise AttributeError(f"Components are read-only: {name}")


def _part(components, name: str):
    """The part of `components` named `name` (a section's own components) when there is one, else `components`."""
    part = getattr(components, name, None)
    return part if isinstance(part, Components) or is_dataclass(part) and not isinstance(part, type) else components


def by_name(components, answer: Answer) -> dict:
    """`answer` as gradio takes it: {the component of `components` each field names: its value}."""
    found = {}
    for field in fields(answer):
        value = getattr(answer, field.name)
        if isinstance(value, Answer):
            found.update(by_name(_part(components, field.name), value))
        else:
            found[getattr(components, field.name)] = value
    return found


def named_outputs(components, answer_type: type[Answer]) -> list:
    """The components `answer_type`'s fields name, in the fields' order (an API client reads the outputs in this
    order); a field typed as an Answer brings its own."""
    hints = typing.get_type_hints(answer_type)
    found = []
    for field in fields(answer_type):
        kind = hints.get(field.name)
        if isinstance(kind, type) and issubclass(kind, Answer):
            found += named_outputs(_part(components, field.name), kind)
        else:
            found.append(getattr(components, field.name))
    return found


def answered(components, fn):
    """`fn` (a function or a generator of Answers) for gradio: each answer as {component: value} (by_name). Its name
    and signature stay fn's (gradio reads the gr.Request parameter from it; the page's events are named by it)."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def each(*args, **kwargs):
            for answer in fn(*args, **kwargs):
                yield by_name(components, answer)
        each.answers_by_name = True
        return each

    @functools.wraps(fn)
    def one(*args, **kwargs):
        return by_name(components, fn(*args, **kwargs))
    one.answers_by_name = True  # tests/unit/test_answers.py finds the app's handlers that answer by position
    return one


def setting_each(outputs: list, value):
    """A handler of no inputs that sets each of `outputs` to the one `value` (nothing to match by position)."""
    def each_set():
        return dict.fromkeys(outputs, value)
    each_set.answers_by_name = True
    return each_set
