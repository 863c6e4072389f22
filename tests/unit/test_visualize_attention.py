"""Attention figures show exactly the weights they are given, with every token (escaped) on its own row."""
import ast
import math
import pathlib

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from transformer.interpretability.analysis import head_scores
from visualize import (attended_bar, axis_labels, grid_columns, head_heatmap, layer_grid, overview,
                       scores_table, token_probabilities)
from visualize.attention import HEATMAP_BOX_PX, MASKED
from visualize.sizes import MIN_CELL_PX, MIN_LABEL_PX
from visualize.style import ATTENTION_COLORSCALE, CHAR_WIDTH, LINE_HEIGHT, MASKED_COLOR


def softmax_rows(*shape, seed=0):
    return torch.softmax(torch.randn(*shape, generator=torch.Generator().manual_seed(seed)), dim=-1)


def tick_labels(axis) -> list[str]:
    """The label of each position of a token axis (a category per position): its ticktext when every position is
    labelled, else the alias of its category (plotly shows the ones that fit)."""
    assert axis.type == "category"
    if axis.tickmode == "array":
        assert list(axis.tickvals) == list(range(len(axis.ticktext)))
        return list(axis.ticktext)
    return [axis.labelalias[str(i)] for i in range(len(axis.labelalias))]


def test_heatmap_z_is_the_input_weights():
    """The figure shows the weights unchanged (no transpose, rounding or flipping of the data)."""
    w = softmax_rows(3, 4)
    fig = head_heatmap(w, ["a", "b", "c"], ["w", "x", "y", "z"])
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), w.numpy())
    assert (fig.data[0].zmin, fig.data[0].zmax) == (0, 1)


def test_repeated_tokens_keep_separate_rows():
    """Plotly merges repeated categories: the categories are the positions 0, 1, 2, each labelled with its token,
    so "the" ... "the" stay two rows."""
    tokens = ["the", "cat", "the"]
    fig = head_heatmap(np.eye(3), tokens, tokens)
    assert list(fig.data[0].y) == [0, 1, 2] and list(fig.data[0].x) == [0, 1, 2]
    assert tick_labels(fig.layout.yaxis) == tokens
    assert tick_labels(fig.layout.xaxis) == tokens
    assert fig.layout.yaxis.autorange == "reversed"  # first query at the top, as in the paper's figures


@pytest.mark.parametrize("n", [9, 24, 32])
def test_the_attention_tabs_heatmap_labels_every_token_up_to_32(n):
    """Regression (issue 19): at 24 tokens plotly's thinning labelled every other token of the one-head heatmap.
    On the Attention tab's page (narrow=False: a projector's 1280 px) every key and every query up to
    LABEL_EVERY_TOKEN = 32 has its label, in order; the figure is tall enough for a line per query label."""
    tokens = [chr(ord("a") + i % 26) for i in range(n)]
    fig = head_heatmap(softmax_rows(n, n), tokens, tokens, narrow=False)
    for axis in (fig.layout.xaxis, fig.layout.yaxis):
        assert axis.tickmode == "array"
        assert list(axis.tickvals) == list(range(n)) and list(axis.ticktext) == tokens
        assert tuple(axis.autotickangles) == (0,)  # letters: turned upright they would take a line's height each
    font = fig.layout.yaxis.tickfont.size
    assert fig.layout.height >= 450 and fig.layout.height - 190 >= n * LINE_HEIGHT * font


@pytest.mark.parametrize("tokens", [list("kqwzjxtbhmfa" * 2), [f"word{i}" for i in range(24)]])
def test_a_phone_keeps_readable_cells_and_labels_and_grows_wider_than_its_box(tokens):
    """Regression (issue 29, item 2): on a phone's 326 px box (narrow=True) 24 tokens got ~7 px columns, labels of
    10 px, and words were thinned to every other one. Now every column is at least MIN_CELL_PX wide (and every row
    that tall), every token is labelled in at least MIN_LABEL_PX, and the figure is wider than its box (the page
    scrolls it); the colour bar lies flat under the plot, out of the cells' width."""
    fig = head_heatmap(softmax_rows(24, 24), tokens, tokens, narrow=True)
    for axis in (fig.layout.xaxis, fig.layout.yaxis):
        assert axis.tickmode == "array" and list(axis.ticktext) == tokens and axis.tickfont.size >= MIN_LABEL_PX
    assert fig.layout.meta["cell_px"] >= MIN_CELL_PX
    # issue 38: as wide as its margins and its cells at the least, so the cells as drawn are MIN_CELL_PX (the width
    # guessed from what lies beside the cells, BESIDE_KEYS_PX, left them 15.75 px: 452 px for 74 px of margins)
    margin = fig.layout.margin
    assert fig.layout.width == math.ceil(margin.l + margin.r + 24 * MIN_CELL_PX)
    assert (fig.layout.width - margin.l - margin.r) / 24 >= MIN_CELL_PX
    assert fig.layout.width > HEATMAP_BOX_PX[True]
    assert fig.layout.height >= 24 * MIN_CELL_PX and fig.data[0].colorbar.orientation == "h"


