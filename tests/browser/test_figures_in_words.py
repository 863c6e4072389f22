"""What a screen reader meets on the Attention tab after a demo (issue 40, item 2): the heatmap's name and its
caption's numbers in the accessibility tree, a "Show as a table" reached and pressed from the keyboard whose table's
cells and headers equal the figure's, and the answer of an Ask-first question said in a live region on Reveal.

Oracle: the demo's record computed afresh in the test process (the same handler, checkpoint, input and head), its
head's caption (tabs.attention.views.draw_caption) and its weights, tokens as the axes write them.
"""
from __future__ import annotations

import re

from tabs.attention.page import compute_attention
from tabs.attention.views import draw_caption
from tabs.demos import DEMOS, demo_focus
from tests.browser import tour
from tests.conftest import page_call
from visualize.style import visible_whitespace

TITLE = "cross attention, layer 1, head 3"  # the heatmap "Reading backwards" opens on (test_predict_reveal.py)
_TABLE = """() => {
    const region = document.querySelector('#att-one-table .figure-tables');
    const table = region && region.querySelector('table');
    if (!table || region.hidden) return null;
    const text = c => c.textContent;
    return {head: [...table.querySelectorAll('thead th')].map(text).slice(1),
            rows: [...table.querySelectorAll('tbody tr')].map(r => [...r.querySelectorAll('th, td')].map(text)),
            focused: document.activeElement === region};
}"""


def test_a_screen_reader_hears_the_heatmap_its_caption_its_table_and_the_answer(open_at):
    """After "Reading backwards" (Ask first on, then Reveal) at 1280x800:
    - the live region says the answer shown (it was said nowhere: the answer's box only stopped being hidden);
    - Playwright's aria snapshot of the figure's column has a figure named "<title>, T x S" (no name before), none
      of plotly's tick labels read one by one, none of its toolbar's buttons, and the head's caption with its numbers;
    - Tab reaches "Show as a table", Enter brings the table and moves the focus to it; its column headers are the
      key tokens, its row headers the query tokens, its cells the weights to 3 decimals, all of a fresh record."""
    demo = next(d for d in DEMOS if d.label == "Reading backwards")
    request = page_call("figures-in-words")
    opened = compute_attention(demo.ckpt, demo.text, demo.target, demo_focus(demo), request=request)
    view, record = opened.view, opened.record
    kind, layer, head = view
    pattern = record.patterns[kind]
    weights = pattern.weights[layer, head].numpy()
    caption = draw_caption(record, kind, layer, head, demo.show, demo.words, demo.ckpt, request=request)
    numbers = re.findall(r"\d+(?:\.\d+)?%?", caption.split(":", 1)[1])
    assert numbers, caption  # a caption with its numbers ("98% of ...")

    page = open_at(1280)
    page.locator("#demo-ask-first input").check()
    tour.click_demo(page, demo.label)
    page.locator("#demo-question").get_by_text("Which letter of").wait_for()
    page.wait_for_function("t => (document.querySelector('#att-one .gtitle') || {}).textContent === t", arg=TITLE)
    page.locator("#demo-reveal").click()
    live = page.locator("#demo-announce")
    page.wait_for_function("() => (document.querySelector('#demo-announce') || {}).textContent")
    assert live.get_attribute("aria-live") == "polite"
    assert live.text_content() == page.locator("#demo-answer").inner_text().strip() and "7th" in live.text_content()
    tour.plots_drawn(page)

    name = f"{TITLE}, {weights.shape[0]} x {weights.shape[1]}"
    page.wait_for_function("n => (document.querySelector('#att-one .js-plotly-plot') || {getAttribute() {}})"
                           ".getAttribute('aria-label') === n", arg=name)
    column = page.locator("#att-one").locator("xpath=ancestor::div[.//*[@id='att-caption']][1]")
    snapshot = column.aria_snapshot()
    assert snapshot.startswith(f'- figure "{name}"\n- button "PNG"'), snapshot  # nothing of plotly's inside read out
    assert all(n in snapshot for n in numbers), (numbers, snapshot)
    described = page.evaluate("() => { const p = document.querySelector('#att-one .js-plotly-plot');"
                              " return document.getElementById(p.getAttribute('aria-describedby')).textContent; }")
    assert described.startswith(caption.rstrip(".")), (described, caption)

    assert page.locator("#att-one-table").is_hidden()  # no table asked for: the box takes no room under the figure
    button = page.locator("#att-one-show-table")
    page.locator("#att-one-html").focus()  # the export beside it, then one Tab
    page.keyboard.press("Tab")
    assert button.evaluate("b => b === document.activeElement || b.contains(document.activeElement)")
    page.keyboard.press("Enter")
    page.wait_for_function("() => !!document.querySelector('#att-one-table .figure-tables table')")
    table = page.evaluate(_TABLE)
    assert table and table["focused"], table
    assert table["head"] == [visible_whitespace(t) for t in pattern.key_tokens]
    assert [row[0] for row in table["rows"]] == [visible_whitespace(t) for t in pattern.query_tokens]
    assert [row[1:] for row in table["rows"]] == [[f"{w:.3f}" for w in row] for row in weights.tolist()]

    # Another head drawn there: the table of the old one is hidden (it would disagree with the figure), the figure
    # renamed
    page.locator("#att-head input[type=range]").focus()
    page.keyboard.press("ArrowLeft")
    other = f"cross attention, layer 1, head 2, {weights.shape[0]} x {weights.shape[1]}"
    page.wait_for_function("n => document.querySelector('#att-one .js-plotly-plot').getAttribute('aria-label') === n",
                           arg=other)
    assert page.evaluate(_TABLE) is None  # hidden
