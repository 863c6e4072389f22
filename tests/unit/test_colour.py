"""Colour is never the only message, and every viewer can read it (issue 40, item 4).

Oracle: tests/colour_vision.py (Machado et al. 2009 at severity 1.0, CIE L*a*b*, ΔE*ab, WCAG contrast), written from
the papers and checked against the issue's own measurement (the Train chart's orange and green lines: ΔE 108, 36 under
deutan, 20 under protan).
"""
from __future__ import annotations

import numpy as np
import plotly.colors
import pytest

from tests.colour_vision import DEFICIENCIES, contrast, delta_e, lab, rgb, simulate
from visualize import head_heatmap, logit_lens_grid, overview, patching_grid
from visualize.alignment import gold_link_marks
from visualize.line_chart import EXACT_COLOR, SCORE_COLORS, phase_change_chart, training_chart
from visualize.relative_positions import BIAS_COLORSCALE
from visualize.style import (ATTENTION_COLORSCALE, DIVERGING_COLORSCALE, HIGHLIGHT_COLOR, MASKED_COLOR,
                             MASKED_MARK, cell_text_colour, scale_colour)

SEQUENTIAL = {"attention weights, overview, lens, rollout": ATTENTION_COLORSCALE, "ALiBi's bias": BIAS_COLORSCALE}
VISIONS = (None,) + DEFICIENCIES


def _seen(colour, deficiency):
    return rgb(colour) if deficiency is None else simulate(rgb(colour), deficiency)


@pytest.mark.parametrize("deficiency", VISIONS)
@pytest.mark.parametrize("name", list(SEQUENTIAL))
def test_a_sequential_scale_keeps_its_order_in_lightness(name, deficiency):
    """Cells ordered by value stay ordered in CIE L* as a protan, deutan or tritan viewer sees them (101 steps of
    the scale, each at least 0.02 L* from the next): the order of the weights reads without hue."""
    scale = plotly.colors.get_colorscale(SEQUENTIAL[name]) if isinstance(SEQUENTIAL[name], str) else SEQUENTIAL[name]
    lightness = np.array([lab(_seen(c, deficiency))[0] for c in
                          plotly.colors.sample_colorscale(scale, list(np.linspace(0, 1, 101)), colortype="rgb")])
    steps = np.diff(lightness)
    assert (steps < -0.02).all() or (steps > 0.02).all(), (name, deficiency, steps.min(), steps.max())


@pytest.mark.parametrize("deficiency", VISIONS)
def test_each_half_of_the_diverging_scale_darkens_with_the_size_of_the_value(deficiency):
    """On the patching and DLA grids' scale, a larger |value| is darker on either side of 0 (L* falls from the
    middle to each end, 51 steps, each at least 0.2 L*), and +v and -v stay apart (ΔE*ab >= 40 at |v| = half the
    bound) for every viewer: the sign is also written in the cell (test_a_patching_cell_writes_its_sign)."""
    scale = plotly.colors.get_colorscale(DIVERGING_COLORSCALE)
    for end in (1.0, 0.0):
        side = plotly.colors.sample_colorscale(scale, list(np.linspace(0.5, end, 51)), colortype="rgb")
        assert (np.diff([lab(_seen(c, deficiency))[0] for c in side]) < -0.2).all(), (end, deficiency)
    plus, minus = (_seen(scale_colour(DIVERGING_COLORSCALE, f), deficiency) for f in (0.75, 0.25))
    assert delta_e(plus, minus) >= 40


def test_the_diverging_scale_has_a_neutral_middle():
    """0 (the corrupted run, no positional value) is a neutral near-white: a* and b* within 2 of grey, L* > 95."""
    middle = lab(rgb(scale_colour(DIVERGING_COLORSCALE, 0.5)))
    assert middle[0] > 95 and abs(middle[1]) < 2 and abs(middle[2]) < 2, middle


def test_a_patching_cell_writes_its_sign():
    """On the diverging scale the sign is written in each cell ("+0.25", "-0.10"), not carried by red or blue
    alone; a zero has none. Failed before: positive cells read "0.25"."""
    values = np.array([[0.25, -0.1, 0.0], [1.0, -1.0, 0.004]])
    fig = patching_grid(values, ["a", "b"], ["x", "y", "z"], [["h"] * 3] * 2, "t", "effect")
    assert [list(row) for row in fig.data[0].text] == [["+0.25", "-0.10", "0.00"], ["+1.00", "-1.00", "0.00"]]
    wide = patching_grid(np.linspace(-1, 1, 10)[None, :], ["a"], list("abcdefghij"), [["h"] * 10], "t", "effect")
    assert list(wide.data[0].text[0]) == ["-1.0", "-.8", "-.6", "-.3", "-.1", "+.1", "+.3", "+.6", "+.8", "+1.0"]


@pytest.mark.parametrize("colour", ["#ffffff", "#000000", "rgb(107,174,214)", "rgb(118,118,118)", "rgb(119,119,119)",
                                    "rgb(8,48,107)", "rgb(255,0,0)", MASKED_COLOR])
def test_cell_text_meets_4_5_to_1_on_any_colour(colour):
    """The one rule for text on a coloured cell: black or white, whichever contrasts more, is 4.5:1 or more."""
    assert contrast(rgb(cell_text_colour(colour)), rgb(colour)) >= 4.5


def _written_cells(fig):
    """(cell colour, text colour, text) of every written cell: what a reader of the figure sees."""
    data, out = fig.data, []
    main = data[0]
    z = np.array(main.z, dtype=float)
    lo, hi = main.zmin, main.zmax
    for layer in data[1:]:
        if not (layer.name or "").startswith("cell text"):
            continue
        for (i, j), text in np.ndenumerate(np.array(layer.text, dtype=object)):
            if text:
                fraction = (z[i, j] - lo) / (hi - lo)
                colour = scale_colour(main.colorscale, 1 - fraction if main.reversescale else fraction)
                out.append((colour, layer.textfont.color, text))
    return out


