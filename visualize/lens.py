"""The logit lens: a layers x positions grid of each layer's top prediction, and one position's final token
across the layers."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .style import ATTENTION_COLORSCALE, BAR_COLOR, FRAME, as_array, axis_labels, colorbar, style_figure, token_axis


def logit_lens_grid(top_tokens, top_probs, row_labels, position_tokens, title="", chosen: int | None = None
                    ) -> go.Figure:
    """top_tokens (rows, T) written in the cells, coloured by their probability top_probs (rows, T): rows are the
    embedding and then each layer, top to bottom; columns are the positions, labelled by the token each reads.
    `chosen` marks one column with a frame."""
    p = as_array(top_probs, 2, "top_probs")  # (rows, T)
    R, T = p.shape
    if len(top_tokens) != R or any(len(row) != T for row in top_tokens):
        raise ValueError(f"top_tokens must be {R} rows of {T} tokens, like top_probs")
    if len(row_labels) != R or len(position_tokens) != T:
        raise ValueError(f"need {R} row labels and {T} position tokens, got {len(row_labels)} and "
                         f"{len(position_tokens)}")
    text = [axis_labels(row) for row in top_tokens]
    fig = go.Figure(go.Heatmap(
        z=p, x=list(range(T)), y=list(range(R)), zmin=0, zmax=1, colorscale=ATTENTION_COLORSCALE,
        text=text, texttemplate="%{text}" if T <= 40 else "", xgap=1, ygap=1,
        customdata=np.array([axis_labels(position_tokens)] * R, dtype=object),
        hovertemplate="after %{y}, position %{x} (reads %{customdata}):<br>top %{text}, p = %{z:.2f}<extra></extra>",
        colorbar=colorbar("probability of the top token")))
    fig.update_xaxes(title_text="position (the token it reads)", **token_axis(position_tokens), **FRAME)
    fig.update_yaxes(autorange="reversed", type="category", tickmode="array", tickvals=list(range(R)),
                     ticktext=list(row_labels), **FRAME)
    if chosen is not None and 0 <= chosen < T:
        fig.add_shape(type="rect", x0=chosen - 0.5, x1=chosen + 0.5, y0=-0.5, y1=R - 0.5,
                      line=dict(color="rgb(230,85,13)", width=3))
    return style_figure(fig, title, height=max(320, 170 + 36 * R))


def final_token_curve(probs, row_labels, token: str, title="") -> go.Figure:
    """The probability, after each row (embedding, layer 0, ...), of the token the model finally predicts at one
    position: probs (rows,)."""
    p = as_array(probs, 1, "probs")
    if len(row_labels) != len(p):
        raise ValueError(f"{len(p)} probabilities but {len(row_labels)} row labels")
    fig = go.Figure(go.Scatter(x=list(range(len(p))), y=p, mode="lines+markers", line=dict(color=BAR_COLOR, width=3),
                               marker=dict(size=10), name=axis_labels([token])[0],
                               hovertemplate="%{y:.3f}<extra></extra>"))
    short = [label.replace("embedding", "emb").replace("layer ", "") for label in row_labels]  # fits a phone
    fig.update_xaxes(title_text="after layer (emb: embedding)", tickmode="array", tickvals=list(range(len(p))),
                     ticktext=short, range=[-0.5, len(p) - 0.5])
    fig.update_yaxes(title_text=f"p({axis_labels([token])[0]})", range=[0, 1.02])
    return style_figure(fig, title, height=320)
