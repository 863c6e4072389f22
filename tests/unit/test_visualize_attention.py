"""Attention figures show exactly the weights they are given, with every token (escaped) on its own row."""
import ast
import pathlib

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from transformer.analysis import head_scores
from visualize import (attended_bar, axis_labels, head_heatmap, layer_grid, overview, scores_table,
                       token_probabilities)
from visualize.style import ATTENTION_COLORSCALE


def softmax_rows(*shape, seed=0):
    return torch.softmax(torch.randn(*shape, generator=torch.Generator().manual_seed(seed)), dim=-1)


def test_heatmap_z_is_the_input_weights():
    """The figure shows the weights unchanged (no transpose, rounding or flipping of the data)."""
    w = softmax_rows(3, 4)
    fig = head_heatmap(w, ["a", "b", "c"], ["w", "x", "y", "z"])
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), w.numpy())
    assert (fig.data[0].zmin, fig.data[0].zmax) == (0, 1)


def test_repeated_tokens_keep_separate_rows():
    """Plotly merges repeated categories; integer positions with tick text keep "the" ... "the" as two rows."""
    tokens = ["the", "cat", "the"]
    fig = head_heatmap(np.eye(3), tokens, tokens)
    assert list(fig.layout.yaxis.tickvals) == [0, 1, 2]
    assert list(fig.layout.yaxis.ticktext) == tokens
    assert list(fig.layout.xaxis.ticktext) == tokens
    assert list(fig.data[0].y) == [0, 1, 2]
    assert fig.layout.yaxis.autorange == "reversed"  # first query at the top, as in the paper's figures


def test_special_tokens_are_escaped_and_whitespace_visible():
    """`<s>` would be read as markup and vanish; a space or newline token would be invisible."""
    fig = head_heatmap(np.full((2, 3), 1 / 3), ["<s>", "a b"], ["</s>", "<pad>", "\n\t"])
    assert list(fig.layout.yaxis.ticktext) == ["&lt;s&gt;", "a␣b"]
    assert list(fig.layout.xaxis.ticktext) == ["&lt;/s&gt;", "&lt;pad&gt;", "⏎⇥"]
    assert axis_labels(["a&b", ' "q" ']) == ["a&amp;b", '␣"q"␣']


def test_hover_names_query_and_key_tokens():
    """Hovering cell (t, s) names query token t and key token s, so repeated tokens can be told apart."""
    fig = head_heatmap(softmax_rows(2, 3), ["<s>", "x"], ["p", "q", "r"])
    assert tuple(fig.data[0].customdata[1][2]) == ("x", "r")
    assert tuple(fig.data[0].customdata[0][0]) == ("&lt;s&gt;", "p")
    assert "customdata[0]" in fig.data[0].hovertemplate and "%{z" in fig.data[0].hovertemplate


def test_attention_colour_scale_starts_at_pure_white():
    """A weight of 0 must read as empty on a projector."""
    assert ATTENTION_COLORSCALE[0] == [0.0, "rgb(255,255,255)"] and ATTENTION_COLORSCALE[-1][0] == 1.0


def test_mismatched_tokens_raise():
    """A token list that does not match the weights is a caller bug: say so instead of drawing a wrong figure."""
    with pytest.raises(ValueError, match="query tokens"):
        head_heatmap(np.eye(3), ["a", "b"], ["a", "b", "c"])
    with pytest.raises(ValueError):
        head_heatmap(np.eye(3), ["a", "b", "c"], ["a", "b"])
    with pytest.raises(ValueError):
        layer_grid(softmax_rows(2, 3, 3), ["a", "b", "c"], ["a", "b"])
    with pytest.raises(ValueError):
        attended_bar([0.5, 0.5], ["only one"])


def test_layer_grid_one_heatmap_per_head_on_a_shared_scale():
    """Trace h is head h's weights, titled "head h", and all heads share one 0..1 colour axis."""
    w = softmax_rows(5, 3, 4)
    fig = layer_grid(w, ["a", "b", "a"], ["w", "x", "y", "z"], cols=2)
    heatmaps = [t for t in fig.data if isinstance(t, go.Heatmap)]
    assert len(heatmaps) == 5
    for h, trace in enumerate(heatmaps):
        np.testing.assert_array_equal(np.asarray(trace.z), w[h].numpy())
        assert trace.coloraxis == "coloraxis"
    assert [a.text for a in fig.layout.annotations] == [f"head {h}" for h in range(5)]
    assert (fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax) == (0, 1)
    assert list(fig.layout.yaxis.ticktext) == ["a", "b", "a"]


