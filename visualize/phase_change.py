"""The induction phase change on one time axis: the loss above, the best previous-token and induction scores below."""
from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .style import BAR_COLOR, HIGHLIGHT_COLOR, LEGEND_BELOW, as_array, style_figure
from .training import downsample_indices

SCORE_COLORS = {"previous token": "rgb(49,163,84)", "induction": "rgb(117,107,177)"}
WINDOW_COLOR = "rgba(230,85,13,0.12)"


def phase_change_curves(steps, losses, eval_steps, val_losses, scores: dict, window=None, title="") -> go.Figure:
    """Train loss (line) and validation loss (markers) on top; below, each of `scores` = {name: values at
    eval_steps} (0..1) with the 0.5 line. `window` = (first step, last step) shades where the induction score rose on
    both rows. The train series is thinned to at most 500 points."""
    steps, losses = as_array(steps, 1, "steps"), as_array(losses, 1, "losses")
    eval_steps, val_losses = as_array(eval_steps, 1, "eval_steps"), as_array(val_losses, 1, "val_losses")
    if len(steps) != len(losses) or len(eval_steps) != len(val_losses):
        raise ValueError("each step needs its loss, each evaluation its validation loss")
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08, row_heights=[0.55, 0.45])
    keep = downsample_indices(len(steps))
    fig.add_trace(go.Scatter(x=steps[keep], y=losses[keep], mode="lines", name="train loss",
                             line=dict(color=BAR_COLOR, width=2)), row=1, col=1)
    fig.add_trace(go.Scatter(x=eval_steps, y=val_losses, mode="markers+lines", name="validation loss",
                             line=dict(color=HIGHLIGHT_COLOR, width=2), marker=dict(size=6)), row=1, col=1)
    for name, values in scores.items():
        values = as_array(values, 1, name)
        if len(values) != len(eval_steps):
            raise ValueError(f"{name}: {len(values)} values for {len(eval_steps)} evaluations")
        fig.add_trace(go.Scatter(x=eval_steps, y=values, mode="lines+markers", name=f"best {name} score",
                                 line=dict(color=SCORE_COLORS.get(name, "rgb(90,90,90)"), width=3),
                                 marker=dict(size=6)), row=2, col=1)
    fig.add_hline(y=0.5, line=dict(color="#888888", dash="dot"), row=2, col=1)
    if window is not None:
        for row in (1, 2):
            fig.add_vrect(x0=window[0], x1=window[1], fillcolor=WINDOW_COLOR, line_width=0, row=row, col=1)
    fig.update_xaxes(title_text="step", row=2, col=1)
    fig.update_yaxes(title_text="loss (nats)", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title_text="score", range=[0, 1.02], row=2, col=1)
    return style_figure(fig, title, height=520, uirevision="phase-change", legend=LEGEND_BELOW)
