"""Issue 38, item 1: a heatmap that died on a projector. After the demo "Who reads whom?", `reverse` in the
checkpoint list read the demo's English verse in words as one 37-character "word" (its spaces and capitals are
`<unk>` to it); upright under the layer's grid its label pushed the grid's margins past the figure's height, plotly
threw "Something went wrong with axis scaling" inside gradio's page, and the page drew nothing more (the checkpoint
list no longer opened). A link of shakespeare-char opening the Q·K, lens and two-inputs sections on an input with a
long word threw the same. Tick labels are now cut at visualize.sizes.MAX_LABEL_CHARS (visualize.style.tick_labels)
and a layer's grid is never shorter than its margins and a row of heads.

Each test listens to the page's uncaught errors ('pageerror') and its console errors, and checks every figure it
waits for is drawn: a heatmap's cells (plotly's `.hm image`) under a new figure's title."""
from __future__ import annotations

import re
from urllib.parse import quote

import pytest

from tests.browser import tour

DEMO = "Who reads whom?"
# JS: a key of the figure drawn in `#id`: its data, a new array at every draw (gradio's Plotly.react of a new JSON)
MARK = "id => { const g = document.querySelector(`#${id} .js-plotly-plot`); window.__drawn = g && g.data; }"
REDRAWN = """id => { const g = document.querySelector(`#${id} .js-plotly-plot`);
    return !!(g && g._fullLayout && g.data && g.data !== window.__drawn && g.querySelector('.hm image')
              && /layer \\d+, head \\d+/.test((g.querySelector('.gtitle') || {}).textContent || '')); }"""
# JS: whether the figure in `#id` is drawn: a plot area, and a heatmap's cells or another trace in it
DRAWN = """id => { const g = document.querySelector(`#${id} .js-plotly-plot`);
    return !!(g && g._fullLayout && g._fullLayout._size.h > 0 && g._fullLayout._size.w > 0
              && g.querySelector('.main-svg .hm image, .main-svg .cartesianlayer .trace')); }"""


class Errors:
    """The page's uncaught errors and its console errors, from now on. A resource the server refused (gradio's 422
    of a validator, issue 38 item 4) is not a script error and is left to its own test."""

    def __init__(self, page):
        self.seen: list[str] = []
        page.on("pageerror", lambda e: self.seen.append(f"pageerror: {e}"))
        page.on("console", lambda m: m.type == "error" and not m.text.startswith("Failed to load resource")
                and self.seen.append(f"console: {m.text}"))


def _page(browser, width: int):
    context = browser.new_context(viewport=tour.SIZES[width], reduced_motion=tour.REDUCED_MOTION)
    page = context.new_page()
    page.set_default_timeout(tour.TIMEOUT_MS)
    return page, Errors(page)


def _about_starts(ckpt: str) -> str:
    """The first words of what the line beside the checkpoint list says of `ckpt`, as the page renders them."""
    from store.catalogue import description

    return re.sub(r"[*`]", "", description(ckpt, ""))[:30]


@pytest.mark.parametrize("width", [1280, 390])
def test_after_the_translation_demo_every_checkpoint_draws_its_heatmap(browser, app_url, width):
    """The demo, then each other shipped checkpoint in the list, in turn: each draws a new one-head heatmap (its
    cells, a title naming a layer and a head) and its layer's grid, the line beside the list says what that
    checkpoint was trained on, and the page throws nothing. Before: at 1280, `reverse` threw "Something went wrong
    with axis scaling" and no checkpoint drew again."""
    from store.catalogue import fixed_choices

    page, errors = _page(browser, width)
    tour.open_app(page, app_url)
    tour.show_tab(page, "attention")
    page.wait_for_function(DRAWN, arg="att-one")
    page.evaluate(MARK, "att-one")
    tour.click_demo(page, DEMO)
    page.wait_for_function("() => /AER/.test((document.querySelector('#att-one .gtitle') || {}).textContent || '')")
    others = [c for c in fixed_choices() if c != "translate-en-es" and "(pretrained)" not in c]
    assert "reverse" in others, others
    drawn = {}
    for ckpt in sorted(others, key=lambda c: c != "reverse"):  # reverse first: the case the class saw
        page.evaluate(MARK, "att-one")
        tour.select_checkpoint(page, ckpt)
        page.wait_for_function(REDRAWN, arg="att-one")
        page.wait_for_function(DRAWN, arg="att-grid")
        page.wait_for_function("t => document.querySelector('#ckpt-about').textContent.trim().startsWith(t)",
                               arg=_about_starts(ckpt))
        drawn[ckpt] = page.locator("#att-one .gtitle").text_content()
        assert not errors.seen, f"after {ckpt}: {errors.seen}"
    tour.screenshot(page, tour.SHOTS / f"issue38-after-every-checkpoint-{width}.png", full_page=False)
    assert set(drawn) == set(others), drawn
    page.context.close()


LONG_WORD = "Tobeornottobethatisthequestionwhethertisnoblerinthemind"  # one word of 55 characters
LINK = (f"?tab=attention&ckpt=shakespeare-char&text={quote(LONG_WORD + ' to suffer')}&words=1&text_b=To%20be"
        "&open=qk,lens,two")
SECTIONS = ("att-qk", "lens-grid", "lens-curve", "two-a", "two-b")  # the figures of the sections the link opens


@pytest.mark.parametrize("width", [1280, 390])
def test_a_link_opening_the_sections_on_a_long_word_draws_them_all(browser, app_url, width):
    """A shakespeare-char link in words with a 55-character word, opening the Q·K, lens and two-inputs sections:
    the heatmap and every section's figure are drawn, and the page throws nothing. Before: at 1280 "Something went
    wrong with axis scaling" (the layer's grid under a 55-character upright label)."""
    page, errors = _page(browser, width)
    page.goto(app_url.rstrip("/") + "/" + LINK)
    page.wait_for_function(DRAWN, arg="att-one")
    for figure in SECTIONS:
        page.wait_for_function(DRAWN, arg=figure)
    page.wait_for_timeout(1000)  # a figure drawn last throws, if it does, within this
    assert not errors.seen, errors.seen
    labels = page.evaluate("() => [...document.querySelectorAll('#att-one .xtick text')].map(t => t.textContent)")
    assert any(label.endswith("…") for label in labels), labels  # the long word, cut
    tour.screenshot(page, tour.SHOTS / f"issue38-long-word-link-{width}.png")
    page.context.close()
