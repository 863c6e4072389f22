"""A figure in words and as data: its name, its description and its cells as tables (WCAG 1.1.1; the W3C WAI
tutorial on complex images: a short name, a long description, the data).

One owner for every plotly figure the app draws: each is read back from the figure itself (its JSON, as the page
holds it: visualize.reading), never from the numbers behind it, so the words and the tables cannot disagree with
what is drawn. A heatmap becomes a table whose headers are its rows' and columns' labels (query and key tokens); the
curves and bars of a figure become one table, positions down, a column per curve. What a figure shows only as
colour (a masked cell) is written in words. No gradio: widgets.figure_table puts them in the page.
"""
from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, replace

import numpy as np

from .in_words import NO_VALUE, extremes, number, series_summary
from .reading import as_array, labels_on
from .text import html_text

MASKED_CELL = "masked"  # the name of the grey trace over masked cells (visualize.attention), and their cells' word


@dataclass(frozen=True)
class FigureTable:
    """One table of a figure: `cells[i][j]` (as written; `values[i, j]` its number, NaN for none or masked) at row
    `rows[i]` and column `columns[j]`."""
    caption: str
    row_header: str  # what the rows are ("query (attending)")
    column_header: str  # what the columns are ("key (attended to)")
    rows: list[str]
    columns: list[str]
    cells: list[list[str]]
    values: np.ndarray


_READ = ("type", "name", "z", "x", "y", "text", "hoverinfo", "xaxis", "yaxis", "orientation", "mode", "customdata")


def as_figure(figure) -> dict:
    """A figure as a plain dict: from its JSON text, a gr.Plot value (or its dict), a go.Figure or a dict. Of a
    go.Figure only what is read here, its arrays not copied (to_plotly_json copied 24 ms of a 64 x 64 heatmap)."""
    if hasattr(figure, "to_plotly_json"):
        return {"data": [{k: v for k in _READ if (v := getattr(trace, k, None)) is not None} for trace in figure.data],
                "layout": figure.layout.to_plotly_json()}
    if hasattr(figure, "plot"):
        figure = figure.plot
    if isinstance(figure, dict) and "plot" in figure and "data" not in figure:
        figure = figure["plot"]
    return json.loads(figure) if isinstance(figure, str) else figure


def plain(text) -> str:
    """Text as it reads on screen: <br> as a space, other markup dropped, entities decoded, spaces collapsed."""
    text = re.sub(r"<br\s*/?>", " ", str(text or ""))
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", text)).split())


def _text_of(item) -> str:
    """The text of a title (a dict with "text", or a string)."""
    return plain(item.get("text", "") if isinstance(item, dict) else item)


def _axis(layout: dict, ref: str | None, letter: str) -> dict:
    """The layout's axis a trace's `xaxis`/`yaxis` reference names ("x2" -> layout["xaxis2"])."""
    return layout.get(f"{letter}axis{(ref or letter)[1:]}", {}) or {}


def _is_data(trace: dict) -> bool:
    """A trace that draws data: not a text layer, a legend's key, marks over the cells (their hover skipped) or the
    grey of masked cells."""
    return trace.get("hoverinfo") != "skip" and trace.get("name") != MASKED_CELL


def _heatmaps(figure: dict) -> list[dict]:
    return [t for t in figure.get("data", []) if t.get("type") == "heatmap" and _is_data(t)]


def _subplot_title(layout: dict, trace: dict) -> str:
    """The title make_subplots wrote above the trace's subplot (an annotation over its domain's top), or ""."""
    xaxis, yaxis = _axis(layout, trace.get("xaxis"), "x"), _axis(layout, trace.get("yaxis"), "y")
    (x0, x1), top = xaxis.get("domain", [0, 1]), yaxis.get("domain", [0, 1])[1]
    for note in layout.get("annotations", []) or []:
        if note.get("yref") == "paper" and x0 <= note.get("x", -1) <= x1 and abs(note.get("y", -1) - top) < 1e-6:
            return plain(note.get("text", ""))
    return ""


def _masked(figure: dict, trace: dict) -> np.ndarray | None:
    """The cells the grey "masked" trace on the trace's axes covers ((rows, columns) bool), or None."""
    for other in figure.get("data", []):
        if (other.get("name") == MASKED_CELL and other.get("xaxis") == trace.get("xaxis")
                and other.get("yaxis") == trace.get("yaxis")):
            return np.isfinite(as_array(other["z"]))
    return None


def _says_more(written: str, value: float) -> bool:
    """Whether a cell's written text says what its value does not (a token), rather than the value rounded."""
    try:
        return abs(float(written.replace("−", "-")) - value) > 0.051 * max(1.0, abs(value))
    except ValueError:
        return True


