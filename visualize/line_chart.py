"""Curves that stream while a model trains, as a small self-contained SVG string (no plotly, no script).

A live run sends the page a new chart twice a second. Redrawing a plotly figure that often (gradio's Plot calls
Plotly.react and Plots.resize on every value) left ~500 detached DOM nodes and ~125 listeners reachable per update,
and the page's memory grew without bound; an SVG shown as HTML is parsed and replaced, and nothing of the old one
stays. The chart scales with its container (viewBox), so one drawing serves a projector and a phone.

`line_chart(curves, ...)` draws the step on x, a left y axis (loss, from 0) and an optional right y axis with a fixed
range (exact match in %, a score 0..1). Each curve is a `<polyline class="curve" data-name=... data-axis=...>` whose
points map to its data through the axes: a tick at SVG x (or y) shows its value, so a reader of the SVG, a test or
an eye, gets the numbers back. Every curve is thinned to at most `max_points` points (LIVE_POINTS by default;
`downsample_indices`: evenly spread, first and last kept).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .in_words import series_summary
from .style import BAR_COLOR, FONT, HIGHLIGHT_COLOR
from .text import html_text

LIVE_POINTS = 200  # per curve: a projector laptop redraws the chart twice a second while a run streams
WIDTH = 400  # viewBox units; the drawing is scaled to its container's width (~590 px on a projector, ~300 on a phone)
FONT_SIZE, TITLE_SIZE = 15, 17  # in viewBox units: ~11 and ~13 px on a phone, ~22 and ~25 px on a projector
PLOT_HEIGHT = 200
LEFT, RIGHT_WITH_AXIS, RIGHT_WITHOUT = 62, 58, 18  # the plot area's margins, room for the tick labels and axis titles
LEGEND_ROW = 24
CHAR_WIDTH = 0.56  # an estimate of a sans-serif character's width, in font sizes (for the legend's rows)
GRID_COLOR, AXIS_COLOR, TEXT_COLOR = "#e3e3e3", "#444444", FONT["color"]
# A score on the right axis (exact match, the best previous-token score) is near-black, dashed, with square
# markers: beside the orange validation loss (solid, round markers) its colour difference under a red-green
# deficiency is ΔE 63 (protan) and 79 (deutan), where the green it was fell to 20 and 36 (tests/unit/test_colour.py)
EXACT_COLOR = "rgb(34,34,34)"
BAND_COLOR = "rgba(230,85,13,0.12)"
SCORE_COLORS = {"previous token": EXACT_COLOR, "induction": "rgb(117,107,177)"}
COMPARISON_COLORS = ["rgb(33,113,181)", "rgb(230,85,13)", "rgb(49,163,84)", "rgb(117,107,177)", "rgb(140,86,75)",
                     "rgb(227,119,194)", "rgb(90,90,90)", "rgb(188,189,34)"]


@dataclass(frozen=True)
class Curve:
    """One line of the chart: `y[i]` at step `x[i]`; on the right axis when `right`; `markers` draws its points
    (always drawn when it has a single point, which a line cannot show) as circles or squares (`marker`)."""

    name: str
    x: object
    y: object
    color: str
    right: bool = False
    markers: bool = False
    dash: bool = False
    marker: str = "circle"  # or "square"


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About `count` round values (1, 2 or 5 times a power of ten apart) from the first at or below `low` to the
    first at or above `high`."""
    if not (math.isfinite(low) and math.isfinite(high)) or high < low:
        raise ValueError(f"ticks need finite low <= high, got {low}, {high}")
    if high == low:
        high = low + 1
    raw = (high - low) / max(count - 1, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw - 1e-12 * power)
    first, last = math.floor(low / step + 1e-9), math.ceil(high / step - 1e-9)
    return [round(k * step, 12) for k in range(first, last + 1)]


def tick_label(value: float, ticks: list[float]) -> str:
    """A tick's text: as many decimals as the ticks' spacing needs, thousands separated ("1,500", "0.25")."""
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step < 1 else 0
    return f"{value:,.{decimals}f}"


def downsample_indices(n: int, max_points: int) -> np.ndarray:
    """At most `max_points` evenly spread indices into a series of length n, always keeping the first and last."""
    if n <= max_points:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, max_points).round().astype(int))


