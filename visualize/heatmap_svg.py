"""One head's attention as a small self-contained SVG (no plotly, no script), for maps that change while a run
streams (the Train tab's live map, the induction watch's best head).

gradio's Plot kept ~500 DOM nodes and ~60 listeners of every plotly value it was given reachable (measured with the
live loss plot and then with this map, issue 19): a map redrawn at each evaluation grew the page without bound. An
SVG shown as HTML is replaced whole. The drawing scales with its container (viewBox).

Each cell is a `<rect class="cell" data-q=i data-k=j>` coloured on the attention scale (white at 0, navy at 1;
masked cells grey) whose `<title>` (the hover text) gives its query, key and weight.
"""
from __future__ import annotations

import numpy as np

from .in_words import extremes
from .line_chart import FONT_SIZE, TITLE_SIZE, TEXT_COLOR
from .style import ATTENTION_COLORSCALE, FONT, MASKED_COLOR, as_array, visible_whitespace
from .text import html_text

WIDTH = 400  # viewBox units, as visualize.line_chart's (the two sit side by side)
LEFT, RIGHT, TOP, BOTTOM = 70, 64, 34, 58  # room for query labels, the colour bar, the title, key labels
MAX_LABEL = 6  # characters of a token's label (the hover has the whole token)
_STOPS = np.array([p for p, _ in ATTENTION_COLORSCALE])
_RGB = np.array([[int(v) for v in c[4:-1].split(",")] for _, c in ATTENTION_COLORSCALE], dtype=float)


def attention_colour(weight: float) -> str:
    """The attention scale's colour of a weight (clipped to 0..1), linearly between the scale's stops."""
    w = float(np.clip(weight, 0.0, 1.0))
    r, g, b = (np.interp(w, _STOPS, _RGB[:, i]) for i in range(3))
    return f"rgb({round(r)},{round(g)},{round(b)})"


def _label(token) -> str:
    text = visible_whitespace(token)
    return text if len(text) <= MAX_LABEL else text[:MAX_LABEL - 1] + "…"


def _every(n: int, cell: float, room: float) -> int:
    """Label every k-th position so that labels `room` units tall (or wide) do not run together."""
    return max(1, int(np.ceil(room / cell))) if n else 1


