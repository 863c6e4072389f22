"""Relative-position figures: RoPE's rotation angles and how a rotated query-key score varies with distance, and
ALiBi's bias matrix per head.

RoPE (Su et al. 2021) turns dimension pair i of a query or key at position m by the angle m * theta_i, with
theta_i = 10000^(-2i/d_k): the first pairs spin fast, the last ones barely move. ALiBi (Press et al. 2022) adds
-m_h * |i - j| to head h's scores: a linear penalty on distance, steepest for the first head.
"""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .style import FRAME, LEGEND_BELOW, MASKED_COLOR, as_array, colorbar, style_figure

ANGLE_COLORSCALE = "Twilight"  # cyclic: an angle just below 2π has the colour of one just above 0
BIAS_COLORSCALE = "Reds_r"  # dark red = a large penalty, white = no penalty (distance 0)
CURVE_DASHES = ("solid", "dash", "dot", "dashdot")
_TWO_PI = 2 * math.pi


def rope_angles_figure(angles, title="") -> go.Figure:
    """RoPE's angles (T, d_k / 2) in radians, one row per position (0 at the top), one column per dimension pair,
    coloured by the angle mod 2π on a cyclic scale (the rotation a pair has made, whole turns left out)."""
    a = as_array(angles, 2, "angles").astype(np.float64)  # (T, d_k / 2)
    T, P = a.shape
    turned = np.mod(a, _TWO_PI)  # (T, d_k / 2)
    fig = go.Figure(go.Heatmap(
        z=turned, x=list(range(P)), y=list(range(T)), customdata=a, zmin=0, zmax=_TWO_PI,
        colorscale=ANGLE_COLORSCALE, name="",
        colorbar=colorbar("angle mod 2π", tickvals=[0, math.pi / 2, math.pi, 3 * math.pi / 2, _TWO_PI],
                          ticktext=["0", "π/2", "π", "3π/2", "2π"]),
        hovertemplate="position %{y}, pair %{x}: %{customdata:.3f} rad (%{z:.2f} mod 2π)<extra></extra>"))
    fig.update_xaxes(title_text="dimension pair i", **FRAME)
    fig.update_yaxes(title_text="position m", autorange="reversed", **FRAME)
    return style_figure(fig, title)


def rope_distance_figure(distances, curves: dict, title="") -> go.Figure:
    """Rotated query-key scores against the distance n - m: one curve per entry of `curves` {name: scores (N,)},
    each scores[k] being <R_m q, R_n k> at n - m = distances[k]. Curves that coincide stay visible (each its own
    dash pattern)."""
    d = as_array(distances, 1, "distances")  # (N,)
    if not curves:
        raise ValueError("curves is empty: give at least one {name: scores}")
    fig = go.Figure()
    for k, (name, scores) in enumerate(curves.items()):
        y = as_array(scores, 1, f"scores of {name!r}")  # (N,)
        if y.shape != d.shape:
            raise ValueError(f"scores of {name!r} have {len(y)} values for {len(d)} distances")
        fig.add_trace(go.Scatter(x=d, y=y, mode="lines", name=str(name),
                                 line=dict(dash=CURVE_DASHES[k % len(CURVE_DASHES)], width=2.5),
                                 hovertemplate="n - m = %{x:.0f}: %{y:.3f}"))
    fig.add_vline(x=0, line=dict(color="#888888", width=1))
    fig.update_xaxes(title_text="distance n - m (key - query)", **FRAME)
    fig.update_yaxes(title_text="score after rotation", zeroline=True, **FRAME)
    return style_figure(fig, title, legend=LEGEND_BELOW)


def slope_text(m: float) -> str:
    """A slope as the paper writes it: 1/2, 1/256 for powers of two, else three significant digits (0.707)."""
    inverse = 1 / m
    if abs(inverse - round(inverse)) < 1e-6 * inverse and math.log2(round(inverse)).is_integer():
        return f"1/{round(inverse)}"
    return f"{m:.3g}"


def alibi_bias_figure(bias, slopes, title="", causal=True, cols=2) -> go.Figure:
    """ALiBi's bias (H, T, S) as one small heatmap per head on one shared colour scale, each titled with its slope.

    With `causal` (a decoder's self-attention) the keys after each query are masked and drawn grey, as in the
    attention heatmaps; without, the whole matrix is drawn (an encoder's penalty is the same in both directions).
    `cols` heads per row: 2 leave each subplot room for its title on a phone.
    """
    b = as_array(bias, 3, "bias")  # (H, T, S)
    m = as_array(slopes, 1, "slopes")  # (H,)
    H, T, S = b.shape
    if len(m) != H:
        raise ValueError(f"got {len(m)} slopes for {H} heads")
    if cols < 1:
        raise ValueError(f"cols must be at least 1, got {cols}")
    allowed = np.arange(S)[None, :] <= np.arange(T)[:, None] + (S - T) if causal else np.ones((T, S), bool)  # (T, S)
    ncols = min(cols, H)
    nrows = math.ceil(H / ncols)
    specs = [[{} if r * ncols + c < H else None for c in range(ncols)] for r in range(nrows)]
    fig = make_subplots(rows=nrows, cols=ncols, specs=specs, horizontal_spacing=0.1,
                        vertical_spacing=min(0.12, 0.4 / nrows),  # two-line subplot titles sit in these gaps
                        subplot_titles=[f"head {h}<br>m = {slope_text(float(m[h]))}" for h in range(H)])
    distance = np.abs(np.arange(T)[:, None] + (S - T) - np.arange(S)[None, :])  # (T, S)
    lowest = float(np.nanmin(np.where(allowed, b, np.nan))) if allowed.any() else 0.0
    for h in range(H):
        row, col = h // ncols + 1, h % ncols + 1
        fig.add_trace(go.Heatmap(z=np.where(allowed, b[h], np.nan), x=list(range(S)), y=list(range(T)),
                                 customdata=distance, coloraxis="coloraxis", name=f"head {h}", hoverongaps=False,
                                 hovertemplate="query %{y}, key %{x}: %{z:.3f} (distance %{customdata})"
                                               "<extra>%{fullData.name}</extra>"), row=row, col=col)
        if not allowed.all():
            fig.add_trace(go.Heatmap(z=np.where(allowed, np.nan, 1.0), x=list(range(S)), y=list(range(T)),
                                     zmin=0, zmax=1, colorscale=[[0, MASKED_COLOR], [1, MASKED_COLOR]],
                                     showscale=False, name="masked", hoverongaps=False,
                                     hovertemplate="query %{y}, key %{x}: masked (a future key)<extra></extra>"),
                          row=row, col=col)
        fig.update_xaxes(showticklabels=h + ncols >= H, row=row, col=col)
        fig.update_yaxes(showticklabels=col == 1, row=row, col=col)
    fig.update_annotations(font_size=14)  # the subplot titles, on two lines: a phone's columns are ~80 px wide
    fig.update_xaxes(**FRAME)
    fig.update_yaxes(autorange="reversed", **FRAME)
    legend = {}
    if not allowed.all():
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="grey = masked (a future key)",
                                 marker=dict(symbol="square", size=16, color=MASKED_COLOR), hoverinfo="skip"))
        legend = dict(showlegend=True, legend=dict(LEGEND_BELOW, font=dict(size=14)))
    return style_figure(fig, title, top_space=46, height=150 + 240 * nrows + (40 if legend else 0), **legend,
                        coloraxis=dict(cmin=min(lowest, -1e-9), cmax=0, colorscale=BIAS_COLORSCALE,
                                       colorbar=colorbar("bias added to the score")))