def test_cells_that_fit_their_box_share_it():
    """Invariant: 9 tokens on a projector's 720 px box fit at about (720 - 160) / 9 = 62 px: no width is set (the
    figure takes its box's), the rows are a 16 px label's line (20 px) tall, and the colour bar stays beside the
    plot."""
    tokens = list("abcdefghi")
    fig = head_heatmap(softmax_rows(9, 9), tokens, tokens, narrow=False)
    assert fig.layout.width is None and fig.layout.meta["cell_px"] == pytest.approx(20)  # a 16 px label's line
    assert fig.data[0].colorbar.orientation is None


def test_a_map_past_its_box_by_no_more_than_its_padding_fits_the_box():
    """Regression (issue 38, item 3): the causal mask's 41 characters on a projector (narrow=False) were 732 px in
    the Attention tab's 720 px box: its cells at MIN_CELL_PX ended at the box's edge and only the right margin's
    12 px of padding lay past it, behind a sideways scroll. Now the padding gives way: the figure is its box's width,
    no cell under MIN_CELL_PX, the colour bar flat above the plot (nothing at its right)."""
    tokens = list("To be, or not to be, that is the question")
    fig = head_heatmap(softmax_rows(41, 41), tokens, tokens, narrow=False, mask=np.tril(np.ones((41, 41), bool)))
    margin = fig.layout.margin
    assert fig.layout.width == HEATMAP_BOX_PX[False] and margin.r >= 0
    assert (fig.layout.width - margin.l - margin.r) / 41 >= MIN_CELL_PX and fig.layout.meta["cell_px"] >= MIN_CELL_PX
    assert fig.data[0].colorbar.orientation == "h"
    wider = head_heatmap(softmax_rows(48, 48), tokens[:48] + list("abcdefg"), tokens[:48] + list("abcdefg"),
                         narrow=False)  # 7 columns more: past the box by more than the padding, it scrolls
    assert wider.layout.width > HEATMAP_BOX_PX[False] and wider.layout.margin.r >= 12


def test_past_the_box_every_token_keeps_its_label_and_of_unknown_width_plotly_thins_them():
    """64 tokens on the Attention tab (narrow=False): each keeps its label on a column of MIN_CELL_PX, the figure
    wider than its 720 px box. On a figure whose width is not known (narrow=None: the Train tab's live map) and
    the grid's small heatmaps: plotly's thinning (tickmode "auto"), every position's label aliased to its
    token."""
    tokens = [chr(ord("a") + i % 26) for i in range(64)]
    wide = head_heatmap(softmax_rows(64, 64), tokens, tokens, narrow=False)
    assert wide.layout.xaxis.tickmode == "array" and wide.data[0].colorbar.orientation == "h"  # seen unscrolled
    margin = wide.layout.margin  # as wide as its margins and its cells at the least (issue 38)
    assert wide.layout.width == math.ceil(margin.l + margin.r + 64 * MIN_CELL_PX)
    tokens = tokens[:24]
    fig = head_heatmap(softmax_rows(24, 24), tokens, tokens)
    assert (fig.layout.xaxis.tickmode, fig.layout.yaxis.tickmode, fig.layout.height) == ("auto", "auto", None)
    fig = layer_grid(softmax_rows(4, 24, 24), tokens, tokens)
    assert {fig.layout[f"xaxis{i or ''}"].tickmode for i in range(4)} == {"auto"}
    assert tick_labels(fig.layout.xaxis) == tokens


