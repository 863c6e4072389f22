"""The shared look: titles that fit a phone without changing their text, legends that never cover a title."""
import numpy as np
import plotly.graph_objects as go

from visualize import empty_curves, head_heatmap, pe_waves, rope_distance_figure
from visualize.alignment import gold_link_marks
from visualize.style import TITLE_LINE, TITLE_WRAP, style_figure, wrap_title


def test_long_titles_break_in_two_keeping_their_text():
    """A title longer than TITLE_WRAP characters goes on two lines, broken at the ", " or " (" nearest its middle;
    removing the <br> gives the title back exactly (browser tests read the title's text)."""
    for title in ["decoder self attention, layer 5, head 6", "anti-diagonal of every head (decoder self)",
                  "Sinusoidal encoding, 100 positions x 128 dimensions",
                  "where 'n' looked (last layer, mean of heads)"]:
        wrapped = wrap_title(title)
        first, second = wrapped.split("<br>")
        assert first + second == title
        assert max(len(first), len(second)) < len(title) * 0.7, wrapped
        assert first.endswith(", ") or second.startswith("(")
    assert wrap_title("cross attention, layer 1, head 3") == "cross attention, layer 1, head 3"  # fits: unchanged
    assert len("cross attention, layer 1, head 3") <= TITLE_WRAP
    assert wrap_title("x" * 50) == "x" * 50  # nowhere to break


def test_a_title_longer_than_two_lines_goes_on_three():
    """Regression (issue 29, item 7's title): "where it looked" on a long source (90 characters) went on two lines
    of 45, cut by 174 px on a phone's 326 px figure. Invariant: ceil(90 / TITLE_WRAP) = 3 lines, none over
    TITLE_WRAP, the text unchanged; the top margin holds them: plotly writes the lines under the first, which it
    keeps in the margin's middle, so the third line costs two (tests/browser/test_fit_the_screen.py measures it)."""
    title = "where 'Y' looked (last layer, mean of heads; tokens 0-63 of 76, holding 100% of its weight)"
    lines = wrap_title(title).split("<br>")
    assert len(lines) == 3 and "".join(lines) == title and max(map(len, lines)) <= TITLE_WRAP, lines
    assert style_figure(go.Figure(), title).layout.margin.t == style_figure(go.Figure(), "short").layout.margin.t \
        + 3 * TITLE_LINE


def test_top_margin_holds_the_title_lines():
    """The top margin grows by one title line for a wrapped title, plus what the figure asks for (subplot titles)."""
    one = style_figure(go.Figure(), "short title").layout.margin.t
    two = style_figure(go.Figure(), "a long title, which certainly needs two lines").layout.margin.t
    none = style_figure(go.Figure()).layout.margin.t
    assert two - one == one - none == TITLE_LINE
    assert style_figure(go.Figure(), "short title", top_space=30).layout.margin.t == one + 30


def test_legends_sit_under_the_plot_not_over_the_title():
    """A horizontal legend above the plot area wraps into the title on a narrow screen; it goes to the bottom of
    the figure instead (container coordinates, so plotly grows the bottom margin to hold it)."""
    rng = np.random.default_rng(0)
    table = rng.normal(size=(20, 8))
    tokens = list("abcd")
    masked = head_heatmap(np.tril(np.full((4, 4), 0.25)), tokens, tokens, mask=np.tril(np.ones((4, 4), dtype=bool)))
    for fig in (pe_waves(table, [0, 1, 2, 3, 4]), rope_distance_figure([-1, 0, 1], {"a": [1, 2, 3], "b": [3, 2, 1]}),
                masked, gold_link_marks(head_heatmap(np.full((4, 4), 0.25), tokens, tokens), [(0, 1), (2, 3)])):
        legend = fig.layout.legend
        assert (legend.orientation, legend.yref, legend.y, legend.yanchor) == ("h", "container", 0, "bottom")


def test_empty_curves_shows_only_the_message():
    fig = empty_curves("Generate something first")
    assert len(fig.data) == 0
    assert [a.text for a in fig.layout.annotations] == ["Generate something first"]
    assert not fig.layout.xaxis.visible and not fig.layout.yaxis.visible


def test_gold_circles_stay_inside_their_cells_and_function_links_are_drawn_apart():
    """Regression (issue 29, items 2 and 13): 14 px circles on a phone's ~8 px cells, and links on "and" or "the"
    drawn like the others. Invariant: each circle is at most 0.8 of the heatmap's cell (its meta cell_px); the
    function-word links are a second, smaller trace whose legend says why."""
    from visualize.alignment import FUNCTION_LABEL, GOLD_LABEL, LEGEND_LINE_PX

    tokens = list("abcdefghijkl")
    for narrow in (None, False, True):
        fig = head_heatmap(np.full((12, 12), 1 / 12), tokens, tokens, narrow=narrow)
        height, bottom = fig.layout.height, fig.layout.margin.b
        gold_link_marks(fig, [(0, 1), (2, 3)], [(4, 4)])
        if narrow is not None:  # the legend (4 lines and its pads) is added to the height and to the bottom margin
            # (visualize.margins), so the rows keep theirs
            grown = fig.layout.height - height
            assert grown == fig.layout.margin.b - bottom and grown >= 4 * LEGEND_LINE_PX
        content, function = fig.data[-2:]
        assert (content.name, function.name) == (GOLD_LABEL, FUNCTION_LABEL) and "phrase" in FUNCTION_LABEL
        assert list(function.x) == [4] and function.marker.size < content.marker.size
        if narrow is not None:
            assert content.marker.size <= 0.8 * fig.layout.meta["cell_px"]


def test_on_a_projector_the_gold_legend_sits_beside_the_title_and_costs_no_height():
    """Regression (issue 29, item 14): under the plot, the gold legend's four lines pushed the heatmap's bottom to
    y = 882 at 1280x800 after the translation demo (tests/browser/test_layout.py measures it drawn). Invariant: on a
    wide page, in a figure as wide as its box, the legend lies flat at the top right of the figure (container
    coordinates: no margin of the plot is taken for it), the top margin holds its lines, and the figure keeps its
    height; it still says why the small circles are loose. A figure that scrolls sideways keeps it under the plot
    (at its right end it would be out of sight)."""
    from visualize.alignment import FUNCTION_LABEL_BESIDE, LEGEND_LINE_PX

    tokens = [f"word{i}" for i in range(12)]
    fig = head_heatmap(np.full((12, 12), 1 / 12), tokens, tokens, title="cross attention in words, layer 2, head 0",
                       narrow=False)
    height, top = fig.layout.height, fig.layout.margin.t
    gold_link_marks(fig, [(0, 1), (2, 3)], [(4, 4)], wide=True)
    legend = fig.layout.legend
    assert (legend.orientation, legend.xref, legend.yref, legend.x, legend.y) == ("h", "container", "container", 1, 1)
    assert fig.layout.height == height and fig.layout.margin.t >= max(top, 3 * LEGEND_LINE_PX)
    assert fig.data[-1].name == FUNCTION_LABEL_BESIDE and "phrase" in FUNCTION_LABEL_BESIDE
    wide = head_heatmap(np.full((12, 80), 1 / 80), tokens, [f"w{i}" for i in range(80)], narrow=False)
    assert wide.layout.width  # wider than its box: it scrolls
    gold_link_marks(wide, [(0, 1)], [(4, 4)], wide=True)
    assert wide.layout.legend.yanchor == "bottom" and wide.layout.legend.y == 0
