"""The Attention tab's figures cached on what each depends on, serialised once for every user (a class sends the
same few inputs and steps through the same heads)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

import visualize as viz

from limits import FIGURES_BYTES, FIGURES_KEPT
from store.record_cache import RecordCache
from tabs.attention.drawing import draw_figures, selected
from tabs.attention.views import SHOW, draw_caption
from widgets.answers import Answer
from widgets.errors import handler
from widgets.figure_caption import with_caption
from widgets.figure_table import Plot


@dataclass(frozen=True)
class Figures(Answer):
    """The tab's four figures, each field the tab's component of its name (widgets.answers):
    one head (its caption in it), all heads of its layer, the layers x heads overview, the per-head table."""

    one: Any = None
    grid: Any = None
    overview: Any = None
    table: Any = None


class _FigureCache(RecordCache):
    """Figures of shared records, serialised once for every user: a RecordCache whose values are build()'s tuples
    with each plotly figure as gr.Plot sends it."""

    def __init__(self, size: int, max_bytes: int):
        super().__init__(size, max_bytes)
        self._plot = Plot()  # each figure named and described (widgets.figure_table) once, for everyone

    def get(self, record, key: tuple, build):
        return super().get(record, key, lambda: tuple(self._plot.postprocess(v) if hasattr(v, "to_plotly_json")
                                                      else v for v in build()))


FIGURES = _FigureCache(FIGURES_KEPT, FIGURES_BYTES)


def draw_cached(record, kind, layer, head, score, show=SHOW[0], words=False, made_by=None, width=None,
                request: gr.Request = None) -> Figures:
    """draw_figures, each figure cached on what it depends on: the one-head heatmap on (kind, layer, head), the grid
    on (kind, layer), the overview and the table on (kind, score), each also on the view (show, words), the first two
    also on whether the page's `width` is a phone's. The one-head heatmap carries its head's caption
    (widgets.figure_caption: the page shows under it the caption of the heatmap drawn, never another's)."""
    if record is None:
        return Figures()
    view = (show, words, made_by, request)
    pattern, layer, head = selected(record, kind, layer, head, view)
    kind, args, shown = pattern.kind, (record, pattern.kind, layer, head, score), (show, bool(words))
    narrow = viz.narrow_page(width)  # a phone's figures differ (tick labels, the grid's columns)
    one, = FIGURES.get(record, ("one", kind, layer, head, narrow) + shown, lambda: (with_caption(
        *draw_figures(*args, parts=("one",), view=view, width=width),
        draw_caption(record, kind, layer, head, show, words, made_by, request=request)),))
    grid, = FIGURES.get(record, ("grid", kind, layer, narrow) + shown,
                        lambda: draw_figures(*args, parts=("grid",), view=view, width=width))
    overview, table = FIGURES.get(record, ("overview", kind, score) + shown,
                                  lambda: draw_figures(*args, parts=("overview", "table"), view=view))
    return Figures(one, grid, overview, table)


draw_attention = handler(draw_cached)


def draw_view(record, view, score, *shown, request: gr.Request = None) -> Figures:
    """The figures of the head a computation chose to open on (`view` = (kind, layer, head)), its caption in the
    heatmap, as `shown` = (cells, words, made_by, page width) asks, in one call (each call costs the page a round of
    status updates: tests/browser/test_translation_demo.py)."""
    if record is None or not view:
        return Figures()
    return draw_attention(record, *view, score, *shown, request=request)
