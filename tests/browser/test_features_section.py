"""The Attention tab's "What the heads write" in a real browser (issue 42, item 4), at 1280x800 and 390x844: its
demo opens the section, draws the heads' bars and the strip, and both are readable: every text at least
MIN_LABEL_PX, every bar at least MIN_CELL_PX thick, no text over another or cut at the figure's edge.
(Written for the lead's browser run; not run by its author, whose session had no browser budget.)"""
from __future__ import annotations

import pytest

from tests.browser import tour
from visualize.sizes import MIN_CELL_PX, MIN_LABEL_PX

DEMO = "What a head writes"
TITLE = "(sel) => (document.querySelector(sel + ' .gtitle') || {}).textContent || ''"
# the bars plotly drew in a figure: each bar's path's box, in page pixels
BARS = """(sel) => [...document.querySelectorAll(sel + ' .bars .point path')].map(p => {
    const r = p.getBoundingClientRect(); return {width: r.width, height: r.height}; })"""
FONTS = """(sel) => [...document.querySelectorAll(sel + ' text')].filter(t => t.textContent.trim())
    .map(t => parseFloat(getComputedStyle(t).fontSize))"""


@pytest.mark.xfail(strict=False, reason=(
    "open defect (issue 42, item 4), first run 2026-11-28: at 1280 the heads' bar texts were found overlapping (476 "
    "pairs, e.g. '3.0 87%' over '3.0 12%' by 16 px) though every bar was at least MIN_CELL_PX thick; at 390 the x "
    "axis title was cut by 114 px. With the title shorter ('share the head writes') and the demo row in two lines "
    "both sizes passed in the next run (1 run): the overlaps may have been read before plotly's last draw"))
@pytest.mark.parametrize("width", [1280, 390])
def test_the_demo_draws_readable_heads_bars_and_strip(open_at, width):
    page = open_at(width)
    tour.click_demo(page, DEMO)
    for figure, words in (("#features-heads", "Heads per feature"), ("#features-strip", "fires in this input")):
        page.wait_for_function(f"([sel, text]) => ({TITLE})(sel).includes(text)", arg=[figure, words],
                               timeout=tour.TIMEOUT_MS)
    heads = page.evaluate(BARS, "#features-heads")
    assert heads and min(b["height"] for b in heads if b["width"] > 0) >= MIN_CELL_PX - 0.5
    strip = page.evaluate(BARS, "#features-strip")
    assert strip and min(b["width"] for b in strip) >= MIN_CELL_PX - 0.5
    for figure in ("#features-heads", "#features-strip"):
        assert min(page.evaluate(FONTS, figure)) >= MIN_LABEL_PX - 0.5
    drawn = {f["id"]: f for f in tour.figure_texts(page, "#att-features-section")}
    for name in ("features-heads", "features-strip"):
        assert tour.text_overlaps(drawn[name]) == [], name
    rows = tour.table_rows(page, "features-table")
    assert rows and rows[0][0].strip().isdigit()
