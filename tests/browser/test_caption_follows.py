"""The head caption under the one-head heatmap never says what another heatmap showed (issue 29: "what the class sees
must be true"), watched in chromium through a demo click, a head change and Show attention with a new input.

A colleague saw, under load, the causal-mask demo's layer 0, head 0 drawn under the page load's caption "Layer 1,
head 3: anti-diagonal head: 98%..." for 3 s: gradio's page draws a plot and a Markdown of the same reply at
different moments, and a head change answered the caption in a call of its own. The heatmap now carries its caption
(widgets.figure_caption)."""
from __future__ import annotations

import re

from tests.browser import tour
from tests.browser.conftest import MEASURED

DEMO = "The causal mask"  # shakespeare-char on Hamlet's line, opened on layer 0, head 0
NEW_INPUT = "Brevity is the soul of wit."  # Show attention's new input: another number of keys than the demo's

# JS, in the page: record every state of (the one-head heatmap's title, its number of key columns, the caption) the
# page goes through, from every change of the page (a MutationObserver: it sees each state the screen could be
# painted with, in the order of the page's changes, however slow or fast the machine). Installed after the
# caption's own observer (the page's first caption is then written), so it sees the page as painted.
_RECORD = """() => {
    window.captionStates = [];
    const read = () => {
        const plot = document.querySelector('#att-one .js-plotly-plot');
        const title = (plot && plot.querySelector('.gtitle') || {}).textContent || '';
        const keys = plot && plot.layout && plot.layout.xaxis ? (plot.layout.xaxis.ticktext || []).length : 0;
        const caption = (document.querySelector('#att-caption') || {}).innerText || '';
        const last = window.captionStates[window.captionStates.length - 1];
        if (!last || last[0] !== title || last[1] !== keys || last[2] !== caption)
            window.captionStates.push([title, keys, caption.trim()]);
    };
    new MutationObserver(read).observe(document.body, {childList: true, subtree: true, characterData: true});
    read();
}"""
# JS: the state now (title, key columns, caption), as _RECORD reads it
_NOW = """() => { const s = window.captionStates; return s[s.length - 1]; }"""
_TITLE = re.compile(r"(.+) attention, layer (\d+), head (\d+)")


def _wait_for(page, title: str, keys: int | None, caption_start: str) -> None:
    """Until the page shows the heatmap `title` (with `keys` key columns) and a caption that starts so."""
    page.wait_for_function("""([title, keys, start]) => { const [t, k, c] = (NOW)();
        return t === title && (keys === null || k === keys) && c.startsWith(start); }""".replace("NOW", _NOW),
                           arg=[title, keys, caption_start], timeout=90_000)


def test_the_head_caption_never_names_another_head_or_input_than_the_heatmap_drawn(open_at):
    """Regression (issue 29): no state of the page shows a caption other than the drawn heatmap's own, through a
    demo click, a head change on the slider and Show attention with a new input. Oracle: the caption the app
    computes (tabs.attention.views.draw_caption) for the input, kind, layer and head of the heatmap on screen (its
    title, and its number of key columns, which tells the three inputs apart). An empty caption is allowed (nothing
    said yet), a caption under no heatmap is not. Before: after the head change the caption of head 2 stood under
    head 0's heatmap (the caption answered in a call of its own), and the page's first caption under no heatmap
    until plotly was loaded; under load, the demo's heatmap under the page load's caption."""
    from tabs.attention.record import _shipped_record
    from tabs.attention.views import draw_caption

    page = open_at(1280)
    tour.show_tab(page, "attention")
    page.wait_for_function("() => /^Layer \\d+, head \\d+: /.test("
                           "(document.querySelector('#att-caption') || {}).innerText || '')", timeout=90_000)
    loaded = (page.locator("#ckpt input").input_value(), page.locator("#att-text input, #att-text textarea").first
              .input_value())
    page.evaluate(_RECORD)
    tour.click_demo(page, DEMO)
    _wait_for(page, "decoder self attention, layer 0, head 0", None, "Layer 0, head 0: ")
    tour.set_slider(page, "att-head", 2)
    _wait_for(page, "decoder self attention, layer 0, head 2", None, "Layer 0, head 2: ")
    page.locator("#att-text input, #att-text textarea").first.fill(NEW_INPUT)
    page.locator("#att-show").click()
    page.wait_for_function("([keys]) => { const [t, k, c] = (NOW)(); return k === keys && c !== ''; }".replace(
        "NOW", _NOW), arg=[len(NEW_INPUT)], timeout=90_000)
    states = page.evaluate("() => window.captionStates")

    demo_text = "To be, or not to be, that is the question"
    records = [_shipped_record(*loaded, ""), _shipped_record("shakespeare-char", demo_text, ""),
               _shipped_record("shakespeare-char", NEW_INPUT, "")]
    seen = [{(kind, len(p.key_tokens)) for kind, p in r.patterns.items()} for r in records]
    assert not (seen[0] & seen[1] or seen[0] & seen[2] or seen[1] & seen[2]), seen  # the keys tell them apart

    def own_caption(title: str, keys: int) -> str | None:
        """The caption of the heatmap titled `title` with `keys` key columns, or None when it is none of the
        three inputs'."""
        kind, layer, head = _TITLE.fullmatch(title).groups()
        for record in records:
            if kind in record.patterns and len(record.patterns[kind].key_tokens) == keys:
                return draw_caption(record, kind, int(layer), int(head)).strip("*")  # as shown: in bold
        return None

    wrong = [(title, keys, caption) for title, keys, caption in states
             if caption and (not _TITLE.fullmatch(title) or own_caption(title, keys) != caption)]
    assert not wrong, f"captions seen that are not the drawn heatmap's own (title, key columns, caption): {wrong}"
    shown = [s for s in states if s[2]]
    assert len({s[0] for s in shown}) >= 3, states  # the demo's head, head 2 and the new input's, each captioned
    MEASURED["head caption states"] = f"{len(states)} states, {len(shown)} captioned, 0 contradicting"
