"""The Generate tab's figures: where one query looks (its weights as bars), and a generated token's top alternatives."""
from __future__ import annotations

import plotly.graph_objects as go

from .attention import narrow_page
from .sizes import bars_that_fit, box_width
from .style import BAR_COLOR, HIGHLIGHT_COLOR, as_array, axis_labels, cell_text_colour, style_figure, token_axis


BAR_AROUND_PX = 100  # beside attended_bar's bars: its y axis's title and tick labels, and the margins


def bars_shown(page_width: float | None, cap: int) -> int:
    """How many keys attended_bar shows on a page `page_width` px wide: as many bars as fit at the readable minimum
    (sizes.MIN_CELL_PX) in half the page, beside another figure (the whole width on a phone), at most `cap`; `cap`
    when the width is not known (an API client). 31 at 1280 px, 14 at 390."""
    if page_width is None:
        return cap
    box = box_width(page_width, columns=1 if narrow_page(page_width) else 2)
    return min(cap, bars_that_fit(box, BAR_AROUND_PX))


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
    colours = [HIGHLIGHT_COLOR if i == chosen else BAR_COLOR for i in range(len(probs))]
    fig = go.Figure(go.Bar(
        x=probs, y=list(range(len(probs))), orientation="h", marker_color=colours,
        insidetextfont=dict(color=[cell_text_colour(c) for c in colours]),  # plotly's #444: 2.86:1
        text=[f"{p:.1%}" + (" (chosen)" if i == chosen else "") for i, p in enumerate(probs)], textposition="auto",
        textangle=0,
        customdata=axis_labels(tokens), hovertemplate="%{customdata}: %{x:.3f}<extra></extra>"))
    fig.update_xaxes(title_text="probability", tickformat=".0%", range=[0, max(probs + [0.0]) * 1.15 or 1])
    fig.update_yaxes(autorange="reversed", **token_axis(tokens))
    return style_figure(fig, title)
