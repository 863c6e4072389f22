"""The shared look of every figure, and the small helpers that turn plain data into what plotly needs.

Figures are shown on a projector in a classroom and on phones: large fonts, white background, margins that plotly
grows to fit what is in them (tick labels, axis titles, colour bars, legends), titles that fit a phone's width.
"""
from __future__ import annotations

import html
import math

import numpy as np
import plotly.colors
import plotly.graph_objects as go
import plotly.io as pio

from .sizes import MAX_LABEL_CHARS, MIN_LABEL_PX
from .text import html_text

FONT = dict(family="Helvetica, Arial, sans-serif", size=16, color="#222222")  # system fonts only, nothing fetched
TITLE_SIZE = 18
TITLE_WRAP = 36  # longer titles go on two lines: a 390 px phone's figure holds ~36 characters of an 18 px title
# Base margins; the axes' automargin (plotly_white) and the colour bars and legends grow them to fit their text.
# The top one is set from the title's number of lines (plotly does not grow it for a title).
MARGIN = dict(l=10, r=10, b=10)
TITLE_LINE = 26  # px per line of title
PHONE_WIDTH = 640  # px: a page this narrow or narrower is a phone (app.py's CSS stacks the plots there too)
LEGEND_BELOW = dict(orientation="h", yref="container", y=0, yanchor="bottom", x=0, xanchor="left")
# Every figure's template, given to it when it is made: plotly's default template is applied then without being
# validated again (0.7 ms a figure), where `update_layout(template=...)` validated the whole template for each figure
# (13 ms; three figures in a first redraw of a head, four in a Show attention of the page). Set for this process when
# this module is imported, before any figure of the app is made; style_figure still sets it on a figure that lacks it.
TEMPLATE = "plotly_white"
WHITE_TEMPLATE_PLOT = "white"  # its plot background: what tells a figure that has it from one that does not
pio.templates.default = TEMPLATE

# Attention weights: pure white at 0 (clearly "nothing here") to dark navy at 1. Plotly's "Blues" with white first.
ATTENTION_COLORSCALE = [[0.0, "rgb(255,255,255)"], [0.125, "rgb(222,235,247)"], [0.25, "rgb(198,219,239)"],
                        [0.375, "rgb(158,202,225)"], [0.5, "rgb(107,174,214)"], [0.625, "rgb(66,146,198)"],
                        [0.75, "rgb(33,113,181)"], [0.875, "rgb(8,81,156)"], [1.0, "rgb(8,48,107)"]]
MASKED_COLOR = "rgb(170,170,170)"  # a neutral grey: neither the white of a zero weight nor any blue of the scale
MASKED_MARK = "×"  # written in every masked cell: grey is not the only sign of a masked cell
DIVERGING_COLORSCALE = "RdBu_r"  # blue < 0 < red, white at 0 (use with zmid=0)
BAR_COLOR = "rgb(66,146,198)"
HIGHLIGHT_COLOR = "rgb(230,85,13)"
FRAME = dict(showline=True, linecolor="#444444", mirror=True, ticks="outside")  # a frame, since 0 is white

_VISIBLE_WHITESPACE = {" ": "␣", "\n": "⏎", "\t": "⇥", "\r": "␍"}


def wrap_title(title: str, width: int = TITLE_WRAP) -> str:
    """`title` on ceil(len / `width`) lines (two for a title up to twice `width` characters) when it is longer than
    `width` characters, each break after the ", " (or before the " (") nearest its even share of the title. The
    space before a break stays, so the title's text content is unchanged. Example: a 90-character title at
    width 36 goes on three lines of ~30 (on two, each line's 45 characters ran past a phone's figure)."""
    if len(title) <= width or "<br>" in title:
        return title
    breaks = [i + 2 for i in range(len(title)) if title.startswith(", ", i)]
    breaks += [i + 1 for i in range(len(title)) if title.startswith(" (", i)]
    if not breaks:
        breaks = [i + 1 for i, ch in enumerate(title) if ch == " "]
    lines = math.ceil(len(title) / width)
    cuts = []
    for k in range(1, lines):
        later = [i for i in breaks if i > (cuts[-1] if cuts else 0)]
        if later:
            cuts.append(min(later, key=lambda i: abs(i - len(title) * k / lines)))
    bounds = [0, *cuts, len(title)]
    return "<br>".join(title[a:b] for a, b in zip(bounds, bounds[1:]))


COLORBAR_THICKNESS = 16  # px


def colorbar(title: str = "", **extra) -> dict:
    """A slim colour bar whose title runs along its side (a title on top collides with the top tick label and
    widens the bar on a phone)."""
    return dict(title=dict(text=title, side="right"), thickness=COLORBAR_THICKNESS, **extra)


