"""Positional-encoding figures: the (positions x dimensions) table, single dimensions as waves,
how similar two positions' encodings are, and the fixed sinusoidal table beside a learned one.

For the sinusoidal table (section 3.5 of the paper), even dimension 2i holds sin(pos / 10000^(2i/d_model))
and odd dimension 2i+1 the matching cosine: low dimensions change fast with position, high ones slowly.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .style import DIVERGING_COLORSCALE, LEGEND_BELOW, as_array, colorbar, style_figure


def _table_heatmap(table: np.ndarray, **kwargs) -> go.Heatmap:
    L, D = table.shape
    return go.Heatmap(z=table, x=list(range(D)), y=list(range(L)), colorscale=DIVERGING_COLORSCALE,
                      hovertemplate="position %{y}, dim %{x}: %{z:.3f}<extra></extra>", **kwargs)


def pe_matrix(table, title="") -> go.Figure:
    """The positional-encoding table (L, D): one row per position (0 at the top), one column per dimension."""
    pe = as_array(table, 2, "table")  # (L, D)
    fig = go.Figure(_table_heatmap(pe, zmid=0, colorbar=colorbar("value")))
    fig.update_xaxes(title_text="dimension")
    fig.update_yaxes(title_text="position", autorange="reversed")
    return style_figure(fig, title)


def pe_waves(table, dims: list[int], title="", labels=None) -> go.Figure:
    """Chosen dimensions of the table (L, D) as curves over position; even dims are sines, odd dims cosines.

    `labels` (one per dim) replaces the default "dim 4 (sin)" legend names, e.g. for a learned table.
    """
    pe = as_array(table, 2, "table")  # (L, D)
    L, D = pe.shape
    bad = [d for d in dims if not 0 <= int(d) < D]
    if bad:
        raise ValueError(f"dims {bad} are outside the table's {D} dimensions (0..{D - 1})")
    if labels is None:
        labels = [f"dim {d} ({'sin' if d % 2 == 0 else 'cos'})" for d in dims]
    elif len(labels) != len(dims):
        raise ValueError(f"got {len(labels)} labels for {len(dims)} dims")
    fig = go.Figure()
    for d, label in zip(dims, labels):
        fig.add_trace(go.Scatter(x=list(range(L)), y=pe[:, int(d)], mode="lines", name=str(label),
                                 hovertemplate="position %{x}: %{y:.3f}"))
    fig.update_xaxes(title_text="position")
    fig.update_yaxes(title_text="value")
    return style_figure(fig, title, legend=LEGEND_BELOW)  # under the plot: above it, it would cover the title


def pe_similarity(table, title="") -> go.Figure:
    """Dot product of every pair of positions' encodings, table @ table.T: (L, L), bright along the diagonal."""
    pe = as_array(table, 2, "table").astype(np.float64)  # (L, D)
    sim = pe @ pe.T  # (L, L)
    fig = go.Figure(go.Heatmap(z=sim, x=list(range(len(sim))), y=list(range(len(sim))),
                               colorscale=DIVERGING_COLORSCALE, zmid=0, colorbar=colorbar("dot product"),
                               hovertemplate="positions %{y} · %{x}: %{z:.2f}<extra></extra>"))
    fig.update_xaxes(title_text="position")
    fig.update_yaxes(title_text="position", autorange="reversed")
    return style_figure(fig, title)


def pe_side_by_side(sinusoidal, learned, title="") -> go.Figure:
    """The fixed sinusoidal table above a trained one, each (L, D) with its own colour range centred on 0.

    Stacked, with the dimension axis shared, so the two tables' stripes line up and the figure fits a phone; each
    panel's colour bar sits beside it.
    """
    tables = [as_array(sinusoidal, 2, "sinusoidal"), as_array(learned, 2, "learned")]
    fig = make_subplots(rows=2, cols=1, subplot_titles=["sinusoidal (fixed)", "learned (trained)"],
                        shared_xaxes=True, vertical_spacing=0.1)
    for row, pe in enumerate(tables, start=1):
        finite = np.abs(pe[np.isfinite(pe)])
        limit = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
        domain = fig.get_subplot(row, 1).yaxis.domain  # (bottom, top) as fractions of the plot height
        fig.add_trace(_table_heatmap(pe, zmin=-limit, zmax=limit, colorbar=colorbar(
            y=sum(domain) / 2, len=domain[1] - domain[0])), row=row, col=1)
        fig.update_yaxes(title_text="position", autorange="reversed", row=row, col=1)
    fig.update_xaxes(title_text="dimension", row=2, col=1)
    return style_figure(fig, title, top_space=30, height=640)
