"""The figure of every patching grid (activation patching, direct logit attribution, path patching): one value per
cell, rows and columns labelled, each cell's value written in it and its full description in the hover.

Plain values in: a (rows, columns) array (NaN where there is nothing to measure), a label per row and column, and
one line per cell saying what it is (the tabs pass the library's Grid.cell). The colour is diverging around 0 (red
= the clean run's direction, blue = the other way), so 0 (the corrupted run) is white.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .style import DIVERGING_COLORSCALE, FRAME, as_array, axis_labels, colorbar, style_figure

WRITTEN_CELLS = 400  # up to this many cells each has its value written in; past it only the hover and the caption


def _written(v: float, columns: int) -> str:
    """A cell's value as written in it: shorter when the columns are many (plotly sizes text to its cell)."""
    if not np.isfinite(v):
        return ""
    return f"{v:.2f}" if columns <= 8 else f"{v:.1f}"


def patching_grid(values, rows, columns, hover, title: str, scale: str, row_title: str = "",
                  column_title: str = "", chosen: tuple[int, int] | None = None) -> go.Figure:
    """A heatmap of `values` (rows, columns): `rows` and `columns` label the axes (plotted at integer positions, so a
    repeated token keeps its own row), `hover` (rows x columns strings) says what each cell is, `scale` names the
    colour bar; `chosen` (row, column) is outlined. NaN cells stay blank and say "no path" in the hover."""
    v = as_array(values, 2, "values").astype(np.float64)  # (R, C)
    R, C = v.shape
    if len(rows) != R or len(columns) != C:
        raise ValueError(f"{R} x {C} values need {R} row labels and {C} column labels, got {len(rows)} and "
                         f"{len(columns)}")
    finite = v[np.isfinite(v)]
    bound = float(np.abs(finite).max()) if finite.size else 1.0
    bound = max(bound, 1e-6)
    text = [[_written(x, C) for x in row] for row in v] if R * C <= WRITTEN_CELLS else None
    fig = go.Figure(go.Heatmap(
        z=np.where(np.isfinite(v), v, None).tolist(), x=list(range(C)), y=list(range(R)), zmin=-bound, zmax=bound,
        zmid=0, colorscale=DIVERGING_COLORSCALE, customdata=[[str(h) for h in row] for row in hover],
        hovertemplate="%{customdata}<extra></extra>", text=text, texttemplate="%{text}" if text else None,
        xgap=1, ygap=1, colorbar=colorbar(scale)))
    fig.update_xaxes(title_text=column_title, type="category", tickmode="array", tickvals=list(range(C)),
                     ticktext=axis_labels(columns), showgrid=False, **FRAME)
    fig.update_yaxes(title_text=row_title, type="category", tickmode="array", tickvals=list(range(R)),
                     ticktext=axis_labels(rows), autorange="reversed", showgrid=False, **FRAME)
    if chosen is not None:
        r, c = chosen
        fig.add_shape(type="rect", x0=c - 0.5, x1=c + 0.5, y0=r - 0.5, y1=r + 0.5,
                      line=dict(color="black", width=3))
    style_figure(fig, title, height=max(300, 160 + 34 * R))
    return fig
