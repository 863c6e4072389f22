"""Every figure as a table and in words (issue 40, item 2): the table built from a figure (visualize.figure_text)
has the figure's cells, values and headers, for each kind of figure the app draws.

Oracle: the numbers and labels each figure was built from (not the figure read back): a table cell is the value
given, rounded to 3 decimals; its headers are the tokens or labels given, as they read on screen. The HTML is parsed
back with the standard library's parser, so what a screen reader walks is what is checked.
"""
from __future__ import annotations

from html import unescape
from html.parser import HTMLParser

import numpy as np
import pytest

from visualize import (attended_bar, final_token_curve, head_heatmap, layer_grid, logit_lens_grid, overview,
                       patching_grid, pe_matrix, pe_side_by_side, pe_waves, token_probabilities)
from visualize.figure_text import figure_description, figure_name, figure_tables, table_html
from visualize.in_words import series_summary
from visualize.style import visible_whitespace

TOKENS = ["<s>", "the", "<b>x</b>", "the", "</s>"]  # markup-like and repeated tokens: each keeps its own row


class _Tables(HTMLParser):
    """The tables of an HTML string as [(caption, header row, [(row header, cells)])], and every tag seen."""

    def __init__(self):
        super().__init__()
        self.tables, self.tags, self._cell, self._row = [], [], None, None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "table":
            self.tables.append({"caption": "", "head": [], "rows": []})
        elif tag == "tr":
            self._row = []
        elif tag in ("th", "td", "caption"):
            self._cell = ""

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data

    def handle_endtag(self, tag):
        table = self.tables[-1] if self.tables else None
        if tag == "caption":
            table["caption"], self._cell = self._cell, None
        elif tag in ("th", "td"):
            self._row.append((tag, self._cell))
            self._cell = None
        elif tag == "tr":
            if not table["head"]:
                table["head"] = [text for _, text in self._row]
            else:
                table["rows"].append(self._row)


def _parsed(figure):
    parser = _Tables()
    parser.feed(table_html(figure_tables(figure), max_cells=10_000, max_columns=512))
    return parser


def _check(table, rows, columns, cells):
    """The parsed table has `columns` as its header row (after the corner), `rows` as its row headers (th
    scope=row) and `cells` as its cells."""
    assert table["head"][1:] == columns
    assert [row[0] for row in table["rows"]] == [("th", r) for r in rows]
    assert [[text for _, text in row[1:]] for row in table["rows"]] == cells
    assert all(kind == "td" for row in table["rows"] for kind, _ in row[1:])


def _numbers(values):
    return [[f"{v:.3f}" for v in row] for row in np.asarray(values, dtype=float)]


def test_one_head_masked_is_its_weights_with_query_and_key_headers():
    """The one-head heatmap: query tokens head the rows, key tokens the columns (markup and repeats as typed), each
    cell its weight to 3 decimals, a masked cell "masked"; the name says what and how big, the description carries
    the caption given and the extremes."""
    w = np.tril(np.random.default_rng(0).random((5, 5)))
    fig = head_heatmap(w, TOKENS, TOKENS, title="decoder self-attention, layer 1, head 3",
                       mask=np.tril(np.ones((5, 5))), narrow=False)
    parsed = _parsed(fig)
    cells = [[f"{w[i, j]:.3f}" if j <= i else "masked" for j in range(5)] for i in range(5)]
    _check(parsed.tables[0], TOKENS, TOKENS, cells)
    assert parsed.tables[0]["head"][0] == "query (attending) (rows), key (attended to) (columns)"
    assert figure_name(fig) == "decoder self-attention, layer 1, head 3, 5 x 5"
    i, j = np.unravel_index(np.argmax(np.where(np.tril(np.ones((5, 5))) > 0, w, -1)), w.shape)
    description = figure_description(fig, "Layer 1, head 3: previous-token head")
    assert description.startswith("Layer 1, head 3: previous-token head. ")
    assert f"largest {w[i, j]:.3f} at query (attending) '{TOKENS[i]}', key (attended to) '{TOKENS[j]}'" in description
    assert "10 masked cells" in description


