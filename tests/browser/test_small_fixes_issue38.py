"""Issue 38, item 5, in chromium: a one-head heatmap of a few long rows keeps its y axis's title beside its plot, not
over the figure's title."""
from __future__ import annotations

import pytest

from tests.browser import tour

LONG_ENGLISH = ("The disciples were filled with joy and with the Holy Spirit and they went to the city of Antioch "
                "to teach")
# JS: the boxes of the one-head heatmap's title, y-axis title and plot area (its drag layer), in page pixels
_BOXES = """() => { const box = s => { const e = document.querySelector(`#att-one ${s}`);
    if (!e) return null;
    const r = e.getBoundingClientRect(); return {y0: r.top, y1: r.bottom, x0: r.left, x1: r.right}; };
    return {title: box('.gtitle'), ytitle: box('.ytitle'), plot: box('.nsewdrag'), bar: box('.colorbar')}; }"""


@pytest.mark.parametrize("width", tour.SIZES)
def test_the_y_axis_title_stays_beside_a_short_plot(open_at, width):
    """Regression: `reverse` in words on a long English input draws 2 rows (its whole output is one "word"); on a
    phone the plot was 40 px tall between a 148 px top and a 361 px bottom (upright key labels), and plotly centred
    its 121 px turned title "query (attending)" on it, over the figure's own title. Now the plot is at least as
    tall as that title: the title lies within the plot's height, clear of the figure's title, and no other text of
    the figure overlaps it (tour.text_overlaps)."""
    page = open_at(width)
    tour.visit(page, "attention")
    tour.select_checkpoint(page, "reverse")
    page.locator("#att-text textarea").fill(LONG_ENGLISH)
    words = page.locator("#att-words input")
    if not words.is_checked():
        words.check()
    page.locator("#att-show").click()
    # a map in words drawn, its plot there (the switch, then Show attention, each redraw it: wait again after)
    drawn = ("() => ((document.querySelector('#att-one .gtitle') || {}).textContent || '').includes('in words') "
             "&& !!document.querySelector('#att-one .nsewdrag')")
    page.wait_for_function(drawn, timeout=tour.TIMEOUT_MS)
    tour.plots_drawn(page)
    page.wait_for_timeout(300)  # plotly's automargin may redraw once more
    page.wait_for_function(drawn, timeout=tour.TIMEOUT_MS)
    boxes = page.evaluate(_BOXES)
    title, ytitle, plot = boxes["title"], boxes["ytitle"], boxes["plot"]
    assert ytitle and plot, f"the y-axis title or the plot is not drawn: {boxes}"
    assert ytitle["y0"] >= plot["y0"] - 2 and ytitle["y1"] <= plot["y1"] + 2, boxes
    assert ytitle["y0"] >= title["y1"] or ytitle["x0"] >= title["x1"], f"the y-axis title is over the title: {boxes}"
    figure = next(f for f in tour.figure_texts(page, "#att-one"))
    assert [p for p in tour.text_overlaps(figure) if "query (attending)" in p] == []
    words.uncheck()
