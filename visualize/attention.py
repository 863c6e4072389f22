"""Attention figures: one head, all heads of a layer, a layers x heads overview, and per-head statistics.

Weights are (T, S): T queries (the tokens attending, rows) by S keys (the tokens attended to, columns);
each row sums to 1. Tokens go on the axes by position, so a repeated token keeps its own row.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .style import (ATTENTION_COLORSCALE, BAR_COLOR, FRAME, HIGHLIGHT_COLOR, as_array, axis_labels,
                    style_figure, token_axis)

UNBOUNDED_SCORES = {"entropy", "mean distance"}  # coloured by their data range; the other scores lie in 0..1
_HOVER = "%{customdata[0]} → %{customdata[1]}: %{z:.3f}<br>query %{y}, key %{x}<extra>%{fullData.name}</extra>"


def _check_tokens(shape, query_tokens, key_tokens) -> None:
    T, S = shape[-2:]
    if len(query_tokens) != T or len(key_tokens) != S:
        raise ValueError(f"weights are {T} queries x {S} keys, but got {len(query_tokens)} query tokens "
                         f"and {len(key_tokens)} key tokens")


def _hover_pairs(query_tokens, key_tokens) -> np.ndarray:
    """customdata[t, s] = (query token t, key token s), for the hover text."""
    pairs = np.empty((len(query_tokens), len(key_tokens), 2), dtype=object)  # (T, S, 2)
    pairs[..., 0] = np.array(axis_labels(query_tokens), dtype=object)[:, None]
    pairs[..., 1] = np.array(axis_labels(key_tokens), dtype=object)[None, :]
    return pairs


def _attention_trace(w: np.ndarray, query_tokens, key_tokens, **kwargs) -> go.Heatmap:
    T, S = w.shape
    return go.Heatmap(z=w, x=list(range(S)), y=list(range(T)), customdata=_hover_pairs(query_tokens, key_tokens),
                      hovertemplate=_HOVER, **kwargs)


def head_heatmap(weights, query_tokens, key_tokens, title="") -> go.Figure:
    """One head's weights (T, S) as a heatmap: queries top to bottom, keys left to right, 0 = white."""
    w = as_array(weights, 2, "weights")  # (T, S)
    _check_tokens(w.shape, query_tokens, key_tokens)
    fig = go.Figure(_attention_trace(w, query_tokens, key_tokens, name="", zmin=0, zmax=1,
                                     colorscale=ATTENTION_COLORSCALE, colorbar=dict(title="weight")))
    fig.update_xaxes(title_text="key (attended to)", **token_axis(key_tokens), **FRAME)
    fig.update_yaxes(title_text="query (attending)", autorange="reversed", **token_axis(query_tokens), **FRAME)
    return style_figure(fig, title)


