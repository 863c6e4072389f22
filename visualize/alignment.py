"""Gold word alignments drawn over an attention heatmap: a marker on every (query word, key word) cell that a
reference alignment links, so the class sees where the head agrees with the translators and where it does not.
Links on content words and links on function words (transformer.translation.gold.function_link) are drawn apart:
the Strong's numbers tag the original's words, and an article or "and" takes the number of its phrase, so those
links are loose."""
from __future__ import annotations

import plotly.graph_objects as go

from .margins import PAD
from .style import HIGHLIGHT_COLOR, LEGEND_BELOW

GOLD_LABEL = "○ = gold link (same Strong's number)"
FUNCTION_LABEL = ("small ○ = link on a function word<br>(the, and, de, y): a Strong's number<br>"
                  "tags its whole phrase, so it is loose")  # three lines of a phone's width
CIRCLE_PX, SMALL_PX = 14, 7  # marker diameters (px) in cells large enough; smaller cells get smaller circles
_CELL_SHARE = 0.8  # a circle is at most this share of its cell's side
# On a projector's page the legend sits in the top margin, right of the title, in lines no wider than half the
# figure's box: under the plot its lines pushed the figure's bottom 82 px below a 1280x800 projector's fold after the
# translation demo (tests/browser/test_layout.py)
FUNCTION_LABEL_BESIDE = "small ○ = link on a function word: loose,<br>its Strong's number tags its whole phrase"
LEGEND_LINE_PX = 20  # a line of the 14 px legend
_LEGEND_PAD_PX = 6  # plotly's padding above and below a legend's lines
LEGEND_BESIDE_TITLE = dict(orientation="h", xref="container", x=1, xanchor="right", yref="container", y=1,
                           yanchor="top", font=dict(size=14))


def _marks(links, size: float, width: float, label: str) -> go.Scatter:
    return go.Scatter(x=[k for k, _ in links], y=[q for _, q in links], mode="markers", name=label,
                      hoverinfo="skip", showlegend=True,
                      marker=dict(symbol="circle-open", size=size, line=dict(width=width), color=HIGHLIGHT_COLOR))


def gold_link_marks(fig: go.Figure, links: list[tuple[int, int]], function_links: list[tuple[int, int]] = (),
                    label: str = GOLD_LABEL, wide: bool = False) -> go.Figure:
    """Overlay `links` as hollow circles on a heatmap drawn on integer positions (visualize.attention), and
    `function_links` (links on a function word) as small thin ones: each link (key, query) puts a circle at column
    `key`, row `query`. No circle is larger than its cell: when the heatmap knows its cells' side
    (`fig.layout.meta["cell_px"]`) a circle is at most _CELL_SHARE of it.

    The legend goes under the plot, the figure growing by its lines; with `wide` (a projector's or a laptop's page)
    and a figure as wide as its box (no `width`: visualize.sizes), in the top margin at the right of the title,
    which it grows only when it needs more lines than the title has. Returns the same figure."""
    meta = fig.layout.meta if isinstance(fig.layout.meta, dict) else {}
    cell = meta.get("cell_px")
    largest = _CELL_SHARE * cell if cell else CIRCLE_PX
    if links:
        fig.add_trace(_marks(links, min(CIRCLE_PX, largest), 2.5, label))
    beside = wide and not fig.layout.width
    function_label = FUNCTION_LABEL_BESIDE if beside else FUNCTION_LABEL
    if function_links:
        fig.add_trace(_marks(function_links, min(SMALL_PX, largest / 2), 1.5, function_label))
    lines = bool(links) + (function_label.count("<br>") + 1 if function_links else 0)
    needed = LEGEND_LINE_PX * lines + 2 * _LEGEND_PAD_PX  # the legend's height
    if beside:  # plotly keeps the legend PAD px above what stands at the plot's top (a tick): the margin holds
        # both, taken from the plot (as plotly's own margin push did) unless the lines need more than the title's
        top = fig.layout.margin.t or 0
        fig.update_layout(showlegend=True, legend=LEGEND_BESIDE_TITLE, margin_t=max(top, needed + PAD))
        if fig.layout.height:
            fig.update_layout(height=fig.layout.height + max(0, needed - top))
        return fig
    fitted = fig.layout.margin.b is not None  # margins computed for the figure (visualize.margins): the legend's too
    if fig.layout.height:  # a figure sized for its cells (visualize.sizes) grows by its legend instead
        fig.update_layout(height=fig.layout.height + (needed if fitted else LEGEND_LINE_PX * lines))
    if fitted:
        fig.update_layout(margin_b=fig.layout.margin.b + needed)
    fig.update_layout(showlegend=True, legend=dict(LEGEND_BELOW, font=dict(size=14)))
    return fig
