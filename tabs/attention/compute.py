"""The Attention tab's every path to a new record (Show attention, Enter, the checkpoint, a demo, a link): the
previous input's figures cleared, then the record computed and the head it chose drawn, in one call."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from tabs.attention.choose import Opened, compute_attention
from tabs.attention.figure_cache import Figures, draw_view
from widgets.answers import Answer


@dataclass(frozen=True)
class Cleared(Answer):
    """Before a new input is computed: no record, no notice and no figure (nor, so, its caption) of the previous
    input."""

    record: Any = None
    made_by: Any = None
    notice: Any = ""
    figures: Figures = Figures()


@dataclass(frozen=True)
class Drawn(Answer):
    """A computation's answer and the figures of the head it opens on (widgets.answers)."""

    opened: Opened
    figures: Figures


def clear_attention() -> Cleared:
    """So that a refused input leaves no heatmap of the previous one on screen."""
    return Cleared()


def compute_and_draw(ckpt, text, target, focus, score, cells, words, width, request: gr.Request = None) -> Drawn:
    """compute_attention, then the head it chose drawn, its caption in it (draw_view), in the same call: the page's
    every path to a new record (Show attention, Enter, the checkpoint, a demo, a link). One call instead of two: each
    queued call costs the page about six rounds of status updates (bench/RESULTS.md, "Issue 29 item 11")."""
    opened = compute_attention(ckpt, text, target, focus, request=request)
    return Drawn(opened, draw_view(opened.record, opened.view, score, cells, words, opened.made_by, width,
                                   request=request))


def adopt_page_width(width) -> float | None:
    """The page width the browser reported (px), or None (unknown: an API client, or not a number)."""
    try:
        width = float(width)
    except (TypeError, ValueError):
        return None
    return width if 100 <= width <= 100_000 else None
