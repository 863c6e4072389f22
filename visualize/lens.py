"""The logit lens: a layers x positions grid of each layer's top prediction, and one position's final token
across the layers."""
from __future__ import annotations

import html
import math

import numpy as np
import plotly.graph_objects as go

from .sizes import MIN_CELL_PX, figure_size
from .style import (ATTENTION_COLORSCALE, BAR_COLOR, CHAR_WIDTH, FRAME, HIGHLIGHT_COLOR, LINE_HEIGHT, as_array,
                    axis_labels, colorbar, style_figure, tick_labels, written_cells)


CELL_CHARS = 6  # a cell writes at most this many characters of its token ("Espíri…"); the hover has the whole token
CELL_FONT = 14  # px: the cells' text and the labels, when the cells are wide enough (never below MIN_LABEL_PX)
_ROW_PX = 36  # px: a row of the grid with the positions across
_AROUND_Y = 170  # px above and below the cells: title, axis title, the colour bar under the plot
_BAR_BELOW = 75  # px from the cells' lower edge to the flat colour bar (under the tick labels and the axis title)
_ABOVE_TURNED, _BELOW_TURNED, _BAR_BELOW_TURNED = 34, 80, 16  # turned: the layers' labels and title on top


def short_rows(row_labels, layer: str = "") -> list[str]:
    """"embedding", "layer 0", ... as "emb", "0", ... (with `layer` "L": "emb", "L0", ...): labels that fit side by
    side on a phone."""
    return [label.replace("embedding", "emb").replace("layer ", layer) for label in row_labels]


def _cell_text(token) -> str:
    token = str(token)
    return token if len(token) <= CELL_CHARS else token[:CELL_CHARS - 1] + "…"


def _column_px(texts, font: int) -> float:
    """The width a column needs to write the longest of `texts` in a `font` px font, at least MIN_CELL_PX."""
    widest = max((len(html.unescape(t)) for row in texts for t in row), default=1)
    return max(MIN_CELL_PX, math.ceil(CHAR_WIDTH * font * widest + 8))


def _label_px(labels, font: int) -> float:
    """The width of the widest of `labels` in a `font` px font, and the tick's gap."""
    return CHAR_WIDTH * font * max((len(html.unescape(str(label))) for label in labels), default=1) + 12