def test_long_inputs_get_thinned_upright_labels_and_full_hover():
    """At 64 tokens (past LABEL_EVERY_TOKEN) the labels must stay readable: plotly thins a category axis with
    tickmode "auto" to what its
    length holds and turns wide labels upright (0 or 90 degrees, never a slant whose boxes collide); every token
    is still named in the hover."""
    tokens = [f"word{i}" for i in range(64)]
    fig = head_heatmap(softmax_rows(64, 64), tokens, tokens)
    for axis in (fig.layout.xaxis, fig.layout.yaxis):
        assert axis.tickmode == "auto" and axis.tickvals is None  # plotly picks which positions get a label
        assert tuple(axis.autotickangles) == (0, 90)
        assert tick_labels(axis) == tokens
    assert {tuple(fig.data[0].customdata[t][s][:2]) for t, s in [(5, 63), (63, 0)]} == {
        ("word5", "word63"), ("word63", "word0")}


def test_special_tokens_are_escaped_and_whitespace_visible():
    """`<s>` would be read as markup and vanish; a space or newline token would be invisible."""
    fig = head_heatmap(np.full((2, 3), 1 / 3), ["<s>", "a b"], ["</s>", "<pad>", "\n\t"])
    assert tick_labels(fig.layout.yaxis) == ["&lt;s&gt;", "a␣b"]
    assert tick_labels(fig.layout.xaxis) == ["&lt;/s&gt;", "&lt;pad&gt;", "⏎⇥"]
    # quotes as numeric entities, which plotly decodes back (it does not decode &quot;): visualize.text.html_text
    assert axis_labels(["a&b", ' "q" ', "<a href=x>$"]) == ["a&amp;b", '␣&#34;q&#34;␣', "&lt;a␣href=x&gt;&#36;"]


def test_hover_names_query_and_key_tokens():
    """Hovering cell (t, s) names query token t and key token s and their positions, so repeated tokens can be
    told apart."""
    fig = head_heatmap(softmax_rows(2, 3), ["<s>", "x"], ["p", "q", "r"])
    assert tuple(fig.data[0].customdata[1][2]) == ("x", "r", 1, 2)
    assert tuple(fig.data[0].customdata[0][0]) == ("&lt;s&gt;", "p", 0, 0)
    assert all(f"customdata[{i}]" in fig.data[0].hovertemplate for i in range(4)) and "%{z" in fig.data[0].hovertemplate


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
    assert tick_labels(fig.layout.yaxis) == ["a", "b", "a"]


def test_layer_grid_labels_only_the_outer_edges():
    """Tokens label the keys under the lowest heatmap of each column and the queries left of the first column only,
    so neighbouring heatmaps' labels cannot collide; 5 heads in 2 columns leave one empty cell, with no axes."""
    fig = layer_grid(softmax_rows(5, 3, 4), ["a", "b", "c"], ["w", "x", "y", "z"], cols=2)
    layout = fig.layout
    x_shown = [layout[f"xaxis{h + 1 if h else ''}"].showticklabels for h in range(5)]
    y_shown = [layout[f"yaxis{h + 1 if h else ''}"].showticklabels for h in range(5)]
    assert x_shown == [False, False, False, True, True]  # heads 3 and 4 have no head under them
    assert y_shown == [True, False, True, False, True]  # column 1: heads 0, 2, 4
    assert "xaxis6" not in layout.to_plotly_json()  # the sixth cell is left empty


def test_layer_grid_cols_sets_the_grid_shape():
    """`cols` heads per row (the tabs choose); the figure grows a row at a time."""
    w = softmax_rows(8, 3, 3)
    tall, wide = layer_grid(w, list("abc"), list("abc"), cols=2), layer_grid(w, list("abc"), list("abc"), cols=4)
    assert len(tall.layout.annotations) == len(wide.layout.annotations) == 8
    assert tall.layout.height > wide.layout.height
    assert {a.text for a in tall.layout.annotations} == {f"head {h}" for h in range(8)}
    with pytest.raises(ValueError):
        layer_grid(w, list("abc"), list("abc"), cols=0)


@pytest.mark.parametrize("page_width, cols", [(None, 4), (1280, 4), (800, 4), (641, 4), (640, 2), (390, 2),
                                              (320, 2)])
def test_grid_columns_two_on_a_phone_four_elsewhere(page_width, cols):
    """Regression (issue 19): on a 390 px phone four heads a row left each ~35 px. A page of PHONE_WIDTH (640) px or
    less gets 2 heads a row; a wider one, or one whose width is not known, keeps 4."""
    assert grid_columns(page_width) == cols
    fig = layer_grid(softmax_rows(4, 5, 5), list("abcde"), list("abcde"), cols=grid_columns(page_width))
    domains = {tuple(fig.layout[f"xaxis{h + 1 if h else ''}"].domain) for h in range(4)}
    assert len(domains) == cols  # heads side by side
    assert layer_grid(softmax_rows(4, 5, 5), list("abcde"), list("abcde"), scale=False).layout.coloraxis.showscale \
        is False  # a phone's grid leaves the colour bar to the one-head heatmap