def top_margin(title: str, top_space: int = 0) -> int:
    """The top margin (px) of a figure titled `title` (wrapped: wrap_title) with `top_space` px above its plot area
    for what sits there (subplot titles, a flat colour bar). Plotly keeps a title's first line in the middle of the
    top margin and writes the others under it, so each line past the second takes two lines of margin (measured: a
    third line on one line's margin overlapped the plot's top tick by 8 px)."""
    text = wrap_title(title)
    lines = text.count("<br>") + 1 if text else 0
    lines += max(0, lines - 2)  # the margin's lines
    return 24 + TITLE_LINE * lines + top_space


def style_figure(fig: go.Figure, title: str = "", top_space: int = 0, **layout) -> go.Figure:
    """Apply the projector- and phone-friendly layout (plus any `layout` overrides) to `fig` and return it.

    The title is wrapped to two lines when long (three when longer still: wrap_title) and the top margin made to
    hold it, plus `top_space` pixels for what sits above the plot area (top_margin).
    """
    text = wrap_title(title)
    if pio.templates.default != TEMPLATE or fig.layout.template.layout.plot_bgcolor != WHITE_TEMPLATE_PLOT:
        fig.update_layout(template=TEMPLATE)  # made before this module, or under another default: validated here
    fig.update_layout(
        font=FONT,
        title=dict(text=text, font=dict(size=TITLE_SIZE), x=0.02, xanchor="left"),  # centred in the top margin
        paper_bgcolor="white",
        plot_bgcolor="white",
        margin=dict(MARGIN, t=top_margin(title, top_space), autoexpand=True),
        autosize=True,
        hoverlabel=dict(font_size=16),
    )
    fig.update_layout(**layout)
    return fig


def empty_curves(message) -> go.Figure:
    """A blank figure that only says `message` in the middle (a plot with nothing to show yet)."""
    fig = go.Figure()
    fig.add_annotation(text=message, x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False,
                       font=dict(size=20, color="#666666"))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return style_figure(fig)


def visible_whitespace(token) -> str:
    """A token's text with its spaces, newlines and tabs drawn as visible signs (␣ ⏎ ⇥ ␍)."""
    return "".join(_VISIBLE_WHITESPACE.get(ch, ch) for ch in str(token))


def axis_labels(tokens) -> list[str]:
    """Tokens as plotly writes them (hover texts): as text (plotly reads `<s>` as markup and hides it;
    visualize.text), whitespace made visible."""
    return [visible_whitespace(html_text(token)) for token in tokens]


def tick_labels(tokens) -> list[str]:
    """Tokens as tick labels: axis_labels, each at most MAX_LABEL_CHARS characters as read on screen (a longer one
    cut, its last character "…"), so that no label pushes a figure's margins past its size. Example: the 37
    characters of "<unk>he<unk>disciples<unk>were<unk>fi" read as "<unk>he<unk>dis…"."""
    return [html_text(cut_label(visible_whitespace(str(token)))) for token in tokens]


def cut_label(text: str) -> str:
    """`text` if it has at most MAX_LABEL_CHARS characters, else its first ones and "…", MAX_LABEL_CHARS in all."""
    return text if len(text) <= MAX_LABEL_CHARS else text[:MAX_LABEL_CHARS - 1] + "…"


CHAR_WIDTH, LINE_HEIGHT = 0.62, 1.25  # a tick label's width per character, and its line's height, in font sizes


def token_font_size(n: int, every_token: bool = False) -> int:
    """The tick font for an axis of n tokens: 16 px up to 16, then smaller; with `every_token` (each token gets its
    label, on cells made wide enough for it: visualize.sizes) MIN_LABEL_PX past 16 tokens."""
    if n <= 16:
        return 16
    if every_token:
        return MIN_LABEL_PX
    return 14 if n <= 32 else 13


def label_space(labels, font: float) -> float:
    """Pixels one of `labels` needs along its axis in a `font` px font: its width when one character or two wide,
    else the height of its line (plotly turns wide labels upright rather than let them collide)."""
    widest = max((len(html.unescape(label)) for label in labels), default=1)
    return min(CHAR_WIDTH * font * widest, LINE_HEIGHT * font) if widest <= 2 else LINE_HEIGHT * font