def layer_grid(weights, query_tokens, key_tokens, title="", cols=4) -> go.Figure:
    """Every head of one layer, weights (H, T, S), as a grid of small heatmaps on one shared 0..1 colour scale."""
    w = as_array(weights, 3, "weights")  # (H, T, S)
    _check_tokens(w.shape, query_tokens, key_tokens)
    if cols < 1:
        raise ValueError(f"cols must be at least 1, got {cols}")
    H, T, S = w.shape
    ncols = max(1, min(cols, H))
    nrows = max(1, math.ceil(H / ncols))
    fig = make_subplots(rows=nrows, cols=ncols, subplot_titles=[f"head {h}" for h in range(H)],
                        horizontal_spacing=0.06, vertical_spacing=min(0.12, 0.5 / nrows))
    for h in range(H):
        fig.add_trace(_attention_trace(w[h], query_tokens, key_tokens, name=f"head {h}", coloraxis="coloraxis"),
                      row=h // ncols + 1, col=h % ncols + 1)
    if T <= 24 and S <= 24:  # tick labels only while they stay readable
        small = dict(size=11)
        fig.update_xaxes({**token_axis(key_tokens), "tickfont": small})
        fig.update_yaxes({**token_axis(query_tokens), "tickfont": small})
    else:
        fig.update_xaxes(showticklabels=False)
        fig.update_yaxes(showticklabels=False)
    fig.update_xaxes(**FRAME)
    fig.update_yaxes(autorange="reversed", **FRAME)
    return style_figure(fig, title, height=140 + 260 * nrows, coloraxis=dict(
        cmin=0, cmax=1, colorscale=ATTENTION_COLORSCALE, colorbar=dict(title="weight")))


def overview(scores, score_name, title="") -> go.Figure:
    """One score for every head, scores (L, H): layers down (layer 0 at the top), heads across, values written in."""
    s = as_array(scores, 2, "scores")  # (L, H)
    L, H = s.shape
    if score_name in UNBOUNDED_SCORES:
        finite = s[np.isfinite(s)]
        zmin, zmax = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    else:
        zmin, zmax = 0.0, 1.0
    fig = go.Figure(go.Heatmap(
        z=s, x=list(range(H)), y=list(range(L)), zmin=zmin, zmax=zmax, colorscale=ATTENTION_COLORSCALE,
        text=[[f"{v:.2f}" for v in row] for row in s.tolist()], texttemplate="%{text}", textfont=dict(size=14),
        xgap=2, ygap=2, colorbar=dict(title=score_name),
        hovertemplate=f"layer %{{y}}, head %{{x}}<br>{score_name}: %{{z:.3f}}<extra></extra>"))
    fig.update_xaxes(title_text="head", tickmode="array", tickvals=list(range(H)),
                     ticktext=[f"head {h}" for h in range(H)])
    fig.update_yaxes(title_text="layer", autorange="reversed", tickmode="array", tickvals=list(range(L)),
                     ticktext=[f"layer {layer}" for layer in range(L)])
    return style_figure(fig, title)


def scores_table(scores) -> pd.DataFrame:
    """Per-head scores {name: (L, H)} (from transformer.analysis.head_scores) as rows: layer, head, one column each."""
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


def attended_bar(weights, key_tokens, title="") -> go.Figure:
    """Where one query looks: its weights over the S keys, weights (S,), as bars."""
    w = as_array(weights, 1, "weights")  # (S,)
    if len(key_tokens) != len(w):
        raise ValueError(f"weights cover {len(w)} keys, but got {len(key_tokens)} key tokens")
    fig = go.Figure(go.Bar(x=list(range(len(w))), y=w, marker_color=BAR_COLOR, customdata=axis_labels(key_tokens),
                           hovertemplate="%{customdata} (key %{x}): %{y:.3f}<extra></extra>"))
    fig.update_xaxes(title_text="key (attended to)", **token_axis(key_tokens))
    fig.update_yaxes(title_text="attention weight", range=[0, 1])
    return style_figure(fig, title)


def token_probabilities(chosen_token: str, top: list[tuple[str, float]], title="") -> go.Figure:
    """The model's top alternatives for one generated token, most likely on top; the chosen one highlighted."""
    ranked = sorted(top, key=lambda pair: -float(pair[1]))
    tokens = [token for token, _ in ranked]
    probs = [float(p) for _, p in ranked]
    chosen = next((i for i, token in enumerate(tokens) if token == chosen_token), None)
    fig = go.Figure(go.Bar(
        x=probs, y=list(range(len(probs))), orientation="h",
        marker_color=[HIGHLIGHT_COLOR if i == chosen else BAR_COLOR for i in range(len(probs))],
        text=[f"{p:.1%}" + (" (chosen)" if i == chosen else "") for i, p in enumerate(probs)], textposition="auto",
        customdata=axis_labels(tokens), hovertemplate="%{customdata}: %{x:.3f}<extra></extra>"))
    fig.update_xaxes(title_text="probability", tickformat=".0%", range=[0, max(probs + [0.0]) * 1.15 or 1])
    fig.update_yaxes(autorange="reversed", **token_axis(tokens))
    return style_figure(fig, title)
