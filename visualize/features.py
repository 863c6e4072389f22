"""The figures of "What the heads write" (issue 42): which heads write each sparse feature, and where in the input
one feature fires. Plain numbers in (shares, activations, tokens), a go.Figure out."""
from __future__ import annotations

import math

import plotly.graph_objects as go

from .sizes import MIN_CELL_PX, MIN_LABEL_PX, figure_size
from .style import (BAR_COLOR, FRAME, HIGHLIGHT_COLOR, LEGEND_BELOW, as_array, axis_labels, style_figure,
                    token_axis)

HEAD_COLOURS = ["rgb(33,102,172)", "rgb(230,85,13)", "rgb(49,130,74)", "rgb(117,107,177)", "rgb(140,81,10)",
                "rgb(197,27,125)", "rgb(1,102,94)", "rgb(82,82,82)"]  # told apart by the text beside each bar too
BAR_FONT = 14  # px: the head label and share written beside each bar (never below MIN_LABEL_PX)
BAR_PX = max(MIN_CELL_PX, math.ceil(1.25 * BAR_FONT + 4))  # one head's bar: holds its text on one line
_AROUND_Y = 150  # px: title, axis title and the legend under the plot
_FEATURE_GAP = 0.25  # of a feature's band left between features
_STRIP_GAP = 0.2  # of a position's column left between bars
STRIP_COLUMN_PX = math.ceil(MIN_CELL_PX / (1 - _STRIP_GAP))  # a position's column: its bar MIN_CELL_PX wide


def heads_bars(shares, feature_labels, head_labels, title: str = "") -> go.Figure:
    """The heads that write each feature: shares (n, H), row j the part of feature j's unit decoder row each head
    writes (its rows sum to 1), as one horizontal bar per head, the features down, each bar written with its head's
    label and share ("3.1 62%"): the text says which head a bar is, the colour only repeats it."""
    s = as_array(shares, 2, "shares")  # (n, H)
    n, H = s.shape
    if len(feature_labels) != n or len(head_labels) != H:
        raise ValueError(f"need {n} feature labels and {H} head labels, got {len(feature_labels)} and "
                         f"{len(head_labels)}")
    fig = go.Figure()
    for h in range(H):
        colour = HEAD_COLOURS[h % len(HEAD_COLOURS)]
        fig.add_trace(go.Bar(
            x=s[:, h], y=list(range(n)), orientation="h", name=f"head {head_labels[h]}", marker_color=colour,
            text=[f"{head_labels[h]} {v:.0%}" for v in s[:, h]], textposition="outside", textangle=0,
            textfont=dict(size=BAR_FONT, color="#222222"), constraintext="none", cliponaxis=False,
            customdata=axis_labels(feature_labels),
            hovertemplate=f"%{{customdata}}: head {head_labels[h]} writes %{{x:.1%}}<extra></extra>"))
    fig.update_layout(barmode="group", bargap=_FEATURE_GAP, bargroupgap=0.05, legend=LEGEND_BELOW,
                      legend_font_size=BAR_FONT)
    fig.update_xaxes(title_text="share the head writes", tickformat=".0%",
                     range=[0, 1.3], tickvals=[0, 0.5, 1], **FRAME)
    fig.update_yaxes(autorange="reversed", type="category", tickmode="array", tickvals=list(range(n)),
                     ticktext=[str(label) for label in feature_labels], tickfont=dict(size=BAR_FONT), **FRAME)
    height = _AROUND_Y + math.ceil(n * H * BAR_PX / (1 - _FEATURE_GAP))
    return style_figure(fig, title, height=max(260, height))


def activation_strip(activations, tokens, title: str = "", chosen: int | None = None,
                     container_px: float | None = None, axis_title: str = "position (the token it reads)"
                     ) -> go.Figure:
    """Where one feature fires in this input: its activation at each position, activations (T,), one bar per
    position labelled by its token; `chosen` (the position the section reads) drawn in the highlight colour and
    written with its value. Every position keeps a bar and a label of at least MIN_CELL_PX / MIN_LABEL_PX: with
    `container_px`, the width of the figure's box, a figure whose positions do not fit is wider than the box and
    the page scrolls it sideways (visualize.sizes.figure_size)."""
    a = as_array(activations, 1, "activations")  # (T,)
    T = len(a)
    if len(tokens) != T:
        raise ValueError(f"{T} activations but {len(tokens)} tokens")
    colours = [HIGHLIGHT_COLOR if t == chosen else BAR_COLOR for t in range(T)]
    top = float(a.max()) if T and a.max() > 0 else 1.0
    text = [f"{v:.2f}" if t == chosen else "" for t, v in enumerate(a)]
    fig = go.Figure(go.Bar(x=list(range(T)), y=a, marker_color=colours, text=text, textposition="outside",
                           textangle=0, textfont=dict(size=BAR_FONT), constraintext="none", cliponaxis=False,
                           customdata=axis_labels(tokens),
                           hovertemplate="%{customdata} (position %{x}): %{y:.3f}<extra></extra>"))
    around_x = 70.0  # the activation axis' labels and title
    size = figure_size(T, 1, container_px or 1e9, around_x, 0, STRIP_COLUMN_PX, 1)
    axis_px = (size.width or container_px or 0) - around_x if container_px else None
    fig.update_xaxes(title_text=axis_title, **token_axis(tokens, axis_px=axis_px), **FRAME)
    fig.update_yaxes(title_text="activation", range=[0, top * 1.2], rangemode="tozero",
                     tickfont=dict(size=max(MIN_LABEL_PX, BAR_FONT)), **FRAME)
    layout = {"width": size.width} if size.width else {}
    return style_figure(fig, title, height=340, bargap=_STRIP_GAP, **layout)
