"""A score for every head: the layers x heads overview (values written in its cells) and the per-head table."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .margins import PAD, axis_px, text_px
from .style import ATTENTION_COLORSCALE, FONT, as_array, style_figure, written_cells

UNBOUNDED_SCORES = {"entropy", "mean distance"}  # coloured by their data range; the other scores lie in 0..1
DARK_MEANS = {("entropy", True): "sharp", ("entropy", False): "spread out"}  # (score, low_is_interesting) -> words
_BELOW_AXIS, _OVERVIEW_BOTTOM = 58, 142  # px: the overview's axis labels and title; its bottom margin
# (the colour bar's 84 px under those: measured)


def _cell_text(s: np.ndarray, bounded: bool) -> list[list[str]]:
    """The numbers written in the overview's cells, shorter as the heads (columns) get more and narrower: plotly
    sizes the text to its cell by the number of characters, so fewer characters stay readable on a phone.
    Up to 4 heads "0.86" and "2.31"; up to 8 ".86" and "2.3"; more: ".9" and "2.3"."""
    H = s.shape[1]

    def fmt(v: float) -> str:
        if not np.isfinite(v):
            return ""
        if H <= 4:
            return f"{v:.2f}"
        if not bounded:
            return f"{v:.0f}" if abs(v) >= 10 else f"{v:.1f}"
        text = f"{v:.2f}" if H <= 8 else f"{v:.1f}"
        return "1" if float(text) == 1 else text.replace("0.", ".", 1)
    return [[fmt(v) for v in row] for row in s.tolist()]


def overview(scores, score_name, title="", low_is_interesting=False) -> go.Figure:
    """One score for every head, scores (L, H): layers down (layer 0 at the top), heads across, values written in.

    The colour runs from white to dark so that the interesting heads are dark: high values by default, low ones
    with `low_is_interesting` (entropy: a sharp head has a low entropy); the colour bar's title says which. The
    bar lies under the plot, leaving the cells the figure's whole width.
    The numbers shrink to fit their cells (white on dark cells); with more than 4 heads they are written shorter.
    """
    s = as_array(scores, 2, "scores")  # (L, H)
    L, H = s.shape
    bounded = score_name not in UNBOUNDED_SCORES
    if bounded:
        zmin, zmax = 0.0, 1.0
    else:
        finite = s[np.isfinite(s)]
        zmin, zmax = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    low = bool(low_is_interesting)
    meaning = DARK_MEANS.get((score_name, low), "low" if low else "high")
    text, cells = _cell_text(s, bounded), dict(x=list(range(H)), y=list(range(L)), xgap=2, ygap=2)
    fig = go.Figure(go.Heatmap(
        z=s, zmin=zmin, zmax=zmax, colorscale=ATTENTION_COLORSCALE, reversescale=low, text=text, **cells,
        hovertemplate=f"layer %{{y}}, head %{{x}}<br>{score_name}: %{{z:.3f}}<extra></extra>"))
    fig.add_traces(written_cells(s, text, ATTENTION_COLORSCALE, zmin, zmax, reversescale=low, **cells))
    numbered = dict(type="category", tickmode="auto", tickfont=dict(size=14), showgrid=False)  # thinned if crowded
    fig.update_xaxes(title_text="head", **numbered)
    fig.update_yaxes(title_text="layer", autorange="reversed", **numbered)
    height = max(330, 220 + 45 * L)
    style_figure(fig, title, height=height)
    # The colour bar lies flat under the "head" axis title: placed in pixels (plotly places a flat bar's title
    # right only relative to the plot area), so that it never covers the axis.
    plot_height = height - fig.layout.margin.t - _OVERVIEW_BOTTOM
    fig.update_layout(margin=dict(  # what its labels need (visualize.margins), so plotly draws it once
        l=axis_px([str(layer) for layer in range(L)], 14, FONT["size"], along_x=False, ticks=False),
        r=math.ceil(PAD + text_px(str(H - 1), 14) / 2), b=_OVERVIEW_BOTTOM))
    fig.update_traces(colorbar=dict(orientation="h", y=-_BELOW_AXIS / plot_height, yanchor="top", thickness=14,
                                    title=dict(text=f"{score_name} (dark = {meaning})", side="top")))
    return fig


def scores_table(scores) -> pd.DataFrame:
    """Per-head scores {name: (L, H)} (from transformer.interpretability.analysis.head_scores) as rows: layer, head, one column each."""
    arrays = {name: as_array(values, 2, name).astype(np.float64) for name, values in scores.items()}
    if not arrays:
        return pd.DataFrame(columns=["layer", "head"])
    shapes = {a.shape for a in arrays.values()}
    if len(shapes) > 1:
        raise ValueError(f"every score must have the same (layers, heads) shape, got {sorted(shapes)}")
    L, H = shapes.pop()
    columns = {"layer": np.repeat(np.arange(L), H), "head": np.tile(np.arange(H), L)}
    columns.update({name: a.reshape(-1).round(3) for name, a in arrays.items()})
    return pd.DataFrame(columns)