def token_axis(tokens, size: int | None = None, axis_px: float | None = None, **extra) -> dict:
    """Axis settings for tokens at positions 0..n-1, labelled with the escaped tokens.

    The axis is categorical with one category per position (so a repeated token keeps its own row). With
    `axis_px`, the axis' length in pixels, every position gets its label (tickvals, ticktext) when they fit that
    length side by side (label_space) in a font from `size` down to MIN_LABEL_PX (the largest that fits);
    otherwise (and without `axis_px`) plotly thins them to what the axis holds (every second or third token at 64),
    each category's label aliased to its token (tick_labels: cut past MAX_LABEL_CHARS). Wide labels turn upright
    instead of colliding (labels of one
    character never do: upright they are narrower than a line is tall); the hover always names the full token.
    """
    n = len(tokens)
    size = size or token_font_size(n, every_token=axis_px is not None)
    labels = tick_labels(tokens)
    fits = [f for f in range(size, MIN_LABEL_PX - 1, -1) if n * label_space(labels, f) <= (axis_px or 0)]
    if fits:
        size, ticks = fits[0], dict(tickmode="array", tickvals=list(range(n)), ticktext=labels)
    else:
        ticks = dict(tickmode="auto", labelalias={str(i): label for i, label in enumerate(labels)})
    # one character upright is narrower than its line is tall: turning such labels would only make them collide
    angles = [0] if max((len(html.unescape(label)) for label in labels), default=1) <= 1 else [0, 90]
    return dict(type="category", autotickangles=angles, tickfont=dict(size=size), **ticks, **extra)


def as_array(data, ndim: int | None = None, name: str = "data") -> np.ndarray:
    """A tensor, array or nested list as a float numpy array (float32 and float64 are kept as they are).

    Raises ValueError when `ndim` is given and the data has another number of dimensions.
    """
    if hasattr(data, "detach"):  # a torch tensor (checked without importing torch)
        data = data.detach().cpu()
        if str(data.dtype) not in ("torch.float32", "torch.float64"):
            data = data.float() if data.is_floating_point() else data.double()  # both exact
        data = data.numpy()
    array = np.asarray(data)
    if array.dtype not in (np.float32, np.float64):
        array = array.astype(np.float64)
    if ndim is not None and array.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {tuple(array.shape)}")
    return array


DARK_TEXT, LIGHT_TEXT = "#000000", "#ffffff"


def _linear(channel: float) -> float:
    c = channel / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def cell_text_colour(colour: str) -> str:
    """The colour of text written on a cell of `colour` ("rgb(r,g,b)" or "#rrggbb"): black or white, whichever
    contrasts more with it (WCAG 2.2 relative luminance), so every cell's text meets 4.5:1 (black and white meet
    it on any colour: the two ratios cross at ~4.58:1). plotly's own choice (#444 on a cell that is not dark) gave
    3.98:1 on the attention scale's middle blue."""
    channels = plotly.colors.unlabel_rgb(colour) if colour.startswith("rgb") else plotly.colors.hex_to_rgb(colour)
    luminance = sum(w * _linear(c) for w, c in zip((0.2126, 0.7152, 0.0722), channels[:3]))
    return DARK_TEXT if (luminance + 0.05) / 0.05 >= 1.05 / (luminance + 0.05) else LIGHT_TEXT


def scale_colour(colorscale, fraction: float) -> str:
    """The colour of `colorscale` (a plotly scale or its name) at `fraction` (0..1, clipped), as "rgb(r,g,b)"."""
    scale = plotly.colors.get_colorscale(colorscale) if isinstance(colorscale, str) else colorscale
    scale = [[float(stop), colour] for stop, colour in scale]  # a figure's scale comes back as tuples
    return plotly.colors.sample_colorscale(scale, [float(np.clip(fraction, 0, 1))], colortype="rgb")[0]


def written_cells(z, text, colorscale, zmin: float, zmax: float, reversescale: bool = False, **trace) -> list:
    """The text of a heatmap's cells (z, text: (rows, columns)) as two transparent heatmaps laid over it, one
    writing in black and one in white: each cell's text in the colour cell_text_colour picks for its cell's colour
    (plotly writes a heatmap's text in one colour per trace). `trace` takes what the heatmap under them has that
    places or sizes its text (x, y, xgap, ygap, textfont, xaxis, yaxis). Hover and tables skip
    them (hoverinfo "skip"); the heatmap under them keeps its values and text."""
    values = np.asarray(z, dtype=float)
    span = (zmax - zmin) or 1.0
    dark = np.zeros(values.shape, dtype=bool)
    for index, v in np.ndenumerate(values):
        if np.isfinite(v):
            fraction = (v - zmin) / span
            dark[index] = cell_text_colour(scale_colour(colorscale, 1 - fraction if reversescale else fraction)
                                           ) == DARK_TEXT
    text = np.asarray(text, dtype=object)
    finite = np.isfinite(values)
    clear = [[0, "rgba(0,0,0,0)"], [1, "rgba(0,0,0,0)"]]
    font = dict(trace.pop("textfont", None) or {})
    return [go.Heatmap(z=np.zeros(values.shape).tolist(), text=np.where(finite & (dark == want), text, "").tolist(),
                       texttemplate="%{text}", colorscale=clear, showscale=False, hoverinfo="skip",
                       name=f"cell text ({colour})", textfont=dict(font, color=colour), **trace)
            for want, colour in ((True, DARK_TEXT), (False, LIGHT_TEXT))]
