"""Attention figures: one head, and all heads of a layer (the layers x heads overview and the per-head table are
visualize.head_scores; the Generate tab's bars visualize.generation).

Weights are (T, S): T queries (the tokens attending, rows) by S keys (the tokens attended to, columns);
each row sums to 1. Tokens go on the axes by position, so a repeated token keeps its own row.
"""
from __future__ import annotations

import html
import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .margins import COLORBAR_PAD_PX, PAD, fit_margins, text_px
from .sizes import MIN_CELL_PX, MIN_LABEL_PX, FigureSize, figure_size
from .style import (ATTENTION_COLORSCALE, COLORBAR_THICKNESS, FRAME, LEGEND_BELOW, LINE_HEIGHT, MASKED_COLOR,
                    MASKED_MARK, PHONE_WIDTH, as_array, axis_labels, cell_text_colour, colorbar, label_space,
                    style_figure, tick_labels, token_axis, token_font_size, top_margin)

MASKED = "masked (this query may not attend here)"
_HOVER = ("%{customdata[0]} → %{customdata[1]}: %{z:.3f}<br>query %{customdata[2]}, key %{customdata[3]}"
          "<extra>%{fullData.name}</extra>")
_MASKED_HOVER = f"%{{customdata[0]}} → %{{customdata[1]}}: {MASKED}<extra></extra>"


def _check_tokens(shape, query_tokens, key_tokens) -> None:
    T, S = shape[-2:]
    if len(query_tokens) != T or len(key_tokens) != S:
        raise ValueError(f"weights are {T} queries x {S} keys, but got {len(query_tokens)} query tokens "
                         f"and {len(key_tokens)} key tokens")


def _allowed(mask, shape) -> np.ndarray | None:
    """The mask as a (T, S) bool array (True = may attend), or None when it masks nothing."""
    if mask is None:
        return None
    m = as_array(mask, name="mask")
    try:
        allowed = np.broadcast_to(m != 0, shape[-2:])  # (T, S)
    except ValueError:
        raise ValueError(f"mask of shape {tuple(m.shape)} does not fit weights of {shape[-2]} queries x "
                         f"{shape[-1]} keys") from None
    return None if allowed.all() else allowed  # nothing masked: nothing to draw or explain


def _hover_data(query_tokens, key_tokens) -> np.ndarray:
    """customdata[t, s] = (query token t, key token s, t, s), for the hover text."""
    T, S = len(query_tokens), len(key_tokens)
    data = np.empty((T, S, 4), dtype=object)  # (T, S, 4)
    data[..., 0] = np.array(axis_labels(query_tokens), dtype=object)[:, None]
    data[..., 1] = np.array(axis_labels(key_tokens), dtype=object)[None, :]
    data[..., 2] = np.arange(T)[:, None]
    data[..., 3] = np.arange(S)[None, :]
    return data


def _attention_trace(w: np.ndarray, query_tokens, key_tokens, allowed=None, **kwargs) -> go.Heatmap:
    """The weights (T, S) as a heatmap on integer positions; masked cells (allowed False) are left out of it."""
    T, S = w.shape
    z = w if allowed is None else np.where(allowed, w, np.nan)
    return go.Heatmap(z=z, x=list(range(S)), y=list(range(T)), customdata=_hover_data(query_tokens, key_tokens),
                      hovertemplate=_HOVER, hoverongaps=False, **kwargs)


def _masked_trace(allowed: np.ndarray, query_tokens, key_tokens, **kwargs) -> go.Heatmap:
    """The masked cells (allowed False) in flat grey, on top of the weights, each labelled MASKED_MARK (in the
    colour cell_text_colour picks on grey), with their own hover text."""
    T, S = allowed.shape
    return go.Heatmap(z=np.where(allowed, np.nan, 1.0), x=list(range(S)), y=list(range(T)), name="masked",
                      zmin=0, zmax=1, colorscale=[[0, MASKED_COLOR], [1, MASKED_COLOR]], showscale=False,
                      text=np.where(allowed, "", MASKED_MARK).tolist(), texttemplate="%{text}",
                      textfont=dict(color=cell_text_colour(MASKED_COLOR)),
                      customdata=_hover_data(query_tokens, key_tokens), hovertemplate=_MASKED_HOVER,
                      hoverongaps=False, **kwargs)