def head_heatmap_svg(weights, query_tokens, key_tokens, title: str = "", mask=None, message: str = "") -> str:
    """One head's weights (T, S) as an SVG heatmap: queries top to bottom, keys left to right. `mask` (T, S) bool,
    True where the query may attend: the other cells are grey and their hover says "masked". `message` (with
    weights of shape (0, 0)) draws an empty map that only says it."""
    w = as_array(weights, 2, "weights")  # (T, S)
    T, S = w.shape
    if len(query_tokens) != T or len(key_tokens) != S:
        raise ValueError(f"weights of {T} queries x {S} keys need {T} query and {S} key tokens, got "
                         f"{len(query_tokens)} and {len(key_tokens)}")
    allowed = np.ones((T, S), bool) if mask is None else np.broadcast_to(as_array(mask, name="mask") != 0, (T, S))
    described = message or f"{T} x {S}: " + extremes(np.where(allowed, w, np.nan), [_label(t) for t in query_tokens],
                                                      [_label(t) for t in key_tokens], "query", "key",
                                                      int((~allowed).sum()))
    cell = min((WIDTH - LEFT - RIGHT) / max(S, 1), 270 / max(T, 1))
    x0, y0 = LEFT, TOP
    x1, y1 = x0 + cell * S, y0 + cell * T
    height = (y1 if T else y0 + 200) + BOTTOM
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="svg-figure heatmap-chart" viewBox="0 0 {WIDTH} '
           f'{height:.0f}" role="img" aria-label="{html_text(title or "attention")}" '
           f'font-family="{html_text(FONT["family"])}" font-size="{FONT_SIZE}" fill="{TEXT_COLOR}" style="width:100%;height:auto;display:block;'
           f'background:#ffffff"><title>{html_text(title or "attention")}</title><desc>{html_text(described)}</desc>'
           f'<rect x="0" y="0" width="{WIDTH}" height="{height:.0f}" fill="#ffffff"/>']
    if title:
        out.append(f'<text class="title" x="{WIDTH / 2}" y="22" text-anchor="middle" font-size="{TITLE_SIZE}">'
                   f'{html_text(title)}</text>')
    if message:
        out.append(f'<text class="message" x="{WIDTH / 2}" y="{y0 + 100}" text-anchor="middle" '
                   f'font-size="{FONT_SIZE + 1}" fill="#666666">{html_text(message)}</text>')
    out.append('<g class="cells">')
    for i in range(T):
        for j in range(S):
            where = (f"query {i} {html_text(repr(str(query_tokens[i])))} · "
                     f"key {j} {html_text(repr(str(key_tokens[j])))}")
            fill, note = ((attention_colour(w[i, j]), f"{w[i, j]:.3f}") if allowed[i, j]
                          else (MASKED_COLOR, "masked (this query may not attend here)"))
            out.append(f'<rect class="cell" data-q="{i}" data-k="{j}" x="{x0 + j * cell:.2f}" y="{y0 + i * cell:.2f}" '
                       f'width="{cell:.2f}" height="{cell:.2f}" fill="{fill}"><title>{where}: {note}</title></rect>')
    out.append("</g>")
    if T and S:
        out.append(f'<rect class="frame" x="{x0}" y="{y0}" width="{x1 - x0:.2f}" height="{y1 - y0:.2f}" '
                   f'fill="none" stroke="#444444"/>')
        size = FONT_SIZE if cell >= FONT_SIZE + 1 else max(10, int(cell - 1))  # a label per row while they fit
        step = _every(T, cell, size + 0.5)
        out += [f'<text class="query-label" x="{x0 - 5}" y="{y0 + (i + 0.5) * cell + size / 3:.2f}" '
                f'text-anchor="end" font-size="{size}">{html_text(_label(query_tokens[i]))}</text>'
                for i in range(0, T, step)]
        widest = max(len(_label(t)) for t in key_tokens) * 0.6 * size
        step = _every(S, cell, min(widest, size + 0.5) + 2)
        if widest <= cell * step - 2:  # upright labels fit
            out += [f'<text class="key-label" x="{x0 + (j + 0.5) * cell:.2f}" y="{y1 + size + 3}" '
                    f'text-anchor="middle" font-size="{size}">{html_text(_label(key_tokens[j]))}</text>'
                    for j in range(0, S, step)]
        else:  # turned: each label reads downwards from under its column
            step = _every(S, cell, size + 0.5)
            out += [f'<text class="key-label" transform="translate({x0 + (j + 0.5) * cell + size / 3:.2f} '
                    f'{y1 + 4}) rotate(90)" font-size="{size}">{html_text(_label(key_tokens[j]))}</text>'
                    for j in range(0, S, step)]
        out.append(f'<text class="axis-title" x="{(x0 + x1) / 2:.2f}" y="{height - 6:.0f}" text-anchor="middle">'
                   f'key (attended to)</text>')
        out.append(f'<text class="axis-title" transform="translate(16 {(y0 + y1) / 2:.2f}) rotate(-90)" '
                   f'text-anchor="middle">query (attending)</text>')
    # the colour bar: 1 at the top, 0 at the bottom
    bar_x, bar_top, bar_h = WIDTH - RIGHT + 22, y0, max(min(y1 - y0, 270), 120)
    stops = "".join(f'<stop offset="{1 - p:.3f}" stop-color="{c}"/>' for p, c in reversed(ATTENTION_COLORSCALE))
    out.append(f'<defs><linearGradient id="attention-scale" x1="0" y1="0" x2="0" y2="1">{stops}</linearGradient>'
               f'</defs><g class="colour-bar"><rect x="{bar_x}" y="{bar_top}" width="14" height="{bar_h:.2f}" '
               f'fill="url(#attention-scale)" stroke="#444444"/><text x="{bar_x + 18}" y="{bar_top + 5}">1</text>'
               f'<text x="{bar_x + 18}" y="{bar_top + bar_h + 5:.2f}">0</text><text class="axis-title" '
               f'transform="translate({bar_x - 6} {bar_top + bar_h / 2:.2f}) rotate(-90)" text-anchor="middle" '
               f'font-size="{FONT_SIZE - 2}">weight</text></g>')
    out.append("</svg>")
    return "".join(out)
