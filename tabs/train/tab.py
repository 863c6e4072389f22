"""The Train tab's components by name: each field of a handler's Answer sets the component of its name
(widgets.answers); the demos drive the tab through them."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from widgets.answers import Answer


@dataclass(frozen=True)
class Recipe(Answer):
    """The hyper-parameters a preset or a demo fills in (tabs.train.request.HYPER_PARAMETERS), each its box."""

    layers: Any
    heads: Any
    d_model: Any
    lr: Any
    steps: Any
    batch_size: Any


@dataclass(frozen=True)
class TrainTab:
    """`hyper`: the hyper-parameters' boxes by name (HYPER_PARAMETERS: what a preset or a demo's recipe fills in);
    `watch_after(trigger)`: "Watch an induction head form" run after `trigger`."""

    ckpt: Any
    source: Any
    task: Any
    preset: Any
    notice: Any
    status: Any
    curves: Any
    heatmap: Any
    live_head: Any
    samples: Any
    compare_table: Any
    compare_details: Any
    start: Any
    compare: Any
    watch: Any
    control: Any
    live: Any
    hyper: dict
    watch_after: Callable = None