def test_a_token_never_becomes_markup():
    """Untrusted tokens are text in the table: no tag but the table's own, and the text reads as typed."""
    hostile = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "${7*7}", "{{x}}"]
    fig = head_heatmap(np.full((4, 4), 0.25), hostile, hostile, narrow=False)
    parsed = _parsed(fig)
    assert {tag for tag, _ in parsed.tags} == {"table", "caption", "thead", "tbody", "tr", "th", "td"}
    shown = [unescape(t) for t in fig.layout.xaxis.ticktext]  # as the axis shows them (a long one cut)
    assert parsed.tables[0]["head"][1:] == shown and shown[2:] == [visible_whitespace(t) for t in hostile[2:]]
    html = table_html(figure_tables(head_heatmap(np.full((4, 4), 0.25), hostile, hostile)), 100, 10)
    assert "${" not in html and "{{" not in html  # nothing gradio's HTML template would fill in


def test_all_heads_is_one_table_per_head():
    w = np.random.default_rng(1).random((3, 5, 5))
    fig = layer_grid(w, TOKENS, TOKENS, title="cross-attention weights, all heads of layer 0")
    parsed = _parsed(fig)
    assert [t["caption"] for t in parsed.tables] == ["head 0", "head 1", "head 2"]
    for h, table in enumerate(parsed.tables):
        _check(table, TOKENS, TOKENS, _numbers(w[h]))
    assert figure_name(fig) == "cross-attention weights, all heads of layer 0, 3 heatmaps of 5 x 5"


def test_the_overview_is_layers_by_heads():
    s = np.random.default_rng(2).random((2, 4))
    parsed = _parsed(overview(s, "anti-diagonal", title="anti-diagonal of every head"))
    _check(parsed.tables[0], ["0", "1"], ["0", "1", "2", "3"], _numbers(s))
    assert parsed.tables[0]["head"][0] == "layer (rows), head (columns)"


def test_the_logit_lens_writes_each_cells_token_and_probability():
    p = np.array([[0.1, 0.9], [0.35, 0.42]])
    fig = logit_lens_grid([["a", "<b>"], ["c", "d"]], p, ["embedding", "layer 0"], ["x", "y"], title="lens")
    _check(_parsed(fig).tables[0], ["embedding", "layer 0"], ["x", "y"],
           [["a: 0.100", "<b>: 0.900"], ["c: 0.350", "d: 0.420"]])


def test_a_patching_grid_keeps_its_signs_and_empty_cells():
    v = np.array([[0.25, -0.5], [np.nan, 1.0]])
    fig = patching_grid(v, ["L0", "L1"], ["<s>", "a"], [["h"] * 2] * 2, "patching", "effect", row_title="layer",
                        column_title="position")
    _check(_parsed(fig).tables[0], ["L0", "L1"], ["<s>", "a"], [["0.250", "-0.500"], ["no value", "1.000"]])


def test_positional_tables():
    pe = np.random.default_rng(3).standard_normal((4, 6))
    _check(_parsed(pe_matrix(pe, title="pe")).tables[0],
           ["0", "1", "2", "3"], [str(d) for d in range(6)], _numbers(pe))
    both = _parsed(pe_side_by_side(pe, -pe))
    assert [t["caption"] for t in both.tables] == ["sinusoidal (fixed)", "learned (trained)"]
    _check(both.tables[1], ["0", "1", "2", "3"], [str(d) for d in range(6)], _numbers(-pe))
    waves = _parsed(pe_waves(pe, [0, 3], title="waves")).tables[0]
    _check(waves, ["0", "1", "2", "3"], ["dim 0 (sin)", "dim 3 (cos)"], _numbers(pe[:, [0, 3]]))


def test_bars_and_curves():
    _check(_parsed(attended_bar(np.array([0.2, 0.8]), ["<s>", "b"], title="where b looks")).tables[0],
           ["<s>", "b"], ["where b looks"], [["0.200"], ["0.800"]])
    _check(_parsed(token_probabilities("a", [("b", 0.3), ("a", 0.6)], title="top")).tables[0], ["a", "b"],
           ["top"], [["0.600"], ["0.300"]])
    curve = final_token_curve(np.array([0.1, 0.5, 0.9]), ["embedding", "layer 0", "layer 1"], "x", title="p")
    _check(_parsed(curve).tables[0], ["emb", "0", "1"], ["x"], [["0.100"], ["0.500"], ["0.900"]])


