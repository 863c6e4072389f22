"""The steps of equation 1 for one query, and attention rollout: plain numbers and tokens in, a go.Figure out."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .style import (ATTENTION_COLORSCALE, BAR_COLOR, FRAME, MASKED_COLOR, as_array, axis_labels, colorbar,
                    style_figure, token_axis)


def qk_steps(scores, scaled, allowed, weights, contributions, key_tokens, d_k: int, title="", bias=None
             ) -> go.Figure:
    """Four bar charts over the keys, top to bottom: q·k, q·k / sqrt(d_k) (plus ALiBi's distance penalty when
    `bias` is given), softmax (masked keys grey and marked), and each key's share of the output (weight x |v|)."""
    scores, scaled = as_array(scores, 1, "scores"), as_array(scaled, 1, "scaled")
    step_2 = f"2. scaled: q·k / √d_k (√{d_k} = {np.sqrt(d_k):.2f})"
    if bias is not None:
        scaled = scaled + as_array(bias, 1, "bias")
        step_2 = f"2. q·k / √d_k (√{d_k} = {np.sqrt(d_k):.2f}) + ALiBi's bias −m·distance"
    weights, contributions = as_array(weights, 1, "weights"), as_array(contributions, 1, "contributions")
    allowed = np.asarray(allowed, dtype=bool)
    S = len(key_tokens)
    if not all(len(a) == S for a in (scores, scaled, weights, contributions, allowed)):
        raise ValueError(f"every step must cover the {S} keys")
    titles = ["1. scores q·k", step_2,
              "3. softmax over the keys it may see (grey: masked, weight 0)", "4. weighted values: weight × |v|"]
    fig = make_subplots(rows=4, cols=1, shared_xaxes=True, subplot_titles=titles, vertical_spacing=0.09)
    labels = axis_labels(key_tokens)
    colors = [BAR_COLOR if a else MASKED_COLOR for a in allowed]
    for row, values in enumerate((scores, scaled, weights, contributions), start=1):
        text = [("masked" if not a else "") for a in allowed] if row == 3 else None
        fig.add_trace(go.Bar(x=list(range(S)), y=values, marker_color=colors, customdata=labels, text=text,
                             textposition="outside", name=titles[row - 1],
                             hovertemplate="%{customdata}: %{y:.4f}<extra></extra>"), row=row, col=1)
    fig.update_xaxes(**token_axis(key_tokens), row=4, col=1)
    fig.update_yaxes(range=[0, 1.05], row=3, col=1)
    return style_figure(fig, title, top_space=30, height=760, showlegend=False)


def rollout_heatmap(rollout, tokens, title="") -> go.Figure:
    """Attention rollout (T, T): how much each input token (column) flows into each position (row)."""
    r = as_array(rollout, 2, "rollout")
    if r.shape != (len(tokens), len(tokens)):
        raise ValueError(f"rollout is {r.shape}, but got {len(tokens)} tokens")
    fig = go.Figure(go.Heatmap(z=r, x=list(range(len(tokens))), y=list(range(len(tokens))), zmin=0,
                               zmax=float(r.max()) if r.size else 1.0, colorscale=ATTENTION_COLORSCALE,
                               colorbar=colorbar("share"), customdata=np.array(
                                   [[(a, b) for b in axis_labels(tokens)] for a in axis_labels(tokens)], dtype=object),
                               hovertemplate="%{customdata[0]} ← %{customdata[1]}: %{z:.3f}<extra></extra>"))
    fig.update_xaxes(title_text="input token", **token_axis(tokens), **FRAME)
    fig.update_yaxes(title_text="position (last layer)", autorange="reversed", **token_axis(tokens), **FRAME)
    return style_figure(fig, title)
