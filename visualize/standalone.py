"""A figure as a page of its own: one HTML file with plotly.js inside, which draws the figure offline, in any
browser, with its hover text and zoom (what BertViz users ask for most: a view to put in slides or send).

plotly's own `to_html(include_plotlyjs=True, full_html=True)` writes it: the plotly.js bundled with the plotly
package (about 4.8 MB) and the figure's JSON, with `<`, `>` and `/` escaped inside the script. The figure is checked
against plotly's schema first (every property must be one plotly knows: `plotly.io.from_json` refuses the rest),
and only the kinds of trace the app draws are taken, with no layout image: maps and images would fetch from
outside, and the file must never reach out.
"""
from __future__ import annotations

import plotly.io as pio

STANDALONE_CONFIG = {"displaylogo": False, "responsive": True}  # plotly.js options of the page (no link out)
TRACE_TYPES = frozenset({"heatmap", "scatter", "bar"})  # what visualize/ draws; none of them fetches anything


def standalone_html(figure_json: str) -> str:
    """The HTML page that draws `figure_json` (a plotly figure as JSON, as plotly writes it) offline. Raises
    ValueError, in words, for JSON that is not a plotly figure or one that would load anything from outside."""
    try:
        figure = pio.from_json(figure_json, skip_invalid=False)
    except ValueError as e:
        first = next((line.strip() for line in str(e).splitlines() if line.strip()), "")
        raise ValueError(f"this is not a figure plotly can draw ({first[:120]})") from None
    kinds = sorted({trace.type for trace in figure.data} - TRACE_TYPES)
    if kinds or figure.layout.images:
        raise ValueError(f"a figure with {', '.join(kinds) or 'images'} cannot be saved as a page that works offline")
    return figure.to_html(include_plotlyjs=True, full_html=True, config=STANDALONE_CONFIG)
