"""The figure of every patching grid (activation patching, direct logit attribution, path patching): one value per
cell, rows and columns labelled, each cell's value written in it and its full description in the hover.

Plain values in: a (rows, columns) array (NaN where there is nothing to measure), a label per row and column, and
one line per cell saying what it is (the tabs pass the library's Grid.cell). The colour is diverging around 0 (red
= the clean run's direction, blue = the other way), so 0 (the corrupted run) is white.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .sizes import MIN_CELL_PX, MIN_LABEL_PX, figure_size
from .style import (CHAR_WIDTH, DIVERGING_COLORSCALE, FRAME, as_array, colorbar, cut_label, style_figure,
                    written_cells)
from .text import html_text

WRITTEN_CELLS = 400  # up to this many cells each has its value written in; past it only the hover and the caption
CELL_FONT = 13  # px of a written value (at least MIN_LABEL_PX)
_AROUND_Y = 150  # px above and below the cells: title, upright position labels, axis title


def _written(v: float, columns: int) -> str:
    """A cell's value as written in it, its sign always written (the colour is not the only sign of it): two
    decimals up to 8 columns ("+0.25", "-0.10", "0.00"), else one and no leading zero ("+.9", "-.1", "0")."""
    if not np.isfinite(v):
        return ""
    if columns <= 8:
        text = f"{v:+.2f}"
        return "0.00" if float(text) == 0 else text
    text = f"{v:+.1f}"
    return "0" if float(text) == 0 else text.replace("0.", ".")


def _escaped(labels, cut: bool = False) -> list[str]:
    """Labels as plotly shows them: as text (`<s>` would vanish as markup; visualize.text), spaces as they are; with
    `cut`, each cut past MAX_LABEL_CHARS (style.cut_label). Only the columns' labels are cut (positions read with
    their tokens, which can be long): the rows' labels are the app's own ("decoder self 1 query", whose end is what
    tells the three inputs apart) and the figure's margin is sized to them, and a hover is always whole."""
    return [html_text(cut_label(str(label)) if cut else str(label)) for label in labels]


def patching_grid(values, rows, columns, hover, title: str, scale: str, row_title: str = "",
                  column_title: str = "", chosen: tuple[int, int] | None = None,
                  container_px: float | None = None) -> go.Figure:
    """A heatmap of `values` (rows, columns): `rows` and `columns` label the axes (plotted at integer positions, so a
    repeated token keeps its own row), `hover` (rows x columns strings) says what each cell is, `scale` names the
    colour bar; `chosen` (row, column) is outlined. NaN cells stay blank. With `container_px`, the width of the
    figure's box, every column keeps the width its written value needs (at least MIN_CELL_PX; visualize.sizes): a
    grid too wide for the box is wider than it, and the page scrolls it sideways."""
    v = as_array(values, 2, "values").astype(np.float64)  # (R, C)
    R, C = v.shape
    if len(rows) != R or len(columns) != C:
        raise ValueError(f"{R} x {C} values need {R} row labels and {C} column labels, got {len(rows)} and "
                         f"{len(columns)}")
    finite = v[np.isfinite(v)]
    bound = float(np.abs(finite).max()) if finite.size else 1.0
    bound = max(bound, 1e-6)
    text = [[_written(x, C) for x in row] for row in v] if R * C <= WRITTEN_CELLS else None
    widest = max((len(t) for row in text for t in row), default=1) if text else 0
    column_px = max(MIN_CELL_PX, CHAR_WIDTH * CELL_FONT * widest + 8)
    label_px = CHAR_WIDTH * 14 * max((len(str(r)) for r in rows), default=1) + 40
    size = figure_size(C, R, container_px or 1e9, label_px + 60, _AROUND_Y, column_px, max(MIN_CELL_PX, 30))
    placed = dict(x=list(range(C)), y=list(range(R)), xgap=1, ygap=1)
    fig = go.Figure(go.Heatmap(
        z=np.where(np.isfinite(v), v, None).tolist(), zmin=-bound, zmax=bound, zmid=0, **placed,
        colorscale=DIVERGING_COLORSCALE, customdata=[_escaped(row) for row in hover],
        hovertemplate="%{customdata}<extra></extra>", text=text, colorbar=colorbar(scale)))
    if text:
        fig.add_traces(written_cells(v, text, DIVERGING_COLORSCALE, -bound, bound,
                                     textfont=dict(size=max(CELL_FONT, MIN_LABEL_PX)), **placed))
    # labels turn upright rather than slant: the written signs widened the residual grid's columns, and plotly's
    # 30° labels ("0 '2'/'g'") then overlapped by 3-11 px (tests/browser/test_fit_the_screen.py)
    ticks = dict(type="category", tickmode="array", showgrid=False, tickfont=dict(size=14), autotickangles=[0, 90],
                 **FRAME)
    fig.update_xaxes(title_text=column_title, tickvals=list(range(C)), ticktext=_escaped(columns, cut=True), **ticks)
    fig.update_yaxes(title_text=row_title, tickvals=list(range(R)), ticktext=_escaped(rows), autorange="reversed",
                     **ticks)
    if chosen is not None:
        r, c = chosen
        fig.add_shape(type="rect", x0=c - 0.5, x1=c + 0.5, y0=r - 0.5, y1=r + 0.5,
                      line=dict(color="black", width=3))
    style_figure(fig, title, height=max(300, size.height), **({"width": size.width} if size.width else {}))
    return fig
