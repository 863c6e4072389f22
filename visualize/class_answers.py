"""A class's answers (issue 39), from plain data: how the class split over a question's choices (a bar per choice,
the right one marked only once revealed), the class's guesses on a heatmap (a count per cell, on the axes of the
model's heatmap, to be drawn beside it once revealed), and the grid a student taps to answer "which key will this query read?"
(an HTML string: a button per cell of the row asked, the other cells blank; no weights are in it, so nothing of the
answer is given away before the reveal).
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from visualize.attention import head_heatmap
from visualize.style import (ATTENTION_COLORSCALE, BAR_COLOR, HIGHLIGHT_COLOR, style_figure, visible_whitespace,
                             written_cells)
from visualize.text import html_text


def class_split(choices, counts, right: int | None = None, title: str = "") -> go.Figure:
    """A bar per choice: how many students chose it (its count written on it). `right` (the index of the right
    choice, given only after the reveal) is drawn in the highlight colour and named in the legend text."""
    counts = [int(c) for c in counts]
    if len(counts) != len(choices):
        raise ValueError(f"{len(choices)} choices but {len(counts)} counts")
    colors = [HIGHLIGHT_COLOR if i == right else BAR_COLOR for i in range(len(choices))]
    fig = go.Figure(go.Bar(x=list(range(len(choices))), y=counts, text=[str(c) for c in counts],
                           textposition="outside", marker_color=colors, cliponaxis=False,
                           customdata=[html_text(str(c)) for c in choices],
                           hovertemplate="%{customdata}: %{y} students<extra></extra>"))
    answered = sum(counts)
    said = title or f"How the class answered ({answered} answer{'s' if answered != 1 else ''})"
    if right is not None:
        said += f", right: {choices[right]}"
    style_figure(fig, said, height=320)
    fig.update_xaxes(tickvals=list(range(len(choices))), ticktext=[html_text(str(c)) for c in choices])
    fig.update_yaxes(title_text="students", rangemode="tozero", range=[0, max(counts + [1]) * 1.25],
                     dtick=max(1, (max(counts + [1]) + 4) // 5))
    return fig


def guess_heatmap(rows, columns, guesses, title: str = "") -> go.Figure:
    """The class's guesses as a heatmap on the axes of the model's (rows: the queries, columns: the keys): each cell
    of a row asked about (`guesses`: (row, counts per key column) pairs, store.classes.Classroom.guesses) says how
    many students tapped or picked it, and is coloured by its share of the row's answers on the attention's own
    scale (a row of guesses sums to 1 as a row of weights does; the model's heatmap beside it reads the same way).
    Rows not asked are blank.

    Drawn for a phone (head_heatmap's narrow figure, as the class is shown the model's: tabs.classroom.teacher): its
    cells and labels keep their least size on a phone, and a projector's wider box gives them more (the figure's
    width is its box's when they fit; past a phone's box it is wider, and the page scrolls it sideways).
    """
    T, S = len(rows), len(columns)
    counts = np.full((T, S), np.nan)  # (T, S): NaN where no row was asked
    for row, given in guesses:
        if not 0 <= row < T:
            raise ValueError(f"row {row} is not among the {T} rows")
        counts[row] = 0
        counts[row, : len(given)] = np.asarray(given[:S], dtype=float)
    totals = np.nansum(counts, axis=1, keepdims=True)  # (T, 1)
    share = np.divide(counts, totals, out=np.where(np.isnan(counts), np.nan, 0.0), where=totals > 0)  # (T, S)
    answered = int(np.nansum(counts))
    said = title or f"The class's guesses ({answered} answer{'s' if answered != 1 else ''})"
    fig = head_heatmap(share, rows, columns, said, narrow=True, value="share")
    text = np.where(np.isnan(counts), "", np.nan_to_num(counts).astype(int).astype(str))  # (T, S)
    fig.add_traces(written_cells(share, text, ATTENTION_COLORSCALE, 0, 1, x=list(range(S)), y=list(range(T)),
                                 textfont=dict(size=fig.layout.yaxis.tickfont.size)))
    fig.update_traces(selector=dict(name=""), text=text.tolist(),  # the counts, read by hover and the figure's table
                      hovertemplate="%{customdata[0]} → %{customdata[1]}: %{text} students, %{z:.0%} of the row's "
                      "answers<extra></extra>")
    return fig


def tap_grid(rows, columns, row: int, chosen: int | None = None) -> str:
    """The grid a student taps: the query tokens down the side, the key tokens along the top, a button in each cell
    of row `row` (the query asked about) carrying its column (data-column), the cell `chosen` marked. Cells of the
    other rows are blank and inert."""
    if not 0 <= row < len(rows):
        raise ValueError(f"row {row} is not among the {len(rows)} rows")
    head = "".join(f"<th scope='col'>{html_text(visible_whitespace(c))}</th>" for c in columns)
    lines = []
    for i, label in enumerate(rows):
        cells = []
        for j, column in enumerate(columns):
            if i == row:
                mark = " chosen" if j == chosen else ""
                cells.append(f"<td><button class='tap-cell{mark}' data-column='{j}' aria-label='key {j + 1}: "
                             f"{html_text(visible_whitespace(column))}'>{'✓' if mark else ''}"
                             "</button></td>")
            else:
                cells.append("<td class='blank'></td>")
        asked = " class='asked'" if i == row else ""
        lines.append(f"<tr{asked}><th scope='row'>{html_text(visible_whitespace(label))}</th>{''.join(cells)}</tr>")
    return (f"<div class='tap-grid-box'><table class='tap-grid'><tr><th></th>{head}</tr>{''.join(lines)}</table>"
            "</div>")
