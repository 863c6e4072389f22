"""The margins visualize computes from a figure's text (visualize.margins), so that plotly lays it out and draws it
once. Oracles: Helvetica's advance widths (Arial's and Liberation Sans' too) summed by hand; the browser tests check
the margins against plotly's own layout (tests/browser/test_translation_demo.py: no figure of a demo click pushed)."""
from __future__ import annotations

import numpy as np
import pytest

from visualize import head_heatmap
from visualize.margins import (LEGEND_ROW_PX, PAD, axis_px, fit_margins, labels_flat, text_px)


def test_text_is_measured_with_helvetica_widths():
    """'weight' = w 722 + e 556 + i 222 + g 556 + h 556 + t 278 thousandths of the font size (Helvetica's AFM)."""
    assert text_px("weight", 16) == pytest.approx((722 + 556 + 222 + 556 + 556 + 278) * 16 / 1000)
    assert text_px("Espíritu", 12) == text_px("Espiritu", 12)  # an accented letter is as wide as its letter
    assert text_px("&lt;s&gt;", 16) == text_px("<s>", 16)  # markup counted as what it writes
    assert text_px("ab<br>abcd", 10) == text_px("abcd", 10)  # the widest line
    assert text_px("中", 16) == 16  # outside the table: 1 em, wide rather than narrow


def test_an_axis_margin_grows_with_its_widest_label():
    """Invariant: on a y axis each extra pixel of the widest label is a pixel of margin (ceil aside); flat labels
    on an x axis need a line whatever their width; a title adds its standoff and line; PAD always."""
    short, long_ = axis_px(["ab"], 16, along_x=False), axis_px(["ab", "abcdefgh"], 16, along_x=False)
    assert long_ - short == pytest.approx(text_px("abcdefgh", 16) - text_px("ab", 16), abs=1)
    assert axis_px(["ab"], 16) == axis_px(["abcdefgh"], 16) < axis_px(["abcdefgh"], 16, upright=True)
    assert axis_px(["ab"], 16, title_font=16) > axis_px(["ab"], 16) > PAD


def test_labels_lie_flat_only_with_room_between_them():
    """Two 'mmmm' (4 x 0.833 em = 40 px at 12 px) lie flat 44 px apart (4 px between them) and not 43 px apart."""
    width = text_px("mmmm", 12)
    assert labels_flat(["mmmm", "mmmm"], 12, width + 4) and not labels_flat(["mmmm", "mmmm"], 12, width + 3)


def test_a_heatmap_is_given_the_margins_of_its_own_labels():
    """The one-head heatmap of a known width carries fit_margins of itself: a longer query token widens its left
    margin by that token's extra width (within the rounding), a mask's legend adds a row under it; without a known
    width (an API client) plotly's own automargin is left to do it."""
    w = np.full((3, 3), 1 / 3)
    short = head_heatmap(w, ["a", "b", "c"], ["a", "b", "c"], narrow=False)
    longer = head_heatmap(w, ["a", "b", "Spirit"], ["a", "b", "c"], narrow=False)
    assert short.layout.margin.l == fit_margins(short, 720, colorbar=True, bar_px=16)["l"]
    grew = longer.layout.margin.l - short.layout.margin.l
    assert grew == pytest.approx(text_px("Spirit", 16) - text_px("a", 16), abs=1)  # "a": the widest of a, b, c
    masked = head_heatmap(w, ["a", "b", "c"], ["a", "b", "c"], narrow=False, mask=np.tril(np.ones((3, 3))))
    assert masked.layout.margin.b - short.layout.margin.b == LEGEND_ROW_PX
    assert head_heatmap(w, ["a", "b", "c"], ["a", "b", "c"]).layout.margin.l == 10  # style.MARGIN: plotly grows it


@pytest.mark.parametrize("narrow", [False, True])
def test_a_short_plot_is_as_tall_as_its_turned_y_axis_title(narrow):
    """Regression (issue 38, item 5): `reverse` in words on a long English input is 2 rows of one long word each,
    whose keys' labels stand upright under the plot; on a phone the plot got 40 px (a 549 px figure, 148 px above it
    and 361 px under it), and plotly centred the 121 px turned title "query (attending)" on it, over the figure's
    title. Oracle: the plot's height (the figure's less its top and bottom margins) holds that title (text_px)."""
    rows, keys = ["xeeexseecccssixeeeeeeeeehtiw", "&lt;/s&gt;"], ["thedisciplesweredfilledwithjoyandwith", "&lt;/s&gt;"]
    fig = head_heatmap(np.full((2, 2), 0.5), rows, keys, title="cross attention in words, <br>layer 0, head 1",
                       narrow=narrow)
    margin = fig.layout.margin
    assert fig.layout.height - margin.t - margin.b >= text_px(fig.layout.yaxis.title.text, 16)
