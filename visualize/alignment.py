"""Gold word alignments drawn over an attention heatmap: a marker on every (query word, key word) cell that a
reference alignment links, so the class sees where the head agrees with the translators and where it does not."""
from __future__ import annotations

import plotly.graph_objects as go

from .style import HIGHLIGHT_COLOR, LEGEND_BELOW

GOLD_LABEL = "○ = gold link (same Strong's number)"


def gold_link_marks(fig: go.Figure, links: list[tuple[int, int]], label: str = GOLD_LABEL) -> go.Figure:
    """Overlay `links` as hollow circles on a heatmap drawn on integer positions (visualize.attention):
    each link (key, query) puts a circle at column `key`, row `query`. Returns the same figure."""
    keys = [k for k, _ in links]
    queries = [q for _, q in links]
    fig.add_trace(go.Scatter(x=keys, y=queries, mode="markers", name=label, hoverinfo="skip", showlegend=True,
                             marker=dict(symbol="circle-open", size=14, line=dict(width=2.5),
                                         color=HIGHLIGHT_COLOR)))
    fig.update_layout(showlegend=True, legend=dict(LEGEND_BELOW, font=dict(size=14)))
    return fig