CAUSAL = np.tril(np.ones((4, 4), dtype=bool))  # True = may attend


def test_masked_cells_are_grey_not_a_weight():
    """Masked cells (mask False) leave the weight trace (a gap, never the white of a 0 weight) and are drawn by a
    grey trace of their own whose hover says they are masked; a legend entry says grey = masked."""
    w = softmax_rows(4, 4).numpy() * CAUSAL
    fig = head_heatmap(w, list("abcd"), list("abcd"), mask=torch.tensor(CAUSAL))
    weights = next(t for t in fig.data if isinstance(t, go.Heatmap) and t.name != "masked")
    masked = next(t for t in fig.data if t.name == "masked")
    z, m = np.asarray(weights.z, dtype=float), np.asarray(masked.z, dtype=float)
    assert np.isnan(z[~CAUSAL]).all() and np.array_equal(z[CAUSAL], w[CAUSAL])
    assert np.isfinite(m[~CAUSAL]).all() and np.isnan(m[CAUSAL]).all()
    assert {c for _, c in masked.colorscale} == {MASKED_COLOR} and masked.showscale is False
    assert MASKED in masked.hovertemplate and weights.hoverongaps is False and masked.hoverongaps is False
    assert fig.data.index(masked) > fig.data.index(weights)  # drawn on top
    assert any(t.showlegend and "grey = masked" in t.name for t in fig.data)


def test_nothing_masked_draws_no_mask_layer():
    """No mask, or one that masks nothing (cross-attention), gives the plain heatmap with no masked legend."""
    for mask in (None, np.ones((4, 4), dtype=bool)):
        fig = head_heatmap(softmax_rows(4, 4), list("abcd"), list("abcd"), mask=mask)
        assert len(fig.data) == 1 and not fig.layout.showlegend
    with pytest.raises(ValueError, match="mask"):
        head_heatmap(softmax_rows(4, 4), list("abcd"), list("abcd"), mask=np.ones((3, 4), dtype=bool))


def test_layer_grid_greys_the_same_cells_for_every_head():
    """With a mask, each head's weights leave out the masked cells and each subplot has its grey layer."""
    w = softmax_rows(3, 4, 4)
    fig = layer_grid(w, list("abcd"), list("abcd"), mask=CAUSAL)
    heads = [t for t in fig.data if isinstance(t, go.Heatmap) and t.name.startswith("head")]
    masked = [t for t in fig.data if t.name == "masked"]
    assert len(heads) == len(masked) == 3
    for head, grey in zip(heads, masked):
        assert (head.xaxis, head.yaxis) == (grey.xaxis, grey.yaxis)
        assert np.isnan(np.asarray(head.z, dtype=float)[~CAUSAL]).all()
        assert np.isfinite(np.asarray(grey.z, dtype=float)[~CAUSAL]).all()


def test_overview_writes_each_value_and_picks_the_colour_range():
    """Every cell shows its value to 2 decimals (up to 4 heads); 0..1 scores use 0..1, entropy its own range."""
    scores = np.array([[0.123, 0.5], [1.0, 0.0], [0.25, 0.999]])
    fig = overview(scores, "diagonal")
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), scores)
    assert [list(row) for row in fig.data[0].text] == [["0.12", "0.50"], ["1.00", "0.00"], ["0.25", "1.00"]]
    assert (fig.data[0].zmin, fig.data[0].zmax) == (0, 1)
    assert list(fig.data[0].y) == [0, 1, 2] and fig.layout.yaxis.title.text == "layer"
    assert fig.layout.yaxis.autorange == "reversed"
    ent = overview(np.array([[0.5, 2.0]]), "entropy")
    assert (ent.data[0].zmin, ent.data[0].zmax) == (0.5, 2.0)