def _masked_key(fig: go.Figure) -> None:
    """A legend entry under the figure: a grey square = masked."""
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers",
                             name=f"grey = masked ({MASKED_MARK}): may not attend", marker=dict(symbol="square", size=16, color=MASKED_COLOR), hoverinfo="skip",
                             showlegend=True))
    fig.update_layout(showlegend=True, legend=dict(LEGEND_BELOW, font=dict(size=14)))


QUERY_TITLE = "query (attending)"  # the one-head heatmap's y axis title
HEATMAP_HEIGHT = 450  # px: the one-head heatmap's least height (plotly's default)
_AROUND_HEATMAP = 190  # px of the figure's height that are not its rows: title, axis title, key labels
_BAR_ABOVE = 72  # px a phone's flat colour bar takes above the plot (its tick labels under it, 24 px); the title,
# centred in the top margin, moves down by half of it
# px: the width of the one-head heatmap's box (measured in chromium: 720 at 1280 px, 326 at 390 px), and what is
# beside the cells besides the query labels: margins, the axis title, and on a projector the colour bar (measured:
# 64 px beside one-letter labels at 12 px and 128 beside ten letters at 16 on a phone, 161 and 224 on a projector)
HEATMAP_BOX_PX = {False: 720, True: 326}
BESIDE_KEYS_PX = {False: 158, True: 62}
QUERY_CHAR = 0.45  # a query label's width per character, in font sizes (measured: 10 letters at 16 px, 72 px)


def least_column(key_tokens) -> float:
    """The least width (px) of a key's column: MIN_CELL_PX, and room for its label side by side or upright."""
    return max(MIN_CELL_PX, label_space(tick_labels(key_tokens), MIN_LABEL_PX))


def heatmap_size(query_tokens, key_tokens, narrow: bool, box_px: float | None = None, masked: bool = False
                 ) -> FigureSize:
    """The one-head heatmap's size on a projector's page (narrow False) or a phone's (True), in a box `box_px`
    wide (default: the Attention tab's, HEATMAP_BOX_PX): every key a column at least MIN_CELL_PX wide and wide
    enough for its label side by side or upright (style.label_space), every query a row at least MIN_CELL_PX tall
    and a label's line (visualize.sizes.figure_size: past the box, the figure is wider and the page scrolls it)."""
    T, S = len(query_tokens), len(key_tokens)
    font = token_font_size(T, every_token=True)
    column = least_column(key_tokens)
    row = max(MIN_CELL_PX, LINE_HEIGHT * font)
    widest = max((len(html.unescape(label)) for label in tick_labels(query_tokens)), default=1)
    around_x = BESIDE_KEYS_PX[bool(narrow)] + QUERY_CHAR * font * widest
    around_y = _AROUND_HEATMAP + (40 if masked else 0) + (_BAR_ABOVE if narrow else 0)
    return figure_size(S, T, HEATMAP_BOX_PX[bool(narrow)] if box_px is None else box_px, around_x, around_y,
                       column, row, HEATMAP_HEIGHT)


