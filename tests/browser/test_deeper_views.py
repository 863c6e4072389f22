"""The Attention tab's deeper views in a real browser (offline): the value-weighted norms and words switches redraw
the heatmap with its caption, the logit lens draws when its section opens, and two inputs compare side by side."""
from __future__ import annotations

from tests.browser import tour

TITLE = "(sel) => (document.querySelector(sel + ' .gtitle') || {}).textContent || ''"


def _wait_title(page, selector: str, text: str) -> None:
    page.wait_for_function(f"([sel, text]) => ({TITLE})(sel).includes(text)", arg=[selector, text],
                           timeout=tour.TIMEOUT_MS)


def test_norms_and_words_switches_redraw_the_head_and_its_caption(lab):
    """Choosing the value-weighted norms redraws the one-head heatmap under that title, with a one-line caption
    naming the head; ticking words merges the tokens (the title says so)."""
    page = lab.page
    tour.visit(page, "attention")
    _wait_title(page, "#att-one", "attention, layer")
    page.locator("#att-cells").get_by_text("value-weighted norms").click()
    _wait_title(page, "#att-one", "value-weighted norms, layer")
    page.wait_for_function("() => /Layer \\d+, head \\d+: /.test(document.querySelector('#att-caption').textContent)",
                           timeout=tour.TIMEOUT_MS)
    page.locator("#att-words input[type=checkbox]").check()
    _wait_title(page, "#att-one", "value-weighted norms in words")


def test_logit_lens_and_two_inputs_draw_when_asked(lab):
    """The logit lens draws once its section is opened; two inputs draw both heatmaps and the per-head change."""
    page = lab.page
    tour.visit(page, "attention")
    page.locator("#att-lens-section > button").first.click()
    _wait_title(page, "#lens-grid", "Logit lens")
    _wait_title(page, "#lens-curve", "by layer")
    page.locator("#att-two-section > button").first.click()
    page.locator("#two-text textarea").fill("attentive")
    page.locator("#two-compare").click()
    _wait_title(page, "#two-grid", "Change per head")
    _wait_title(page, "#two-b", "input B")
    assert lab.guard.blocked == []  # offline: nothing outside 127.0.0.1 was asked for
