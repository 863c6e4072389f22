"""visualize.standalone: a figure as one HTML page that draws it offline."""
from __future__ import annotations

import base64
import json
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

import visualize as viz
from visualize.standalone import STANDALONE_CONFIG, standalone_html, write_standalone_html


def test_the_page_holds_plotly_js_and_the_figure_itself():
    """Oracle: plotly's own JSON of the figure. The page carries plotly.js inline (no script by URL) and, read
    back from its Plotly.newPlot call, the same cells as the heatmap the app draws."""
    weights = np.random.default_rng(0).dirichlet(np.ones(4), size=3)
    figure = viz.head_heatmap(weights, list("abc"), list("wxyz"), title="t")
    page = standalone_html(figure.to_json())
    assert "<script src=" not in page and len(page) > 3_000_000
    start = page.index("[", page.index("Plotly.newPlot("))
    data, _ = json.JSONDecoder().raw_decode(page, start)
    assert np.allclose(_array(data[0]["z"]), np.array(figure.data[0].z, dtype=float), equal_nan=True)


def _array(z) -> np.ndarray:
    """A z as plotly writes it: a list of rows, or a base64 typed array {"dtype", "bdata", "shape"}."""
    if isinstance(z, dict):
        shape = [int(n) for n in str(z["shape"]).split(",")]
        return np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(shape).astype(float)
    return np.array(z, dtype=float)


@pytest.mark.parametrize("text, said", [
    ("not json", "not a figure plotly can draw"),
    ('{"data": [{"type": "heatmap", "zz": [1]}]}', "not a figure plotly can draw"),  # a property plotly lacks
    ('{"data": [{"type": "scattergeo"}]}', "scattergeo cannot be saved"),  # would fetch its map from a CDN
    ('{"data": [], "layout": {"images": [{"source": "http://example.com/a.png"}]}}', "images cannot be saved"),
    # frames the page would play at once: a map in one would fetch
    ('{"data": [], "frames": [{"data": [{"type": "scattergeo"}]}]}', "frames cannot be saved"),
    # the schema check reads every object, however many come before it (only lists of plain values are cut)
    pytest.param(json.dumps({"data": [{"type": "heatmap", "z": [[1]]}] * 99 + [{"type": "heatmap", "zz": [1]}]}),
                 "not a figure plotly can draw", id="a-property-plotly-lacks-in-the-100th-trace"),
    ('[1, 2]', "not a figure plotly can draw"),
])
def test_what_is_not_a_figure_or_would_reach_out_is_refused_in_words(text, said):
    """Refusal: JSON that is not a plotly figure, or one that would fetch anything, raises ValueError saying why."""
    with pytest.raises(ValueError, match=said):
        standalone_html(text)


def test_the_page_is_plotlys_own_page_of_the_figure():
    """Oracle: plotly's to_html of the figure object (its default template added where the figure has none). The
    page written from the one parse holds the same traces, layout and config, in plotly's own page."""
    figure = go.Figure(go.Heatmap(z=[[0.25, 0.5], [0.75, 1.0]], text=[["a", "b"], ["<c>", "d"]]),
                       layout={"title": {"text": "t"}, "width": 500})
    text = json.dumps(figure.to_plotly_json()["data"])
    for made in (pio.to_json(figure), '{"data": %s, "layout": {"title": {"text": "t"}, "width": 500}}' % text):
        page = standalone_html(made)
        oracle = pio.from_json(made).to_html(include_plotlyjs=True, full_html=True, config=STANDALONE_CONFIG)
        assert _plot_call(page) == _plot_call(oracle)


def _plot_call(page: str) -> list:
    """The arguments of the page's Plotly.newPlot call after its div's id: traces, layout, config."""
    decoder, at = json.JSONDecoder(), page.index(",", page.index("Plotly.newPlot(")) + 1
    found = []
    for _ in range(3):
        value, at = decoder.raw_decode(page, at + len(page[at:]) - len(page[at:].lstrip()))
        found.append(value)
        at = page.index(",", at) + 1 if len(found) < 3 else at
    return found


def test_one_export_peaks_at_a_few_times_its_figure():
    """Bound (issue 37, item 4): what writing one figure's page allocates at its peak (counted by tracemalloc), above
    what the page of a one-cell figure costs (plotly.js, ~25 MB of copies), is under 4 times the figure's JSON (a
    1 MiB heatmap of 260 x 260 numbers): 1.1 times here. Built whole (from_json, the figure object, its dict, its
    JSON, the page as one string) it was 8.7 times."""
    side = 260
    text = json.dumps({"data": [{"type": "heatmap", "z": [[round((i * 131 + j * 7) % 1000 / 997, 12)
                                                             for j in range(side)] for i in range(side)]}]})
    least = '{"data": [{"type": "heatmap", "z": [[1]]}]}'
    _peak(least)  # plotly's validators and plotly.js loaded
    above = _peak(text) - _peak(least)
    assert above < 4 * len(text), f"peak {above:,} bytes above a one-cell figure's for a figure of {len(text):,}"


def _peak(text: str) -> int:
    """The most bytes traced at once while the page of `text` is written to a file (which must hold the figure)."""
    with tempfile.TemporaryDirectory() as folder:
        tracemalloc.start()
        try:
            write_standalone_html(text, Path(folder) / "figure.html")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert (Path(folder) / "figure.html").stat().st_size > len(text) // 2
    return peak


def test_a_figure_with_markup_in_its_text_stays_data():
    """Invariant: a title holding `</script>` cannot end the page's script: plotly escapes < > / in the JSON."""
    page = standalone_html(pio.to_json(go.Figure(layout={"title": {"text": "</script><script>alert(1)</script>"}})))
    assert "</script><script>alert(1)" not in page
