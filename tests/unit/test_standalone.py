"""visualize.standalone: a figure as one HTML page that draws it offline."""
from __future__ import annotations

import base64
import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

import visualize as viz
from visualize.standalone import standalone_html


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
])
def test_what_is_not_a_figure_or_would_reach_out_is_refused_in_words(text, said):
    """Refusal: JSON that is not a plotly figure, or one that would fetch anything, raises ValueError saying why."""
    with pytest.raises(ValueError, match=said):
        standalone_html(text)


def test_a_figure_with_markup_in_its_text_stays_data():
    """Invariant: a title holding `</script>` cannot end the page's script: plotly escapes < > / in the JSON."""
    page = standalone_html(pio.to_json(go.Figure(layout={"title": {"text": "</script><script>alert(1)</script>"}})))
    assert "</script><script>alert(1)" not in page
