"""The figures of "What the heads write" (visualize.features): the bars are the numbers given, each bar says in
text which head it is and its share, and bars and labels keep the app's minimum sizes (visualize.sizes)."""
from __future__ import annotations

import pytest

from visualize.features import BAR_FONT, BAR_PX, activation_strip, heads_bars
from visualize.figure_text import figure_tables
from visualize.sizes import MIN_CELL_PX, MIN_LABEL_PX

SHARES = [[0.62, 0.2, 0.1, 0.08], [0.25, 0.25, 0.25, 0.25], [0.0, 0.9, 0.05, 0.05]]
HEADS = ["3.0", "3.1", "3.2", "3.3"]
FEATURES = ["f12 (2.10)", "f7 (1.50)", "f300 (0.40)"]


def test_heads_bars_are_the_shares_each_written_with_its_head():
    fig = heads_bars(SHARES, FEATURES, HEADS, title="heads")
    assert [t.name for t in fig.data] == [f"head {h}" for h in HEADS]
    for h, trace in enumerate(fig.data):
        assert list(trace.x) == pytest.approx([row[h] for row in SHARES])
        assert list(trace.y) == [0, 1, 2] and trace.orientation == "h"
        assert list(trace.text) == [f"{HEADS[h]} {row[h]:.0%}" for row in SHARES]  # the head in words, not colour
    assert fig.data[0].text[0] == "3.0 62%"
    assert list(fig.layout.yaxis.ticktext) == FEATURES


def test_heads_bars_keep_the_minimum_sizes():
    """Each bar is at least MIN_CELL_PX thick (the figure's height gives every head's bar BAR_PX) and every text at
    least MIN_LABEL_PX, so a phone's figure is taller, never smaller."""
    fig = heads_bars(SHARES, FEATURES, HEADS)
    assert BAR_PX >= MIN_CELL_PX and BAR_FONT >= MIN_LABEL_PX
    plot_height = fig.layout.height - fig.layout.margin.t - 150 + 10  # _AROUND_Y less the default bottom margin
    per_bar = plot_height * (1 - fig.layout.bargap) / (len(FEATURES) * len(HEADS))
    assert per_bar >= MIN_CELL_PX
    assert all(t.textfont.size >= MIN_LABEL_PX for t in fig.data)
    assert fig.layout.yaxis.tickfont.size >= MIN_LABEL_PX


def test_heads_bars_read_as_a_table_of_features_by_heads():
    """The figure's table (what a screen reader's user reads, visualize.figure_text): a row per feature, a column
    per head."""
    [table] = figure_tables(heads_bars(SHARES, FEATURES, HEADS).to_dict())
    assert table.columns == [f"head {h}" for h in HEADS] and table.rows == FEATURES
    assert [float(v.rstrip("%")) / 100 if str(v).endswith("%") else float(v) for v in table.cells[0]] == \
        pytest.approx(SHARES[0], abs=1e-3)


def test_the_strip_is_the_activations_with_the_chosen_position_marked():
    acts = [0.0, 1.25, 0.0, 3.5, 0.2]
    fig = activation_strip(acts, ["<s>", "Y", " dijo", ":", " V"], title="strip", chosen=3)
    bar = fig.data[0]
    assert list(bar.y) == pytest.approx(acts) and list(bar.x) == [0, 1, 2, 3, 4]
    assert bar.marker.color[3] != bar.marker.color[1] and bar.text[3] == "3.50" and bar.text[1] == ""
    assert list(bar.customdata)[0] == "&lt;s&gt;"  # a token plotly would read as markup, as text


def test_a_long_strip_keeps_its_bars_and_scrolls_sideways():
    """64 positions in a phone's 302 px section: each bar keeps MIN_CELL_PX, so the figure is wider than its box
    (the page scrolls it) and every position is labelled."""
    fig = activation_strip([0.1] * 64, [f"t{i}" for i in range(64)], chosen=0, container_px=302)
    assert (fig.layout.width - 70) / 64 * (1 - fig.layout.bargap) >= MIN_CELL_PX  # each bar
    assert fig.layout.xaxis.tickfont.size >= MIN_LABEL_PX
    wide = activation_strip([0.1] * 8, [f"t{i}" for i in range(8)], container_px=1192)
    assert wide.layout.width is None  # fits: the box's width


def test_the_figures_refuse_mismatched_data():
    with pytest.raises(ValueError, match="need 3 feature labels and 4 head labels"):
        heads_bars(SHARES, FEATURES, HEADS[:3])
    with pytest.raises(ValueError, match="2 activations but 3 tokens"):
        activation_strip([1.0, 2.0], ["a", "b", "c"])
