"""Predict, then reveal (issue 29, "what teachers ask"): with "Ask first" on, a demo shows its question and hides
its figure until one click on Reveal, and the question is readable on a projector and on a phone."""
from __future__ import annotations

import pytest

from tests.browser import tour

# Where the question is and how it is written: its box, its font size, and whether its text is cut sideways
_QUESTION = """() => {
    const box = document.querySelector('#demo-question');
    const r = box.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right,
            font: parseFloat(getComputedStyle(box.querySelector('p')).fontSize),
            cut: box.scrollWidth > box.clientWidth + 1};
}"""
# Where the figure asked about is drawn, in the viewport: its SVG's top and bottom
_FIGURE = """(id) => { const r = document.querySelector(`#${id} .main-svg`).getBoundingClientRect();
    return {top: r.top, bottom: r.bottom}; }"""
READABLE_PX = 16  # the smallest text a class reads off a projector (and a phone held in the hand)


@pytest.mark.parametrize("width", [1280, 390])
def test_a_demo_asks_first_and_one_click_reveals_its_heatmap(open_at, width):
    """Behaviour: with Ask first on, "Reading backwards" shows its question, in the viewport, at least 16 px,
    uncut, with Reveal beside it, and no heatmap (the panel is hidden while the demo draws it); one click on
    Reveal shows the heatmap and the answer, the whole heatmap in view (regression: the answer and the explanation
    shown again pushed its lower half under the fold at 1280x800). Switching Ask first off shows demos at once
    again."""
    page = open_at(width)
    size = tour.SIZES[width]
    page.locator("#demo-ask-first input").check()
    tour.click_demo(page, "Reading backwards")
    question = page.locator("#demo-question")
    question.get_by_text("Which letter of").wait_for()
    page.wait_for_function("() => (document.querySelector('#att-one .gtitle') || {}).textContent === "
                           "'cross attention, layer 1, head 3'")  # drawn meanwhile, hidden
    assert not page.locator("#att-one .main-svg").first.is_visible()
    assert not page.locator("#demo-answer").is_visible() and not page.locator("#demo-explain").is_visible()
    where = page.evaluate(_QUESTION)
    assert where["font"] >= READABLE_PX and not where["cut"], where
    assert 0 <= where["top"] and where["bottom"] <= size["height"] and where["right"] <= size["width"], where
    reveal = page.locator("#demo-reveal")
    box = reveal.bounding_box()
    assert box["y"] + box["height"] <= size["height"] and box["x"] + box["width"] <= size["width"]

    reveal.click()
    page.locator("#att-one .main-svg").first.wait_for(state="visible")
    assert "7th" in page.locator("#demo-answer").inner_text() and page.locator("#demo-explain").is_visible()
    tour.plots_drawn(page)
    figure = page.evaluate(_FIGURE, "att-one")  # the answer and the explanation shown again pushed it down
    assert 0 <= figure["top"] and figure["bottom"] <= size["height"] + 1, f"after Reveal the heatmap is at {figure}"
    # (1 px: the page scrolls by whole pixels, the figure's edges lie between them)

    page.locator("#demo-ask-first input").uncheck()
    tour.click_demo(page, "Reading backwards")
    page.locator("#demo-explain").get_by_text("Reading backwards.").wait_for()
    page.locator("#att-one .main-svg").first.wait_for(state="visible")
    assert not question.is_visible()
