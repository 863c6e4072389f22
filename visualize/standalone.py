"""A figure as a page of its own: one HTML file with plotly.js inside, which draws the figure offline, in any
browser, with its hover text and zoom (what BertViz users ask for most: a view to put in slides or send).

plotly's own `to_html(include_plotlyjs=True, full_html=True)` writes it: the plotly.js bundled with the plotly
package (about 4.8 MB) and the figure's JSON, with `<`, `>` and `/` escaped inside the script. The figure is checked
against plotly's schema first (every property must be one plotly knows: `go.Figure(..., skip_invalid=False)` refuses
the rest), and only the kinds of trace the app draws are taken, with no layout image and no frames (which the page
would play): maps and images would fetch from outside, and the file must never reach out.

The JSON is parsed once and written from that parse. The schema check reads the figure's outline: each list that
holds no object (a data array: z, x, text, customdata) cut to its first OUTLINE_ITEMS items, which is all plotly
checks of one (a data array may hold any values) and more than any fixed-length property has. Built whole,
`plotly.io.from_json` then `to_html` copied the arrays into the figure object, again into its dict and again into
JSON: writing one 10.4 MiB figure's page (a 755 x 755 heatmap) peaked at 120 MiB traced, 11.5 times its size; from
its parse, at 47 MiB, of which ~30 are plotly.js's copies in any page (tests/unit/test_standalone.py bounds the rest).
"""
from __future__ import annotations

import uuid

import plotly.graph_objects as go
import plotly.io as pio
from plotly.io.json import from_json_plotly, to_json_plotly

STANDALONE_CONFIG = {"displaylogo": False, "responsive": True}  # plotly.js options of the page (no link out)
TRACE_TYPES = frozenset({"heatmap", "scatter", "bar"})  # what visualize/ draws; none of them fetches anything
OUTLINE_ITEMS = 64  # items of a list without objects that the schema check reads (plotly's longest fixed: 4)


def outline(value):
    """`value` (parsed JSON) with each list that holds no object, at any depth, cut to its first OUTLINE_ITEMS
    items, and nothing else changed; shares the values it keeps (a copy of the containers only)."""
    if isinstance(value, dict):
        return {key: outline(item) for key, item in value.items()}
    if isinstance(value, list):
        if not _holds_object(value):
            return [outline(item) for item in value[:OUTLINE_ITEMS]]
        return [outline(item) for item in value]
    return value


def _holds_object(items: list) -> bool:
    """Whether a dict is anywhere inside the list `items`."""
    pending = [items]
    while pending:
        for item in pending.pop():
            if isinstance(item, dict):
                return True
            if isinstance(item, list):
                pending.append(item)
    return False


def _checked(figure_json: str) -> dict:
    """The figure `figure_json` parsed, once it is a plotly figure of TRACE_TYPES with no image and no frames."""
    try:
        figure = from_json_plotly(figure_json)
        if not isinstance(figure, dict):
            raise ValueError("a figure is a JSON object")
        checked = go.Figure(outline(figure), skip_invalid=False)
    except ValueError as e:
        first = next((line.strip() for line in str(e).splitlines() if line.strip()), "")
        raise ValueError(f"this is not a figure plotly can draw ({first[:120]})") from None
    kinds = sorted({trace.type for trace in checked.data} - TRACE_TYPES)
    if kinds or checked.layout.images or checked.frames:
        what = ", ".join(kinds) or ("images" if checked.layout.images else "frames")
        raise ValueError(f"a figure with {what} cannot be saved as a page that works offline")
    if "template" not in figure.get("layout", {}):  # plotly's default look, as a figure object would have it
        figure.setdefault("layout", {})["template"] = checked.layout.template.to_plotly_json()
    return figure


def standalone_parts(figure_json: str) -> tuple[str, str, str]:
    """The HTML page that draws `figure_json` (a plotly figure as JSON, as plotly writes it) offline, in three parts
    to write one after the other: the page up to the figure's traces, their JSON, the rest. Raises ValueError, in
    words, for JSON that is not a plotly figure or one that would load anything from outside.

    The traces' JSON (nearly all of a large figure) is made once and never copied into the page: plotly's to_html
    writes the page around a marker in its place, whose first occurrence is where the traces go (the page before it
    holds plotly.js and a div of checked numbers)."""
    figure = _checked(figure_json)
    traces = to_json_plotly(figure.pop("data", []))  # <, > and / escaped, as to_html escapes them
    figure["data"] = marker = f"figure-traces-{uuid.uuid4().hex}"
    page = pio.to_html(figure, include_plotlyjs=True, full_html=True, config=STANDALONE_CONFIG, validate=False)
    head, found, tail = page.partition(to_json_plotly(marker))
    if not found:
        raise RuntimeError("plotly's page no longer holds the traces where this module puts them")
    return head, traces, tail


def standalone_html(figure_json: str) -> str:
    """The page of `standalone_parts` as one string."""
    return "".join(standalone_parts(figure_json))


def write_standalone_html(figure_json: str, path) -> None:
    """Write the page of `standalone_parts` to the file `path` (UTF-8), part by part."""
    parts = standalone_parts(figure_json)
    with open(path, "w", encoding="utf-8") as out:
        for part in parts:
            out.write(part)