def head_heatmap(weights, query_tokens, key_tokens, title="", mask=None, narrow: bool | None = None,
                 box_px: float | None = None, value: str = "weight") -> go.Figure:
    """One head's weights (T, S) as a heatmap: queries top to bottom, keys left to right, 0 = white.

    `value` names the cells on the colour bar: "weight", or what else they are (at most as long: a phone's flat
    bar gives its title the room of "weight"'s and the rest of its 160 px to the scale).
    `mask` (T, S) bool, True where the query may attend (the library's convention): masked cells are drawn grey
    (a separate trace, hover "masked (this query may not attend here)"), never the white of a weight near 0.
    With `narrow` (False: a page on a projector or a laptop, True: on a phone) and `box_px` (the width of the
    figure's box; default the Attention tab's) the cells keep a readable size (heatmap_size): every token has its
    label, and a figure whose cells do not fit its box is wider than it (the page scrolls it sideways); on a
    phone, and in a figure that scrolls, the colour bar lies flat above the plot at its left, out of the cells'
    width and of the key labels' way. With None
    (a figure of unknown width) plotly thins the labels to what fits. The figure's `meta` holds the cells' side in
    px ("cell_px") when it is known.
    """
    w = as_array(weights, 2, "weights")  # (T, S)
    _check_tokens(w.shape, query_tokens, key_tokens)
    allowed = _allowed(mask, w.shape)  # (T, S) or None
    fig = go.Figure(_attention_trace(w, query_tokens, key_tokens, allowed, name="", zmin=0, zmax=1,
                                     colorscale=ATTENTION_COLORSCALE, colorbar=colorbar(value)))
    if allowed is not None:
        fig.add_trace(_masked_trace(allowed, query_tokens, key_tokens))
        _masked_key(fig)
    layout, keys, queries = {}, {}, {}
    if narrow is not None:
        size = heatmap_size(query_tokens, key_tokens, narrow, box_px, masked=allowed is not None)
        layout.update(height=size.height, meta=dict(cell_px=min(size.column_px, size.row_px)))
        if size.width:
            layout["width"] = size.width
        keys = dict(axis_px=size.column_px * len(key_tokens))
        queries = dict(size=token_font_size(len(query_tokens), every_token=True),
                       axis_px=size.row_px * len(query_tokens))
    fig.update_xaxes(title_text="key (attended to)", **token_axis(key_tokens, **keys), **FRAME)
    fig.update_yaxes(title_text=QUERY_TITLE, autorange="reversed", **token_axis(query_tokens, **queries), **FRAME)
    if narrow is None:
        return style_figure(fig, title)
    # The figure's width is known: so are its margins (visualize.margins), and plotly draws it once
    box = HEATMAP_BOX_PX[bool(narrow)] if box_px is None else box_px
    flat = bool(narrow or size.width)  # the colour bar lies flat above the plot (see below), or stands beside it
    margin = fit_margins(fig, size.width or box, colorbar=not flat, bar_px=COLORBAR_THICKNESS,
                         legend_rows=int(allowed is not None))
    # heatmap_size guessed what lies beside the cells; the margins are what does. A figure wider than its box is as
    # wide as its cells at their least and its margins, and one whose margins leave its cells under their least
    # grows past its box, its bar flat (issue 38: the causal mask at 1280 was 820 px where 732 held it; on a phone
    # "Previous-token head" drew 15.8 px cells, "Weights or what moves" 15.4, under MIN_CELL_PX)
    S = len(key_tokens)
    need = math.ceil(margin["l"] + margin["r"] + least_column(key_tokens) * S)
    if need > box and not flat:
        flat = True
        margin = fit_margins(fig, need, colorbar=False, bar_px=COLORBAR_THICKNESS,
                             legend_rows=int(allowed is not None))
        need = math.ceil(margin["l"] + margin["r"] + least_column(key_tokens) * S)
    if flat and box < need <= box + PAD:  # past its box by at most the right margin's padding, where nothing is
        # drawn (the last key's label reaches past its cell by what the margin keeps beyond PAD): it fits its box
        # (the causal mask's 41 columns at 1280x800 were 732 px in a 720 px box, behind a sideways scroll)
        margin["r"] -= need - math.ceil(box)
        need = math.ceil(box)
    if size.width or need > box:
        layout["width"] = max(need, math.ceil(box))
    drawn = (layout.get("width", box) - margin["l"] - margin["r"]) / S  # a cell's width as drawn
    layout["meta"] = dict(cell_px=min(drawn, size.row_px))
    if flat:
        layout["height"] = size.height + (0 if narrow else _BAR_ABOVE)  # heatmap_size counts it on a phone
    # tall enough for the margins and every row at its size, and the plot at least as tall as its y axis's title,
    # which plotly centres on it turned: a 2-row map in words on a phone (`reverse`, a long English input) had a
    # 40 px plot, its axis title drawn over the figure's title and its colour bar squeezed (issue 38, item 5)
    top = top_margin(title, _BAR_ABOVE if flat else 0)
    plot_px = max(size.row_px * len(query_tokens), text_px(QUERY_TITLE, 16) + 2 * PAD)
    layout["height"] = max(layout["height"], math.ceil(top + margin["b"] + plot_px))
    if flat:  # flat above the plot at its left: beside it, it took a fifth of a phone's width, and it would be out
        # of sight at the right end of a figure that scrolls sideways
        layout["top_space"] = _BAR_ABOVE  # the title is centred in the top margin, the bar under it
        plot_px = layout["height"] - top - margin["b"]  # the plot area's height
        fig.update_traces(colorbar=dict(orientation="h", x=0, xanchor="left", lenmode="pixels", len=160,
                                        y=1 + 24 / plot_px, yanchor="bottom", thickness=12, title_side="right"),
                          selector=dict(name=""))  # at the left: seen before any sideways scroll
    else:
        fig.update_traces(colorbar=dict(x=1, xanchor="left", xpad=COLORBAR_PAD_PX), selector=dict(name=""))
    return style_figure(fig, title, margin=margin, **layout)