FIGURES_WITH_WRITTEN_CELLS = {
    "overview": lambda: overview(np.linspace(0, 1, 12).reshape(3, 4), "anti-diagonal"),
    "overview, low is interesting": lambda: overview(np.linspace(0.1, 3, 12).reshape(3, 4), "entropy",
                                                     low_is_interesting=True),
    "logit lens": lambda: logit_lens_grid([["a", "b", "c"]] * 2, np.array([[0.05, 0.5, 0.99], [0.3, 0.45, 0.7]]),
                                          ["embedding", "layer 0"], ["x", "y", "z"]),
    "patching": lambda: patching_grid(np.linspace(-1, 1, 12).reshape(3, 4), list("abc"), list("wxyz"),
                                      [["h"] * 4] * 3, "t", "effect"),
}


@pytest.mark.parametrize("kind", list(FIGURES_WITH_WRITTEN_CELLS))
def test_every_written_cell_meets_4_5_to_1(kind):
    """Each cell's text is written in the colour cell_text_colour picks for that cell (two text layers, black and
    white), so it meets 4.5:1 against its cell; every value of the heatmap is written once. Failed before: plotly
    wrote #444 on every cell that is not dark (3.98:1 on the middle blue) and the figures had no text layers."""
    fig = FIGURES_WITH_WRITTEN_CELLS[kind]()
    cells = _written_cells(fig)
    main_text = [t for row in fig.data[0].text for t in row if t]
    assert sorted(t for _, _, t in cells) == sorted(main_text) and cells
    assert fig.data[0].texttemplate is None  # the heatmap itself writes nothing (its text is for hover)
    for colour, text_colour, text in cells:
        assert contrast(rgb(text_colour), rgb(colour)) >= 4.5, (kind, colour, text_colour, text)


def test_masked_cells_are_labelled_not_only_grey():
    """A masked cell writes MASKED_MARK (black on the grey: 4.5:1 or more) and the legend names it. Failed before:
    masked cells were grey only."""
    mask = np.tril(np.ones((3, 3), dtype=bool))
    fig = head_heatmap(np.tril(np.full((3, 3), 0.5)), list("abc"), list("abc"), mask=mask)
    masked = next(t for t in fig.data if t.name == "masked")
    assert [list(row) for row in masked.text] == [["" if m else MASKED_MARK for m in row] for row in mask]
    assert masked.texttemplate == "%{text}"
    assert contrast(rgb(masked.textfont.color), rgb(MASKED_COLOR)) >= 4.5
    assert any(t.showlegend and MASKED_MARK in t.name for t in fig.data)


def test_gold_links_have_a_shape():
    """Gold links are hollow circles (a shape over the cell, seen without colour), loose ones smaller circles."""
    fig = gold_link_marks(head_heatmap(np.full((2, 2), 0.5), ["a", "b"], ["x", "y"]), [(0, 0)], [(1, 1)])
    symbols = [t.marker.symbol for t in fig.data if t.type == "scatter"]
    sizes = [t.marker.size for t in fig.data if t.type == "scatter"]
    assert symbols == ["circle-open", "circle-open"] and sizes[1] < sizes[0]


def _series(svg: str, name: str) -> str:
    start = svg.index(f'<g class="series" data-name="{name}">')
    return svg[start:svg.index("</g>", start)]


@pytest.mark.parametrize("chart, score", [
    (lambda: training_chart([1, 2], [2.0, 1.0], [2], [1.5], exact_match=[0.5]), "exact match (%)"),
    (lambda: phase_change_chart([1, 2], [2.0, 1.0], [2], [1.5], {"previous token": [0.5], "induction": [0.2]}),
     "best previous token score")])
def test_validation_and_score_lines_differ_beyond_colour(chart, score):
    """The validation loss and a score differ by dash (solid / dashed) and marker (circle / square), and their
    colours keep ΔE*ab >= 40 for protan and deutan viewers. Failed before: both had round markers, and orange and
    green fell to ΔE 20 (protan) and 36 (deutan)."""
    svg = chart()
    validation, other = _series(svg, "validation loss"), _series(svg, score)
    assert "stroke-dasharray" not in validation and "stroke-dasharray" in other
    assert 'class="marker circle"' in validation and 'class="marker square"' in other
    assert 'class="marker circle"' not in other
    for deficiency in ("protan", "deutan"):
        assert delta_e(simulate(rgb(HIGHLIGHT_COLOR), deficiency), simulate(rgb(EXACT_COLOR), deficiency)) >= 40
    assert SCORE_COLORS["previous token"] == EXACT_COLOR


def test_text_inside_a_bar_meets_4_5_to_1():
    """The counts written inside the Model tab's bars and the percentages inside the Generate tab's top
    alternatives: each in the colour cell_text_colour picks for its bar. Failed before: white on the blue bar
    (3.41:1), and plotly's own #444 on the blue and the orange (2.86:1, 2.63:1)."""
    from visualize import parameter_breakdown, token_probabilities

    bars = parameter_breakdown({"embedding": 1000, "layers": 9000}).data[0]
    assert contrast(rgb(bars.insidetextfont.color), rgb(bars.marker.color)) >= 4.5
    top = token_probabilities("a", [("a", 0.6), ("b", 0.3)]).data[0]
    for colour, text_colour in zip(top.marker.color, top.insidetextfont.color):
        assert contrast(rgb(text_colour), rgb(colour)) >= 4.5