def test_layer_grid_hides_tick_labels_for_long_inputs():
    """Past 24 tokens per side the small grids would be unreadable, so labels are dropped."""
    tokens = [f"t{i}" for i in range(30)]
    fig = layer_grid(softmax_rows(2, 30, 30), tokens, tokens)
    assert fig.layout.xaxis.showticklabels is False and fig.layout.yaxis2.showticklabels is False


def test_overview_writes_each_value_and_picks_the_colour_range():
    """Every cell shows its value to 2 decimals; 0..1 scores use 0..1, entropy its own data range."""
    scores = np.array([[0.123, 0.5], [1.0, 0.0], [0.25, 0.999]])
    fig = overview(scores, "diagonal")
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), scores)
    assert [list(row) for row in fig.data[0].text] == [["0.12", "0.50"], ["1.00", "0.00"], ["0.25", "1.00"]]
    assert (fig.data[0].zmin, fig.data[0].zmax) == (0, 1)
    assert list(fig.layout.yaxis.ticktext) == ["layer 0", "layer 1", "layer 2"]
    assert fig.layout.yaxis.autorange == "reversed"
    ent = overview(np.array([[0.5, 2.0]]), "entropy")
    assert (ent.data[0].zmin, ent.data[0].zmax) == (0.5, 2.0)


def test_scores_table_recognises_diagonal_and_anti_diagonal_heads():
    """Oracle: an identity pattern is a pure diagonal head, a flipped identity a pure anti-diagonal head.

    T is even so that no cell lies on both diagonals."""
    T = 4
    identity = torch.eye(T)[None, None]  # (L=1, H=1, T, T)
    table = scores_table(head_scores(identity))
    assert list(table.columns[:2]) == ["layer", "head"]
    assert table.loc[0, "diagonal"] == 1 and table.loc[0, "anti-diagonal"] == 0
    assert table.loc[0, "entropy"] == 0
    anti = scores_table(head_scores(torch.eye(T).flip(-1)[None, None]))
    assert anti.loc[0, "anti-diagonal"] == 1 and anti.loc[0, "diagonal"] == 0
    assert anti.loc[0, "mean distance"] == 2.0  # |3 - 2t| for t = 0..3: 3, 1, 1, 3


def test_scores_table_one_row_per_head_rounded():
    """Rows run over (layer, head) in order; values are rounded to 3 decimals."""
    scores = {"entropy": torch.tensor([[0.12345, 1.0], [2.0, 3.98765]])}
    table = scores_table(scores)
    assert table[["layer", "head"]].values.tolist() == [[0, 0], [0, 1], [1, 0], [1, 1]]
    assert table["entropy"].tolist() == [0.123, 1.0, 2.0, 3.988]


def test_attended_bar_shows_one_query_by_position():
    """Bars are at integer key positions labelled by token, heights equal to the weights."""
    fig = attended_bar(torch.tensor([0.1, 0.6, 0.3]), ["the", "<s>", "the"])
    np.testing.assert_allclose(np.asarray(fig.data[0].y), [0.1, 0.6, 0.3])
    assert list(fig.data[0].x) == [0, 1, 2]
    assert list(fig.layout.xaxis.ticktext) == ["the", "&lt;s&gt;", "the"]


def test_token_probabilities_sorted_with_chosen_highlighted():
    """Most likely alternative on top, the chosen token in its own colour, probabilities written on the bars."""
    fig = token_probabilities("b", [("a", 0.1), ("b", 0.3), ("<c>", 0.6)])
    bar = fig.data[0]
    assert list(bar.x) == [0.6, 0.3, 0.1]
    assert list(fig.layout.yaxis.ticktext) == ["&lt;c&gt;", "b", "a"]
    assert fig.layout.yaxis.autorange == "reversed"
    colours = list(bar.marker.color)
    assert colours[1] != colours[0] and colours[0] == colours[2]
    assert bar.text[0].startswith("60.0%") and bar.text[1].startswith("30.0%")


def test_visualize_never_imports_gradio():
    """visualize/ is plain data in, figure out: it must stay usable (and testable) without gradio."""
    for path in pathlib.Path(__file__).parents[2].joinpath("visualize").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n.split(".")[0] == "gradio" for n in names), path