def logit_lens_grid(top_tokens, top_probs, row_labels, position_tokens, title="", chosen: int | None = None,
                    container_px: float | None = None) -> go.Figure:
    """top_tokens (rows, T) written in the cells, coloured by their probability top_probs (rows, T): rows are the
    embedding and then each layer; the positions are labelled by the token each reads. `chosen` marks one
    position with a frame.

    Every cell writes its top token (up to CELL_CHARS characters; the hover has it whole) in a CELL_FONT px font,
    never smaller than MIN_LABEL_PX, and every position is labelled. With `container_px`, the width of the figure's
    box, the cells keep the width their text needs (visualize.sizes.figure_size): positions across when they fit
    the box, else turned (positions down, layers across, taller instead of wider); when even that is wider than the
    box, the figure is wider than it and the page scrolls it sideways. Without it (an API client) the positions go
    across at the box's width.
    """
    p = as_array(top_probs, 2, "top_probs")  # (rows, T)
    R, T = p.shape
    if len(top_tokens) != R or any(len(row) != T for row in top_tokens):
        raise ValueError(f"top_tokens must be {R} rows of {T} tokens, like top_probs")
    if len(row_labels) != R or len(position_tokens) != T:
        raise ValueError(f"need {R} row labels and {T} position tokens, got {len(row_labels)} and "
                         f"{len(position_tokens)}")
    text = [axis_labels([_cell_text(t) for t in row]) for row in top_tokens]
    positions = tick_labels(position_tokens)
    font = CELL_FONT
    column = _column_px(text, font)
    across = figure_size(T, R, container_px or 1e9, _label_px(row_labels, font) + 20, _AROUND_Y, column, _ROW_PX)
    turned = container_px is not None and across.width is not None and T > R
    size = across
    if turned:
        size = figure_size(R, T, container_px, _label_px(positions, font) + 20, _AROUND_Y, column,
                           max(MIN_CELL_PX, math.ceil(LINE_HEIGHT * font + 6)))
    hover = np.array([axis_labels(position_tokens)] * R, dtype=object)  # (rows, T): each token whole
    z, cells, custom = (p.T, [list(r) for r in zip(*text)], hover.T) if turned else (p, text, hover)
    placed = dict(x=list(range(z.shape[1])), y=list(range(z.shape[0])), xgap=1, ygap=1)
    fig = go.Figure(go.Heatmap(
        z=z, zmin=0, zmax=1, colorscale=ATTENTION_COLORSCALE, text=cells, customdata=custom, **placed,
        hovertemplate="position reading %{customdata}:<br>top %{text}, p = %{z:.2f}<extra></extra>",
        colorbar=dict(colorbar("probability of the top token", orientation="h", yanchor="top"),
                      title_side="top")))
    fig.add_traces(written_cells(z, cells, ATTENTION_COLORSCALE, 0, 1, textfont=dict(size=font), **placed))
    position_axis = dict(title_text="position (the token it reads)", type="category", tickmode="array",
                         tickvals=list(range(T)), ticktext=positions, tickfont=dict(size=font), **FRAME)
    if turned:  # the layers across, on top: short labels ("emb", "L0", ...) side by side, no title under the title
        fig.update_xaxes(side="top", type="category", tickmode="array",
                         tickvals=list(range(R)), ticktext=short_rows(row_labels, "L"), tickangle=0,
                         tickfont=dict(size=font), **FRAME)
        fig.update_yaxes(autorange="reversed", **position_axis)
    else:
        fig.update_xaxes(**position_axis)
        fig.update_yaxes(autorange="reversed", type="category", tickmode="array", tickvals=list(range(R)),
                         ticktext=list(row_labels), tickfont=dict(size=font), **FRAME)
    if chosen is not None and 0 <= chosen < T:
        frame = dict(x0=-0.5, x1=R - 0.5, y0=chosen - 0.5, y1=chosen + 0.5) if turned else \
            dict(x0=chosen - 0.5, x1=chosen + 0.5, y0=-0.5, y1=R - 0.5)
        fig.add_shape(type="rect", line=dict(color=HIGHLIGHT_COLOR, width=3), **frame)
    height = max(320, size.height)
    style_figure(fig, title, height=height, top_space=_ABOVE_TURNED if turned else 0,
                 **({"width": size.width} if size.width else {}))
    below, bar = (_BELOW_TURNED, _BAR_BELOW_TURNED) if turned else (_AROUND_Y - 34, _BAR_BELOW)
    plot_height = height - fig.layout.margin.t - below  # the cells' height, as plotly lays them out
    fig.update_layout(margin_b=below)
    fig.update_traces(colorbar_y=-bar / max(plot_height, 1))
    return fig


def final_token_curve(probs, row_labels, token: str, title="") -> go.Figure:
    """The probability, after each row (embedding, layer 0, ...), of the token the model finally predicts at one
    position: probs (rows,)."""
    p = as_array(probs, 1, "probs")
    if len(row_labels) != len(p):
        raise ValueError(f"{len(p)} probabilities but {len(row_labels)} row labels")
    fig = go.Figure(go.Scatter(x=list(range(len(p))), y=p, mode="lines+markers", line=dict(color=BAR_COLOR, width=3),
                               marker=dict(size=10), name=axis_labels([token])[0],
                               hovertemplate="%{y:.3f}<extra></extra>"))
    short = short_rows(row_labels)  # fits a phone
    fig.update_xaxes(title_text="after layer (emb: embedding)", tickmode="array", tickvals=list(range(len(p))),
                     ticktext=short, range=[-0.5, len(p) - 0.5])
    fig.update_yaxes(title_text=f"p({axis_labels([token])[0]})", range=[0, 1.02])
    return style_figure(fig, title, height=320)