def _heatmap(figure: dict, index: int) -> tuple[dict, np.ndarray, np.ndarray, dict, dict]:
    """The `index`-th heatmap's trace, values (rows, columns), masked cells (bool), and its x and y axes."""
    trace, layout = _heatmaps(figure)[index], figure.get("layout", {})
    z = as_array(trace["z"])  # (rows, columns)
    masked = _masked(figure, trace)
    return (trace, z, np.zeros(z.shape, bool) if masked is None else masked, _axis(layout, trace.get("xaxis"), "x"),
            _axis(layout, trace.get("yaxis"), "y"))


def _caption(figure: dict, trace: dict) -> str:
    layout = figure.get("layout", {})
    return plain(trace.get("name")) or _subplot_title(layout, trace) or _text_of(layout.get("title"))


def shown(rows: int, columns: int, max_cells: int | None, max_columns: int | None) -> tuple[int, int]:
    """How many rows and columns of a table are written: at most `max_columns` columns and `max_cells` cells."""
    c = columns if max_columns is None else min(columns, max_columns)
    return (rows if max_cells is None else min(rows, max(1, max_cells // max(1, c)))), c


def heatmap_table(figure, index: int = 0, max_cells: int | None = None, max_columns: int | None = None
                  ) -> FigureTable:
    """The `index`-th heatmap of `figure` (its data traces) as a table: rows and columns labelled as on screen, each
    cell its value ("masked" under the grey; a cell's written text first when it says more, as the logit lens's
    token: "Espíri…: 0.930"). Past `max_columns` columns or `max_cells` cells, only the cells shown() are written."""
    figure = as_figure(figure)
    trace, z, masked, xaxis, yaxis = _heatmap(figure, index)
    text = trace.get("text")
    R, C = shown(*z.shape, max_cells, max_columns)
    cells = []
    for i, row in enumerate(z[:R, :C]):
        line = []
        for j, value in enumerate(row):
            written = plain(text[i][j]) if text is not None else ""
            cell = MASKED_CELL if masked[i, j] else number(value)
            line.append(f"{written}: {cell}" if written and not masked[i, j] and _says_more(written, value) else cell)
        cells.append(line)
    return FigureTable(_caption(figure, trace), _text_of(yaxis.get("title")) or "row",
                       _text_of(xaxis.get("title")) or "column", labels_on(yaxis, z.shape[0]),
                       labels_on(xaxis, z.shape[1]), cells, np.where(masked, np.nan, z))


def _series(trace: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """(positions, values) of a curve or of bars (horizontal bars: positions on y), or None without data."""
    along, values = (trace.get("y"), trace.get("x")) if trace.get("orientation") == "h" else \
        (trace.get("x"), trace.get("y"))
    if values is None:
        return None
    v = as_array(values) if isinstance(values, dict) else as_array([values])[0]
    if not np.isfinite(v).any():
        return None
    if along is None:
        return np.arange(len(v), dtype=float), v
    return (as_array(along) if isinstance(along, dict) else as_array([along])[0]), v


def _position_labels(axis: dict, positions: list[float], trace: dict) -> list[str]:
    """Each position's label on its axis (the tick text, or the trace's own names of its points), else itself."""
    if not positions or not all(p.is_integer() and p >= 0 for p in positions):
        return [f"{p:g}" for p in positions]
    n = int(max(positions)) + 1
    named = labels_on(axis, n)
    custom = trace.get("customdata")
    if named == [str(i) for i in range(n)] and isinstance(custom, list) and len(custom) == n and \
            all(isinstance(c, str) for c in custom):
        named = [plain(c) for c in custom]
    return [named[int(p)] for p in positions]


def series_table(figure) -> FigureTable | None:
    """The curves and bars of `figure` as one table: the positions down (labelled as on their axis), a column per
    curve (its name, or its subplot's title), or None when the figure has none."""
    figure = as_figure(figure)
    layout = figure.get("layout", {})
    drawn = [(t, s) for t in figure.get("data", []) if t.get("type") in ("scatter", "bar") and _is_data(t)
             for s in [_series(t)] if s is not None]
    if not drawn:
        return None
    first = drawn[0][0]
    across = first.get("orientation") == "h"
    axis = _axis(layout, first.get("yaxis" if across else "xaxis"), "y" if across else "x")
    value_axis = _axis(layout, first.get("xaxis" if across else "yaxis"), "x" if across else "y")
    positions = sorted({float(p) for _, (x, _) in drawn for p in x if np.isfinite(p)})
    row_of = {p: i for i, p in enumerate(positions)}
    values = np.full((len(positions), len(drawn)), np.nan)
    for k, (_, (x, v)) in enumerate(drawn):
        for p, value in zip(x, v):
            if np.isfinite(p):
                values[row_of[float(p)], k] = value
    alone = _text_of(layout.get("title")) if len(drawn) == 1 else ""  # one curve: the figure's own
    columns = [plain(t.get("name")) or _subplot_title(layout, t) or alone or f"series {k + 1}"
               for k, (t, _) in enumerate(drawn)]
    return FigureTable(_text_of(layout.get("title")), _text_of(axis.get("title")) or "position",
                       _text_of(value_axis.get("title")) or "value", _position_labels(axis, positions, first),
                       columns, [[number(v) for v in row] for row in values], values)


def figure_tables(figure, max_cells: int | None = None, max_columns: int | None = None) -> list[FigureTable]:
    """Every table of `figure`: one per heatmap (a grid of heads: one per head; each written up to `max_cells` and
    `max_columns`: shown()), then one of its curves and bars."""
    figure = as_figure(figure)
    curves = series_table(figure)
    tables = [heatmap_table(figure, i, max_cells, max_columns) for i in range(len(_heatmaps(figure)))]
    tables += [curves] if curves else []
    return [t if t.caption else replace(t, caption=figure_name(figure)) for t in tables]


def figure_name(figure) -> str:
    """What the figure is, in a few words: its title and its cells' shape ("cross-attention weights, layer 1,
    head 3, 10 x 10"; a layer's heads: "..., 4 heatmaps of 10 x 10")."""
    figure = as_figure(figure)
    title, maps = _text_of(figure.get("layout", {}).get("title")), _heatmaps(figure)
    if not maps:
        return title
    shape = " or ".join(f"{r} x {c}" for r, c in sorted({as_array(t["z"]).shape for t in maps}))
    what = shape if len(maps) == 1 else f"{len(maps)} heatmaps of {shape}"
    return f"{title}, {what}" if title else what


def figure_description(figure, caption: str = "") -> str:
    """The long description: `caption` (the words the app already writes about the figure) when given, then what
    its data holds: each heatmap's largest and smallest cell, each curve's last value and trend."""
    figure = as_figure(figure)
    parts = [caption] if caption else []
    for i in range(len(_heatmaps(figure))):  # from the values: a 512 x 512 table is not written out for this
        trace, z, masked, xaxis, yaxis = _heatmap(figure, i)
        said = extremes(np.where(masked, np.nan, z), labels_on(yaxis, z.shape[0]), labels_on(xaxis, z.shape[1]),
                        _text_of(yaxis.get("title")) or "row", _text_of(xaxis.get("title")) or "column",
                        int(masked.sum()))
        caption = _caption(figure, trace)
        parts.append(f"{caption}: {said}" if caption else said)
    curves = series_table(figure)
    for k, name in enumerate(curves.columns if curves else []):
        parts.append(series_summary(name, curves.rows, curves.values[:, k], x_name=curves.row_header))
    return ". ".join(p.rstrip(".") for p in parts if p) + ("." if parts else "")


def table_html(tables: list[FigureTable], max_cells: int, max_columns: int) -> str:
    """The tables as HTML: a <caption>, a header row of the column labels (th scope=col) and each row's label (th
    scope=row); every label and cell escaped as text (a token never becomes markup). A table past `max_columns`
    columns or `max_cells` cells lists its first columns and rows and says so in its caption."""
    out = []
    for table in tables:
        R, C = shown(len(table.rows), len(table.columns), max_cells, max_columns)
        rows, columns = table.rows[:R], table.columns[:C]
        caption = table.caption or "the figure's values"
        if len(columns) < len(table.columns) or len(rows) < len(table.rows):
            caption += (f" (the first {len(rows)} of {len(table.rows)} rows and {len(columns)} of "
                        f"{len(table.columns)} columns)")
        corner = f"{table.row_header} (rows), {table.column_header} (columns)"
        head = "".join(f'<th scope="col">{html_text(c)}</th>' for c in columns)
        body = "".join(f'<tr><th scope="row">{html_text(r)}</th>'
                       + "".join(f"<td>{html_text(c)}</td>" for c in table.cells[i][:len(columns)]) + "</tr>"
                       for i, r in enumerate(rows))
        out.append(f'<table class="figure-table"><caption>{html_text(caption)}</caption><thead><tr><th scope="col">'
                   f'{html_text(corner)}</th>{head}</tr></thead><tbody>{body}</tbody></table>')
    return "".join(out)
