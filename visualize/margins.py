"""The margins a figure needs around its plot, computed from its text, so that plotly draws it once.

Plotly lays a figure out with the margins it is given, then measures what its axes' labels and titles and its colour
bars take and, when that is more than the margins, lays it out and draws it all again (`Plots.doAutoMargin`): with
plotly's 10 px base margins every heatmap of a demo click was drawn twice (bench/RESULTS.md, "Issue 29 item 11").
The margins computed here hold what those push, so the first layout is the last. Plotly's automargin stays on: a
label wider than computed (a font the page lacks) still fits, at the price of the second drawing.

Text is measured with the advance widths of Helvetica, which Arial and Liberation Sans (the fonts of style.FONT)
share; a letter with an accent is as wide as the letter; any other character (a symbol, CJK) is counted 1 em wide.
"""
from __future__ import annotations

import html
import math
import unicodedata

# The advance width of each printable ASCII character, ' ' (32) to '~' (126), in thousandths of the font size
_ADVANCE = (
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556,
    556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667,
    611, 778, 722, 278, 500, 667, 556, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667,
    667, 611, 278, 278, 278, 469, 556, 333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500,
    222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
)
WIDE = 1000  # thousandths: a character outside the table


def _advance(ch: str) -> int:
    base = unicodedata.normalize("NFD", ch)[:1] or ch  # "í" -> "i"
    code = ord(base)
    return _ADVANCE[code - 32] if 32 <= code <= 126 else WIDE


def text_px(text: str, font: float) -> float:
    """The width (px) of `text` drawn in a `font` px font: the widest of its lines (plotly's `<br>`), markup such as
    `&lt;` read as the character it writes. Example: "weight" at 16 px is 0.556+0.556+0.222+0.556+0.556+0.278 em
    = 43.6 px."""
    lines = html.unescape(str(text)).split("<br>")
    return max(sum(_advance(ch) for ch in line) for line in lines) * font / 1000


PAD = 12  # px plotly adds to each push: the smallest margin, at most 12 (every margin set here is at least that)
LINE = 1.15  # a line of text's height in font sizes, as plotly's bounding boxes measure it (18 px at 16)
TITLE_LINE = 1.25  # an x axis's title's line, with its descenders: "key (attended to)"
TURNED_TITLE_LINE = 0.9  # a y axis's (measured: 5-6 px less at 16 px)
TICK_PX = 5  # an outside tick's length (style.FRAME) ...
TICK_GAP_PX = 5  # ... and from a tick to its label, with the frame's line (measured: 4-5 px)
TITLE_STANDOFF_PX = 15  # between an axis's labels and its title (the plotly_white template's standoff)
TURNED_PX = 4  # an x axis's label turned upright reaches this much further than its width (measured: 3 px)
FLAT_GAP_PX = 4  # plotly turns an x axis's labels upright when two neighbours come closer than 2.5 px: a margin


def labels_flat(labels, font: float, spacing_px: float) -> bool:
    """Whether tick `labels` in a `font` px font, `spacing_px` apart along an x axis, lie flat without coming
    closer than FLAT_GAP_PX (plotly's autotickangles [0, 90] turns them upright otherwise)."""
    widths = [text_px(label, font) for label in labels]
    return all((a + b) / 2 + FLAT_GAP_PX <= spacing_px for a, b in zip(widths, widths[1:]))


def axis_px(labels, font: float, title_font: float | None = None, upright: bool = False, along_x: bool = True,
            ticks: bool = True) -> int:
    """The margin (px) an axis needs on its side: its ticks, how far its labels reach out (a line's height for flat
    labels along an x axis; their widest on a y axis, or upright), the standoff and a line of its title (with
    `title_font`; None: no title) and plotly's PAD."""
    reach = 0.0
    if labels:
        reach = LINE * font if along_x and not upright else max(text_px(label, font) for label in labels)
        reach += TURNED_PX if along_x and upright else 0
    depth = (TICK_PX if ticks else 0) + TICK_GAP_PX + reach
    if title_font:  # a y axis's title is turned: its line's height without the room under the line
        depth += TITLE_STANDOFF_PX + (TITLE_LINE if along_x else TURNED_TITLE_LINE) * title_font
    return math.ceil(depth + PAD)


COLORBAR_PAD_PX = 16  # on either side of a colour bar (its xpad): from the plot, and to the figure's edge
COLORBAR_GAP_PX = 8  # from the bar to its tick labels (measured)
COLORBAR_TICKS = ("0.2", "0.4", "0.6", "0.8")  # the widest labels of a 0..1 scale


def colorbar_px(thickness: float, font: float, title_font: float, ticks=COLORBAR_TICKS) -> int:
    """The margin (px) a colour bar standing beside the plot (at x = 1) needs: its pads, its thickness, its tick
    labels and its title along its side, and plotly's PAD."""
    widest = max(text_px(tick, font) for tick in ticks)
    return math.ceil(2 * COLORBAR_PAD_PX + thickness + COLORBAR_GAP_PX + widest + LINE * title_font + PAD)


LEGEND_ROW_PX = 36  # a one-row legend under the figure (style.LEGEND_BELOW, 14 px text, its 16 px marker)


def _tick_texts(axis) -> tuple[list[str], float]:
    """The labels an axis may show (its ticktext, or its categories' aliases) and their font size."""
    labels = list(axis.ticktext or ()) or [str(v) for v in (axis.labelalias or {}).values()]
    return labels, float(axis.tickfont.size or 16)


def fit_margins(fig, width_px: float, colorbar: bool = False, legend_rows: int = 0, title_font: float = 16,
                bar_px: float | None = None) -> dict:
    """The left, right and bottom margins (px) a heatmap `width_px` wide needs, from its first x axis (the keys,
    under the plot) and y axis (the queries, at its left): with `colorbar`, a colour bar standing beside the plot at
    x = 1 (its thickness `bar_px`); with `legend_rows`, a legend under the figure. The x axis's labels are
    counted upright when they would not lie flat in their cells (labels_flat), as plotly would turn them."""
    xaxis, yaxis = fig.layout.xaxis, fig.layout.yaxis
    y_labels, y_font = _tick_texts(yaxis)
    x_labels, x_font = _tick_texts(xaxis)
    left = axis_px(y_labels, y_font, title_font if yaxis.title.text else None, along_x=False)
    cells = max(1, len(x_labels)) if xaxis.tickmode == "array" else 0  # thinned labels: their spacing is unknown
    right = colorbar_px(bar_px, 16, title_font) if colorbar else PAD
    domain = xaxis.domain or (0, 1)
    spacing = (width_px - left - right) * (domain[1] - domain[0]) / cells if cells else 0.0
    upright = not labels_flat(x_labels, x_font, spacing) if cells else len(max(x_labels, key=len, default="")) > 1
    if not (colorbar or upright):  # the last label, flat, reaches past the plot by half its width less half its cell
        # (half the widest, when plotly thins them); turned upright, it is narrower than its cell
        reach = text_px(x_labels[-1], x_font) if cells else max(text_px(label, x_font) for label in x_labels)
        right = PAD + max(0.0, (reach - spacing) / 2)
    bottom = axis_px(x_labels, x_font, title_font if xaxis.title.text else None, upright=upright)
    return dict(l=left, r=math.ceil(right), b=bottom + LEGEND_ROW_PX * legend_rows)