def _finite(values) -> np.ndarray:
    array = np.asarray(values, dtype=float).reshape(-1)
    return array[np.isfinite(array)]


def _marker(curve: Curve, x: float, y: float) -> str:
    """One of `curve`'s points, in its marker's shape (a shape as well as a colour tells two curves apart)."""
    if curve.marker == "square":
        return (f'<rect class="marker square" x="{x - 3.5:.2f}" y="{y - 3.5:.2f}" width="7" height="7" '
                f'fill="{curve.color}"/>')
    return f'<circle class="marker circle" cx="{x:.2f}" cy="{y:.2f}" r="3.5" fill="{curve.color}"/>'


def _legend_rows(names: list[str], width: float) -> list[list[tuple[int, float]]]:
    """The legend's entries (index into `names`, width) packed into rows no wider than `width`."""
    rows, used = [], width
    for i, name in enumerate(names):
        w = 34 + CHAR_WIDTH * FONT_SIZE * len(name) + 16  # swatch, text, gap
        if used + w > width:
            rows.append([])
            used = 0.0
        rows[-1].append((i, w))
        used += w
    return rows


def _y_axis(side: str, ticks: list[float], to_svg, line_x: tuple[float, float], line_color: str, label_x: float,
            anchor: str, title_at: str, title: str) -> list[str]:
    """A vertical axis's SVG: one `g.tick` per tick (a line from line_x[0] to line_x[1] at the tick's height, its
    label at label_x) and the axis title placed by `title_at` (a transform)."""
    parts = [f'<g class="axis {side}-axis">']
    for t in ticks:
        y = to_svg(t)
        parts.append(f'<g class="tick" data-value="{t!r}"><line x1="{line_x[0]}" x2="{line_x[1]}" y1="{y:.2f}" '
                     f'y2="{y:.2f}" stroke="{line_color}"/><text x="{label_x}" y="{y + 5:.2f}" '
                     f'text-anchor="{anchor}">{tick_label(t, ticks)}</text></g>')
    parts.append(f'<text class="axis-title" {title_at} text-anchor="middle">{html_text(title)}</text></g>')
    return parts


def chart_description(curves: list[Curve], x_title: str = "step", message: str = "") -> str:
    """What the chart shows, in words (its SVG's <desc>): each curve's last value and trend (visualize.in_words), or
    the chart's `message` before any step."""
    said = [series_summary(c.name, c.x, c.y, x_name=x_title) for c in curves if len(np.asarray(c.y).reshape(-1))]
    return ". ".join([message] * bool(message) + said) + "." if message or said else "No values yet."