def test_overview_interesting_heads_are_dark():
    """The scale runs white -> dark navy; with low_is_interesting (entropy) it is reversed, so the lowest value, the
    sharpest head, is the darkest. The colour bar's title says what dark means."""
    diag = overview(np.array([[0.1, 0.9]]), "diagonal").data[0]
    assert diag.colorscale[-1][1] == ATTENTION_COLORSCALE[-1][1] and not diag.reversescale  # 1 = dark
    assert diag.colorbar.title.text == "diagonal (dark = high)"
    ent = overview(np.array([[0.2, 2.5]]), "entropy", low_is_interesting=True).data[0]
    assert ent.reversescale is True  # zmin (0.2, the sharp head) takes the dark end
    assert ent.colorbar.title.text == "entropy (dark = sharp)"
    assert overview(np.array([[0.2]]), "mean distance", low_is_interesting=True).data[0].colorbar.title.text == \
        "mean distance (dark = low)"


def test_overview_numbers_fit_their_cells():
    """Plotly sizes heatmap text to fit the cell (white on dark) only when no size is given, from its number of
    characters: more heads write shorter numbers. 4 heads: "0.86"; 8: ".86" and "2.3"; 12: ".9"."""
    def cells(H, name, value):
        return overview(np.full((2, H), value), name).data[0]
    assert cells(4, "diagonal", 0.864).text[0][0] == "0.86"
    assert cells(8, "diagonal", 0.864).text[0][0] == ".86" and cells(8, "diagonal", 1.0).text[0][0] == "1"
    assert cells(8, "entropy", 2.345).text[0][0] == "2.3"
    assert cells(12, "diagonal", 0.864).text[0][0] == ".9"
    trace = cells(12, "diagonal", 0.5)
    assert trace.textfont.size is None and trace.textfont.color is None  # auto size, auto contrast


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
    assert tick_labels(fig.layout.xaxis) == ["the", "&lt;s&gt;", "the"]


def test_token_probabilities_sorted_with_chosen_highlighted():
    """Most likely alternative on top, the chosen token in its own colour, probabilities written on the bars."""
    fig = token_probabilities("b", [("a", 0.1), ("b", 0.3), ("<c>", 0.6)])
    bar = fig.data[0]
    assert list(bar.x) == [0.6, 0.3, 0.1]
    assert tick_labels(fig.layout.yaxis) == ["&lt;c&gt;", "b", "a"]
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


# Issue 38, item 1: the translation demo's English verse read by `reverse` in words is one 37-character "word"
# (every space and capital an <unk>); its label, upright under a layer's grid, pushed the grid's margins past the
# figure's 370 px height: plotly threw "Something went wrong with axis scaling" and the page drew nothing more.
LONG_WORD = "<unk>he<unk>disciples<unk>were<unk>fi"


@pytest.mark.parametrize("narrow, box", [(False, 720), (True, 326)])
def test_a_long_token_is_cut_and_leaves_every_figure_a_plot_area(narrow, box):
    """Invariant: whatever the tokens, each figure's margins leave its plot area at least MIN_CELL_PX a cell on each
    side, and no tick label is longer than MAX_LABEL_CHARS as read (html unescaped); the hover names the whole
    token. Oracle for the cut: the token's first 15 characters and "…"."""
    import html

    from visualize.sizes import MAX_LABEL_CHARS

    tokens = [LONG_WORD, "</s>"]
    w = np.array([[1.0, 0.0], [0.5, 0.5]])
    one = head_heatmap(w, tokens, tokens, title="cross attention in words, layer 1, head 2", narrow=narrow,
                       box_px=box)
    grid = layer_grid(np.stack([w] * 4), tokens, tokens, title="cross attention in words, layer 1, all heads",
                      cols=2 if narrow else 4, box_px=box if narrow else 1216)
    for fig, width in ((one, one.layout.width or box), (grid, box if narrow else 1216)):
        layout = fig.layout
        labels = [html.unescape(t) for t in (layout.xaxis.ticktext or layout.xaxis.labelalias.values())]
        assert max(map(len, labels)) <= MAX_LABEL_CHARS, labels
        rows = 1 if fig is one else math.ceil(4 / (2 if narrow else 4))
        assert layout.height - layout.margin.t - layout.margin.b >= MIN_CELL_PX * len(tokens) * rows, \
            (layout.height, layout.margin)
        assert width - layout.margin.l - layout.margin.r >= MIN_CELL_PX * len(tokens), (width, layout.margin)
    assert html.unescape(one.layout.xaxis.ticktext[0]) == "<unk>he<unk>dis…"
    assert html.unescape(one.data[0].customdata[0][0][1]) == LONG_WORD  # the hover: the whole token
