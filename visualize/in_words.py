"""What a figure's numbers say, in words: a value as a table writes it, a heatmap's extremes, a curve's last value
and trend. The plotly figures' descriptions (visualize.figure_text) and the SVG charts' <desc> (line_chart,
heatmap_svg) say them alike."""
from __future__ import annotations

import numpy as np

NO_VALUE = "no value"


def number(value: float) -> str:
    """A value as a table or a description writes it: three decimals, or a count (a whole number from 10)
    with thousands separated."""
    value = float(value)
    if not np.isfinite(value):
        return NO_VALUE
    if abs(value) >= 10 and value.is_integer():  # a count (parameters, bytes)
        return f"{int(value):,}"
    return f"{value:.3f}"


def extremes(values, rows, columns, row_name: str, column_name: str, masked: int = 0) -> str:
    """A heatmap's largest and smallest cell (values (R, C), NaN where none) with their row and column labels:
    "largest 0.982 at query 'a', key 'b'; smallest 0.001 at query 'c', key 'a'; 3 masked cells"."""
    v = np.asarray(values, dtype=float)
    if not np.isfinite(v).any():
        return "no values"

    def at(index) -> str:
        i, j = np.unravel_index(index, v.shape)
        return f"{number(v[i, j])} at {row_name} '{rows[i]}', {column_name} '{columns[j]}'"
    filled = np.where(np.isfinite(v), v, np.nan)
    text = f"largest {at(np.nanargmax(filled))}; smallest {at(np.nanargmin(filled))}"
    return text + (f"; {masked} masked cells" if masked else "")


def _place(x) -> str:
    try:
        return f"{float(x):g}"
    except (TypeError, ValueError):
        return f"'{x}'"


def series_summary(name: str, x, y, unit: str = "", x_name: str = "") -> str:
    """A curve in words: its last value, and from where and which way it went ("train loss 1.234 at step 500,
    falling from 3.210 at step 0 (lowest 1.200, highest 3.210)"); "flat" when it moved less than 5% of its range.
    `x` are numbers or labels (a layer's name)."""
    y = np.asarray(y, dtype=float).reshape(-1)
    keep = np.isfinite(y)
    x, y = [p for p, k in zip(list(x), keep) if k], y[keep]
    where = f"{x_name} " if x_name else ""
    if not len(y):
        return f"{name}: no values yet"
    last = f"{name} {number(y[-1])}{unit} at {where}{_place(x[-1])}"
    if len(y) == 1:
        return last
    change, spread = y[-1] - y[0], max(float(np.ptp(y)), 1e-12)
    trend = "flat" if abs(change) < 0.05 * spread else ("rising" if change > 0 else "falling")
    return (f"{last}, {trend} from {number(y[0])}{unit} at {where}{_place(x[0])} (lowest {number(y.min())}{unit}, "
            f"highest {number(y.max())}{unit})")
