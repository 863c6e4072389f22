"""Read a drawn heatmap back, as a viewer reads it: its cells and the labels of its rows and columns.

Used by the demos' questions (tabs.demos: each answer is computed from the figure the class is shown, never from
the numbers behind it) and by tests. plotly 7 writes an array as base64 ({"dtype", "bdata", "shape"}); a masked
cell is None (NaN here).
"""
from __future__ import annotations

import base64
import html
import json
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Cells:
    z: np.ndarray  # (rows, columns), NaN where a cell is masked or empty
    rows: list[str]  # the label of each row, in the order of z
    columns: list[str]
    marks: frozenset = frozenset()  # (row, column) indices of the cells a marker trace draws on (gold circles)
    title: str = ""  # the figure's title as it reads (its line breaks as spaces)

    def argmax(self, row: int) -> int:
        """The column a row puts the most weight on (masked cells never)."""
        return int(np.nanargmax(self.z[row]))

    def row(self, label: str, occurrence: int = 1) -> int:
        """The index of the `occurrence`-th row labelled `label` (1 = the first)."""
        found = [i for i, name in enumerate(self.rows) if name == label]
        if len(found) < occurrence:
            raise ValueError(f"no row {label!r} number {occurrence} among {self.rows}")
        return found[occurrence - 1]


def as_array(values) -> np.ndarray:
    """A plotly array (a list, or a base64 typed array) as floats, None as NaN."""
    if isinstance(values, np.ndarray) and values.dtype != object:
        return values.astype(float)
    if isinstance(values, dict) and "bdata" in values:
        array = np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]).astype(float)
        shape = values.get("shape")
        return array.reshape([int(n) for n in str(shape).split(",")]) if shape else array
    return np.array([[np.nan if v is None else v for v in row] for row in values], dtype=float)


def labels_on(axis: dict, n: int) -> list[str]:
    """The label of each of n positions 0..n-1 on an axis drawn at integer positions with tick text (or, where
    plotly thins the ticks, each position's alias), as it reads on screen (`&lt;s&gt;` is `<s>`)."""
    values, text, alias = axis.get("tickvals"), axis.get("ticktext"), axis.get("labelalias")
    if values is not None and text is not None:
        by_position = dict(zip(as_array([values])[0].astype(int).tolist(), map(html.unescape, text)))
    elif isinstance(alias, dict):
        by_position = {int(k): html.unescape(str(v)) for k, v in alias.items() if str(k).lstrip("-").isdigit()}
    else:
        return [str(i) for i in range(n)]
    return [str(by_position.get(i, i)) for i in range(n)]


def heatmap_cells(figure) -> Cells:
    """The first heatmap of `figure` (a plotly figure as JSON, or as a dict) as the viewer sees it."""
    figure = json.loads(figure) if isinstance(figure, str) else figure
    trace = next(t for t in figure["data"] if t.get("type") == "heatmap")
    z = as_array(trace["z"])
    layout = figure.get("layout", {})
    marks = frozenset((int(y), int(x)) for t in figure["data"] if t.get("type") == "scatter"
                      and "markers" in str(t.get("mode", "")) for x, y in zip(_values(t.get("x")), _values(t.get("y")))
                      if np.isfinite(x) and np.isfinite(y))  # a legend's own marker has no place
    title = layout.get("title", {})
    title = html.unescape(str(title.get("text", "") if isinstance(title, dict) else title)).replace("<br>", " ")
    return Cells(z, labels_on(layout.get("yaxis", {}), z.shape[0]), labels_on(layout.get("xaxis", {}), z.shape[1]),
                 marks, " ".join(title.split()))


def _values(values) -> list:
    """A plotly 1-d array (a list, or a base64 typed array) as a list; None as empty."""
    if values is None:
        return []
    return (as_array(values) if isinstance(values, dict) else as_array([values])[0]).astype(float).tolist()


def bar_cells(figure) -> Cells:
    """The bars of `figure` (plotly JSON or a dict) as the viewer reads them: a row per place along the bars' axis
    (labelled as on that axis: features down for horizontal bars, positions across for vertical ones), a column per
    trace (its name: "head 3.2"), a cell the bar's length."""
    figure = json.loads(figure) if isinstance(figure, str) else figure
    bars = [t for t in figure["data"] if t.get("type") == "bar"]
    horizontal = bars[0].get("orientation") == "h"
    places = [_values(t.get("y" if horizontal else "x")) for t in bars]
    n = int(max(max(p) for p in places)) + 1
    z = np.full((n, len(bars)), np.nan)
    for c, (trace, at) in enumerate(zip(bars, places)):
        for place, value in zip(at, _values(trace.get("x" if horizontal else "y"))):
            z[int(place), c] = value
    layout = figure.get("layout", {})
    title = layout.get("title", {})
    title = html.unescape(str(title.get("text", "") if isinstance(title, dict) else title)).replace("<br>", " ")
    return Cells(z, labels_on(layout.get("yaxis" if horizontal else "xaxis", {}), n),
                 [str(t.get("name") or "value") for t in bars], frozenset(), " ".join(title.split()))
