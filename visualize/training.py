"""Training curves as a plotly figure (train loss, validation loss, the learning rate or the exact match against the
step), and the rule that thins every drawn curve (`downsample_indices`). The Train tab's live curves are SVG
(visualize.line_chart): a plotly figure per update kept the page's memory growing (issue 19)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .style import BAR_COLOR, HIGHLIGHT_COLOR, LEGEND_BELOW, as_array, style_figure

MAX_POINTS = 500  # a browser redrawing a live plot several times a second should not get thousands of points
EXACT_COLOR = "rgb(49,163,84)"


def downsample_indices(n: int, max_points: int = MAX_POINTS) -> np.ndarray:
    """At most `max_points` evenly spread indices into a series of length n, always keeping the first and last."""
    if n <= max_points:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, max_points).round().astype(int))


def _series(values, name: str, n: int) -> np.ndarray:
    array = as_array(values, 1, name)
    if len(array) != n:
        raise ValueError(f"{name} has {len(array)} values but there are {n} steps")
    return array


def training_curves(steps, losses, val_steps=(), val_losses=(), lrs=None, title="", exact_match=None,
                    max_points: int = MAX_POINTS) -> go.Figure:
    """Train loss (a line), validation loss (markers) and, on a right axis, either the exact match of each
    evaluation (`exact_match`, fractions 0..1 at `val_steps`, drawn in %) or, when `lrs` is given, the learning
    rate (dotted). Not both: the figure has one right axis.

    A long train series is thinned to at most `max_points` points (first and last kept) so live updates stay fast.
    """
    if lrs is not None and exact_match is not None:
        raise ValueError("give lrs or exact_match, not both: the figure has one right axis")
    steps = as_array(steps, 1, "steps")
    losses = _series(losses, "losses", len(steps))
    val_steps = as_array(val_steps, 1, "val_steps")
    val_losses = _series(val_losses, "val_losses", len(val_steps))
    keep = downsample_indices(len(steps), max_points)
    right = lrs is not None or exact_match is not None
    fig = make_subplots(specs=[[{"secondary_y": True}]]) if right else go.Figure()
    fig.add_trace(go.Scatter(x=steps[keep], y=losses[keep], mode="lines", name="train loss",
                             line=dict(color=BAR_COLOR, width=2)))
    fig.add_trace(go.Scatter(x=val_steps, y=val_losses, mode="markers+lines", name="validation loss",
                             line=dict(color=HIGHLIGHT_COLOR, width=2), marker=dict(size=9)))
    if lrs is not None:
        lrs = _series(lrs, "lrs", len(steps))
        fig.add_trace(go.Scatter(x=steps[keep], y=lrs[keep], mode="lines", name="learning rate",
                                 line=dict(color="rgb(90,90,90)", width=2, dash="dot")), secondary_y=True)
        # tick labels inside the plot: outside, the bottom one ("0.0e+0") collides with the last step label on
        # a phone-wide figure
        fig.update_yaxes(title_text="learning rate", secondary_y=True, showgrid=False, tickformat=".1e",
                         rangemode="tozero", ticklabelposition="inside")
    if exact_match is not None:
        exact = 100 * _series(exact_match, "exact_match", len(val_steps))
        fig.add_trace(go.Scatter(x=val_steps, y=exact, mode="markers+lines", name="exact match (%)",
                                 line=dict(color=EXACT_COLOR, width=2, dash="dash"), marker=dict(size=8,
                                 symbol="diamond")), secondary_y=True)
        fig.update_yaxes(title_text="exact match (%)", secondary_y=True, showgrid=False, range=[0, 105],
                         ticklabelposition="inside")
    fig.update_xaxes(title_text="step")
    fig.layout.yaxis.update(title_text="loss (nats/token)", rangemode="tozero")  # the primary (left) axis
    return style_figure(fig, title, uirevision="training",  # keeps a user's zoom while the curves stream in
                        legend=LEGEND_BELOW)  # under the plot: above it, it would cover the title


def empty_curves(message) -> go.Figure:
    """A blank figure that only says `message` in the middle (shown before training starts)."""
    fig = go.Figure()
    fig.add_annotation(text=message, x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False,
                       font=dict(size=20, color="#666666"))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return style_figure(fig)