GRID_COLUMNS = 4  # heads per row of layer_grid on a projector or a laptop
_GRID_ROW_PX = 120  # the least height of a row of layer_grid's heads


def narrow_page(page_width: float | None = None) -> bool:
    """Whether a page `page_width` px wide is a phone's (PHONE_WIDTH or less); None (the width is not known, as for
    an API client) is a wide page."""
    return page_width is not None and page_width <= PHONE_WIDTH


def grid_columns(page_width: float | None = None) -> int:
    """Heads per row of `layer_grid` on a page `page_width` px wide: 4, or 2 on a phone (at 390 px four heads were
    ~35 px wide each)."""
    return 2 if narrow_page(page_width) else GRID_COLUMNS


def layer_grid(weights, query_tokens, key_tokens, title="", cols=GRID_COLUMNS, mask=None, scale=True,
               value: str = "weight", box_px: float | None = None) -> go.Figure:
    """Every head of one layer, weights (H, T, S), as a grid of small heatmaps on one shared 0..1 colour scale.

    `cols` heads per row (`grid_columns`: fewer on a phone). Token labels are drawn on the outer edges
    only: keys under the lowest heatmap of each column, queries left of the first column. `mask` (T, S) as in
    `head_heatmap`, the same for every head. `scale=False` leaves out the colour bar (on a phone it took a quarter
    of the width; the one-head heatmap shows the same 0..1 scale). `value` names the cells on the colour bar, as
    in `head_heatmap`. With `box_px`, the width of the figure's box, its margins are computed (visualize.margins):
    plotly draws it once.
    """
    w = as_array(weights, 3, "weights")  # (H, T, S)
    _check_tokens(w.shape, query_tokens, key_tokens)
    if cols < 1:
        raise ValueError(f"cols must be at least 1, got {cols}")
    allowed = _allowed(mask, w.shape)  # (T, S) or None
    H, T, S = w.shape
    ncols = max(1, min(cols, H))
    nrows = max(1, math.ceil(H / ncols))
    specs = [[{} if r * ncols + c < H else None for c in range(ncols)] for r in range(nrows)]
    fig = make_subplots(rows=nrows, cols=ncols, specs=specs, subplot_titles=[f"head {h}" for h in range(H)],
                        horizontal_spacing=0.045, vertical_spacing=min(0.08, 0.3 / nrows))
    small = 12 if max(T, S) <= 24 else 11
    for h in range(H):
        row, col = h // ncols + 1, h % ncols + 1
        fig.add_trace(_attention_trace(w[h], query_tokens, key_tokens, allowed, name=f"head {h}",
                                       coloraxis="coloraxis"), row=row, col=col)
        if allowed is not None:
            fig.add_trace(_masked_trace(allowed, query_tokens, key_tokens), row=row, col=col)
        fig.update_xaxes(**token_axis(key_tokens, size=small), showticklabels=h + ncols >= H, row=row, col=col)
        fig.update_yaxes(**token_axis(query_tokens, size=small), showticklabels=col == 1, row=row, col=col)
    fig.update_annotations(font_size=13)  # the subplot titles: "head 0" fits above a quarter of a phone
    fig.update_xaxes(**FRAME)
    fig.update_yaxes(autorange="reversed", **FRAME)
    if allowed is not None:
        _masked_key(fig)
    bar = colorbar(value, x=1, xanchor="left", xpad=COLORBAR_PAD_PX) if box_px else colorbar(value)
    fitted = dict(margin=fit_margins(fig, box_px, colorbar=bool(scale), bar_px=COLORBAR_THICKNESS,
                                     legend_rows=int(allowed is not None))) if box_px else {}
    height = 120 + 250 * nrows + (40 if allowed is not None else 0)
    if fitted:  # never less than its margins and a readable row of heads (_GRID_ROW_PX): a plot area under 0 px
        # throws in plotly ("Something went wrong with axis scaling") and the page stopped drawing
        height = max(height, top_margin(title, 30) + fitted["margin"]["b"] + _GRID_ROW_PX * nrows)
    return style_figure(fig, title, top_space=30, height=height,
                        coloraxis=dict(cmin=0, cmax=1, colorscale=ATTENTION_COLORSCALE, colorbar=bar,
                                       showscale=bool(scale)), **fitted)
