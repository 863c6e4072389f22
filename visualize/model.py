"""The model's size: how many parameters each component holds."""
from __future__ import annotations


import plotly.graph_objects as go

from .style import BAR_COLOR, cell_text_colour, style_figure
from .text import html_text


def _two_lines(name: str, width: int = 12) -> str:
    """A long component name broken at its middle space, so the labels leave the bars room on a phone."""
    if len(name) <= width or " " not in name:
        return name
    cut = min((i for i, ch in enumerate(name) if ch == " "), key=lambda i: abs(i - len(name) / 2))
    return name[:cut] + "<br>" + name[cut + 1:]


def parameter_breakdown(counts: dict[str, int], title="") -> go.Figure:
    """Parameter counts per component {name: count} as horizontal bars, in the order given (first on top).

    Each bar reads "count (percent)", the percent being of the sum of all the counts given: inside the bar when
    it fits there, else just after it (the axis leaves room for it).
    """
    names = list(counts)
    labels = [html_text(name) for name in names]  # names, not tokens: spaces stay spaces
    values = [int(counts[name]) for name in names]
    total = sum(values)
    text = [f"{v:,} ({100 * v / total:.1f}%)" if total else f"{v:,}" for v in values]
    fig = go.Figure(go.Bar(x=values, y=list(range(len(values))), orientation="h", marker_color=BAR_COLOR,
                           text=text, textposition="auto", textangle=0, insidetextanchor="end", textfont=dict(size=14),
                           insidetextfont=dict(color=cell_text_colour(BAR_COLOR)),  # white was 3.41:1 on the bar
                           cliponaxis=False, customdata=labels,
                           hovertemplate="%{customdata}: %{x:,} parameters<extra></extra>"))
    fig.update_xaxes(title_text="parameters", range=[0, max(values + [0]) * 1.3 or 1])
    fig.update_yaxes(autorange="reversed", tickmode="array", tickvals=list(range(len(names))),
                     ticktext=[_two_lines(label) for label in labels])
    return style_figure(fig, title, height=max(300, 120 + 50 * len(values)))