def line_chart(curves: list[Curve], title: str = "", x_title: str = "step", left_title: str = "loss (nats/token)",
               right_title: str | None = None, right_range: tuple[float, float] | None = None,
               right_rules: tuple[float, ...] = (), band: tuple[float, float] | None = None,
               x_max: float | None = None, message: str = "", max_points: int = LIVE_POINTS) -> str:
    """The chart as an SVG string. x runs from 0 to the larger of `x_max` and the last step; the left axis from 0 to
    a round value above the highest left curve; the right axis (drawn when a curve is on it) over `right_range`,
    with dotted lines at `right_rules`. `band` = (first step, last step) is shaded. `message`, when given, is
    written in the middle (a chart before any step). Curves without points stay in the legend."""
    for c in curves:
        if len(np.asarray(c.x).reshape(-1)) != len(np.asarray(c.y).reshape(-1)):
            raise ValueError(f"curve {c.name!r}: {len(c.x)} steps but {len(c.y)} values")
        if c.right and right_range is None:
            raise ValueError(f"curve {c.name!r} is on the right axis: give right_range")
    has_right = any(c.right for c in curves)
    right_margin = RIGHT_WITH_AXIS if has_right else RIGHT_WITHOUT
    x0, x1 = LEFT, WIDTH - right_margin
    title_h = 40 if title else 12
    y0, y1 = title_h, title_h + PLOT_HEIGHT  # top and bottom of the plot area
    legend = _legend_rows([c.name for c in curves], WIDTH - 20)
    height = y1 + 58 + LEGEND_ROW * len(legend) + 6

    xs = [_finite(c.x) for c in curves]
    x_top = max([x_max or 0.0] + [float(x.max()) for x in xs if len(x)] + [1.0])
    x_ticks = nice_ticks(0.0, x_top, 6)
    left_values = [_finite(c.y) for c in curves if not c.right]
    y_top = max([float(v.max()) for v in left_values if len(v)] + [0.0])
    y_ticks = nice_ticks(0.0, y_top if y_top > 0 else 1.0, 5)
    r_ticks = nice_ticks(*right_range, 6) if has_right else []

    def sx(v):
        return x0 + (v - x_ticks[0]) / (x_ticks[-1] - x_ticks[0]) * (x1 - x0)

    def sy(v, ticks):
        return y1 - (v - ticks[0]) / (ticks[-1] - ticks[0]) * (y1 - y0)

    font = html_text(FONT["family"])
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="svg-figure line-chart" viewBox="0 0 {WIDTH} {height}" '
           f'role="img" aria-label="{html_text(title or left_title)}" font-family="{font}" font-size="{FONT_SIZE}" '
           f'fill="{TEXT_COLOR}" style="width:100%;height:auto;display:block;background:#ffffff">',
           f'<title>{html_text(title or left_title)}</title>'
           f'<desc>{html_text(chart_description(curves, x_title, message))}'
           f'</desc>', f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#ffffff"/>']
    if title:
        out.append(f'<text class="title" x="{WIDTH / 2}" y="21" text-anchor="middle" font-size="{TITLE_SIZE}">'
                   f'{html_text(title)}</text>')
    if band is not None:
        a, b = sx(max(band[0], x_ticks[0])), sx(min(band[1], x_ticks[-1]))
        out.append(f'<rect class="band" x="{a:.2f}" y="{y0}" width="{max(b - a, 1):.2f}" height="{y1 - y0}" '
                   f'fill="{BAND_COLOR}"/>')
    # the x axis
    out.append('<g class="axis x-axis">')
    for t in x_ticks:
        x = sx(t)
        out.append(f'<g class="tick" data-value="{t!r}"><line x1="{x:.2f}" x2="{x:.2f}" y1="{y0}" y2="{y1}" '
                   f'stroke="{GRID_COLOR}"/><line x1="{x:.2f}" x2="{x:.2f}" y1="{y1}" y2="{y1 + 5}" '
                   f'stroke="{AXIS_COLOR}"/><text x="{x:.2f}" y="{y1 + 23}" text-anchor="middle">'
                   f'{tick_label(t, x_ticks)}</text></g>')
    out.append(f'<text class="axis-title" x="{(x0 + x1) / 2}" y="{y1 + 43}" text-anchor="middle">'
               f'{html_text(x_title)}</text></g>')
    mid = (y0 + y1) / 2
    out += _y_axis("left", y_ticks, lambda t: sy(t, y_ticks), (x0, x1), GRID_COLOR, x0 - 6, "end",
                   f'transform="translate(14 {mid}) rotate(-90)"', left_title)
    if has_right:
        out += _y_axis("right", r_ticks, lambda t: sy(t, r_ticks), (x1, x1 + 5), AXIS_COLOR, x1 + 8, "start",
                       f'transform="translate({WIDTH - 18} {mid}) rotate(90)"', right_title or "")
        for rule in right_rules:
            y = sy(rule, r_ticks)
            out.append(f'<line class="rule" x1="{x0}" x2="{x1}" y1="{y:.2f}" y2="{y:.2f}" stroke="#888888" '
                       f'stroke-dasharray="2 4"/>')
    out.append(f'<rect class="frame" x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" fill="none" '
               f'stroke="{AXIS_COLOR}"/>')
    # the curves
    for c in curves:
        x, y = np.asarray(c.x, dtype=float).reshape(-1), np.asarray(c.y, dtype=float).reshape(-1)
        keep = downsample_indices(len(x), max_points)
        ticks = r_ticks if c.right else y_ticks
        points = [(sx(a), sy(b, ticks)) for a, b in zip(x[keep], y[keep]) if math.isfinite(a) and math.isfinite(b)]
        text = " ".join(f"{a:.2f},{b:.2f}" for a, b in points)
        dash = ' stroke-dasharray="7 4"' if c.dash else ""
        name = html_text(c.name)
        out.append(f'<g class="series" data-name="{name}"><polyline class="curve" data-name="{name}" '
                   f'data-axis="{"right" if c.right else "left"}" points="{text}" fill="none" stroke="{c.color}" '
                   f'stroke-width="2.5" stroke-linejoin="round"{dash}/>')
        if c.markers or len(points) == 1:
            out += [_marker(c, a, b) for a, b in points]
        out.append("</g>")
    if message:
        out.append(f'<text class="message" x="{(x0 + x1) / 2}" y="{(y0 + y1) / 2}" text-anchor="middle" '
                   f'font-size="{TITLE_SIZE + 3}" fill="#666666">{html_text(message)}</text>')
    # the legend, under the plot
    top = y1 + 64
    for r, row in enumerate(legend):
        x, y = 10.0, top + r * LEGEND_ROW
        for i, w in row:
            c = curves[i]
            dash = ' stroke-dasharray="7 4"' if c.dash else ""
            mark = _marker(c, x + 13, y) if c.markers else ""
            out.append(f'<g class="legend-item"><line x1="{x:.1f}" x2="{x + 26:.1f}" y1="{y:.1f}" y2="{y:.1f}" '
                       f'stroke="{c.color}" stroke-width="3"{dash}/>{mark}<text x="{x + 32:.1f}" y="{y + 5:.1f}">'
                       f'{html_text(c.name)}</text></g>')
            x += w
    out.append("</svg>")
    return "".join(out)


