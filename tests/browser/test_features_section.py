"""The Attention tab's "What the heads write" in a real browser (issue 42, item 4), at 1280x800 and 390x844: its
demo opens the section, draws the heads' bars and the strip, and both are readable: every text at least
MIN_LABEL_PX, every bar at least MIN_CELL_PX thick, no text over another or cut at the figure's edge; and a text
plotly moves is drawn where it put it at once (the pages prefer reduced motion, whose CSS once made every move a
transition that showed its start for a frame or more: the heads' bar texts were read at 0,0, over each other, in
some runs and not others)."""
from __future__ import annotations

import pytest

from tests.browser import tour
from visualize.sizes import MIN_CELL_PX, MIN_LABEL_PX

DEMO = "What a head writes"
TITLE = "(sel) => (document.querySelector(sel + ' .gtitle') || {}).textContent || ''"
# the bars plotly drew in a figure: each bar's path's box, in page pixels
BARS = """(sel) => [...document.querySelectorAll(sel + ' .bars .point path')].map(p => {
    const r = p.getBoundingClientRect(); return {width: r.width, height: r.height}; })"""
# JS: move the first bar text of a figure by its transform attribute (as plotly places it), read where the page draws
# it in the same task, and put it back
MOVED = """(sel) => { const t = document.querySelector(sel + ' .bartext'), before = t.getAttribute('transform');
    t.setAttribute('transform', 'translate(5,7)'); const drawn = getComputedStyle(t).transform;
    t.setAttribute('transform', before); return drawn; }"""
FONTS = """(sel) => [...document.querySelectorAll(sel + ' text')].filter(t => t.textContent.trim())
    .map(t => parseFloat(getComputedStyle(t).fontSize))"""


def draw_the_demo(page) -> None:
    """Click the demo and wait until both of the section's figures are drawn."""
    tour.click_demo(page, DEMO)
    for figure, words in (("#features-heads", "Heads per feature"), ("#features-strip", "fires in this input")):
        page.wait_for_function(f"([sel, text]) => ({TITLE})(sel).includes(text)", arg=[figure, words],
                               timeout=tour.TIMEOUT_MS)


@pytest.mark.parametrize("width", [1280, 390])
def test_the_demo_draws_readable_heads_bars_and_strip(open_at, width):
    page = open_at(width)
    draw_the_demo(page)
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


def test_a_text_plotly_moves_is_drawn_there_at_once(open_at):
    """Invariant: a bar text moved by its transform attribute is drawn there in the same task (its computed
    transform is the attribute's), never first at its old place through a transition (the reduced-motion CSS of
    widgets/accessible.py gave every property a 0.01 ms transition: the text stayed at its start until a frame)."""
    page = open_at(1280)
    if "Heads per feature" not in page.evaluate(TITLE, "#features-heads"):
        draw_the_demo(page)
    assert page.evaluate("() => matchMedia('(prefers-reduced-motion: reduce)').matches")
    assert page.evaluate(MOVED, "#features-heads") == "matrix(1, 0, 0, 1, 5, 7)"