def test_a_large_table_says_what_it_lists():
    """A table past its bounds lists its first columns and rows and says which in its caption."""
    parsed = _Tables()
    parsed.feed(table_html(figure_tables(pe_matrix(np.zeros((50, 40)), title="pe")), max_cells=100, max_columns=20))
    table = parsed.tables[0]
    assert len(table["head"]) == 21 and len(table["rows"]) == 5
    assert table["caption"] == "pe (the first 5 of 50 rows and 20 of 40 columns)"


@pytest.mark.parametrize("y, trend", [([3.0, 2.0, 1.2], "falling"), ([0.1, 0.5, 0.9], "rising"),
                                      ([1.0, 1.5, 1.01], "flat")])
def test_a_curve_in_words(y, trend):
    said = series_summary("train loss", [0, 250, 500], y, x_name="step")
    assert said.startswith(f"train loss {y[-1]:.3f} at step 500, {trend} from {y[0]:.3f} at step 0")


def test_the_svg_charts_say_what_they_show():
    """The Train tab's live chart and map (SVG in a gr.HTML): role="img", a <title> (their name) and a <desc> (the
    curves' last values and trend; the map's extremes). Failed before: no <title> or <desc>."""
    import xml.etree.ElementTree as ET

    from visualize.heatmap_svg import head_heatmap_svg
    from visualize.line_chart import training_chart

    ns = "{http://www.w3.org/2000/svg}"
    chart = ET.fromstring(training_chart([0, 10, 20], [3.0, 2.0, 1.5], [20], [1.7], exact_match=[0.4],
                                         title="Training loss"))
    assert chart.get("role") == "img" and chart.find(f"{ns}title").text == "Training loss"
    assert chart.find(f"{ns}desc").text == ("train loss 1.500 at step 20, falling from 3.000 at step 0 (lowest "
                                            "1.500, highest 3.000). validation loss 1.700 at step 20. exact match "
                                            "(%) 40 at step 20.")
    heatmap = ET.fromstring(head_heatmap_svg(np.array([[1.0, 0.0], [0.3, 0.7]]), ["<s>", "b"], ["<s>", "b"],
                                             title="layer 0, head 1", mask=np.tril(np.ones((2, 2)))))
    assert heatmap.get("role") == "img" and heatmap.find(f"{ns}title").text == "layer 0, head 1"
    assert heatmap.find(f"{ns}desc").text == ("2 x 2: largest 1.000 at query '<s>', key '<s>'; smallest 0.300 at "
                                              "query 'b', key '<s>'; 1 masked cells")


def test_every_plot_of_the_page_is_named_described_and_tabled():
    """widgets.figure_table.Plot puts the name, the description (the caption the app writes first) and a digest in
    every figure's meta as gr.Plot sends it; "Show as a table" of that value is a keyboard-reachable region
    stamped with the same digest; no figure is said in words."""
    import json

    from widgets.figure_caption import with_caption
    from widgets.figure_table import NO_FIGURE, Plot, table_of

    w = np.eye(3)
    fig = with_caption(head_heatmap(w, list("abc"), list("abc"), title="cross-attention weights, layer 1, head 3"),
                       "Layer 1, head 3: diagonal head: 100% of each row on its own position")
    sent = Plot().postprocess(fig)
    meta = json.loads(sent.plot)["layout"]["meta"]
    assert meta["name"] == "cross-attention weights, layer 1, head 3, 3 x 3"
    assert meta["description"].startswith("Layer 1, head 3: diagonal head: 100% of each row on its own position. ")
    assert len(meta["digest"]) == 16
    html = table_of(sent)
    assert f'data-digest="{meta["digest"]}"' in html and 'tabindex="0"' in html and 'role="region"' in html
    parsed = _Tables()
    parsed.feed(html)
    _check(parsed.tables[0], list("abc"), list("abc"), _numbers(w))
    assert NO_FIGURE in table_of(None)