def training_chart(steps, losses, val_steps=(), val_losses=(), exact_match=None, title="", x_max=None,
                   max_points: int = LIVE_POINTS, message: str = "") -> str:
    """A run's train loss (line), validation loss (line and points) and, for a task, the exact match of each
    evaluation (fractions 0..1 at `val_steps`, drawn in % on the right axis)."""
    curves = [Curve("train loss", steps, losses, BAR_COLOR),
              Curve("validation loss", val_steps, val_losses, HIGHLIGHT_COLOR, markers=True)]
    if exact_match is not None:
        curves.append(Curve("exact match (%)", val_steps, 100 * np.asarray(exact_match, dtype=float), EXACT_COLOR,
                            right=True, markers=True, dash=True, marker="square"))
    return line_chart(curves, title, right_title="exact match (%)" if exact_match is not None else None,
                      right_range=(0, 100), x_max=x_max, max_points=max_points, message=message)


def comparison_chart(series: dict, title="", x_max=None, max_points: int = LIVE_POINTS, planned: bool = True
                     ) -> str:
    """The train loss of several runs on one chart: series = {name: (steps, losses)}, one colour each (a run keeps
    its colour whichever are shown). With `planned` (while the comparison runs) a run without a step yet is in the
    legend, as what comes next; without it (the comparison ended or was stopped) the legend and the chart hold only
    the runs that have a curve."""
    curves = [Curve(name, steps, losses, COMPARISON_COLORS[i % len(COMPARISON_COLORS)])
              for i, (name, (steps, losses)) in enumerate(series.items()) if planned or len(steps)]
    return line_chart(curves, title, left_title="train loss (nats/token)", x_max=x_max, max_points=max_points)


def phase_change_chart(steps, losses, eval_steps, val_losses, scores: dict, window=None, title="", x_max=None,
                       max_points: int = LIVE_POINTS) -> str:
    """The induction phase change on one time axis: train and validation loss on the left axis, and on the right
    each of `scores` = {name: values at eval_steps} (0..1) as "best <name> score", with the 0.5 line; `window` =
    (first step, last step) shades where the induction score rose."""
    curves = [Curve("train loss", steps, losses, BAR_COLOR),
              Curve("validation loss", eval_steps, val_losses, HIGHLIGHT_COLOR, markers=True)]
    curves += [Curve(f"best {name} score", eval_steps, values, SCORE_COLORS.get(name, "rgb(90,90,90)"), right=True,
                     markers=True, dash=True, marker="square") for name, values in scores.items()]
    return line_chart(curves, title, right_title="score", right_range=(0, 1), right_rules=(0.5,), band=window,
                      x_max=x_max, max_points=max_points)
