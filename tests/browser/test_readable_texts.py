"""Texts a class reads, read in the browser at 1280x800 (a projector) and 390x844 (a phone), as the page lays them
out (issue 29's leftovers 3-5): the Model tab's metric names, the Train tab's watch status, the head caption."""
from __future__ import annotations

from tests.browser import tour
from tests.browser.conftest import MEASURED

# JS: for each cell of `sel`, every place its text goes on to a new line inside a word (the character before the
# break is neither a space nor a hyphen), with the text around it. A line starts where a character's box starts below
# the previous one's; a space that ends a line has no box of its own.
_BROKEN_WORDS = """sel => [...document.querySelectorAll(sel)].flatMap(cell => {
    const chars = [];
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode())
        for (let i = 0; i < node.length; i++) {
            const range = document.createRange();
            range.setStart(node, i);
            range.setEnd(node, i + 1);
            const box = range.getClientRects()[0];
            chars.push({c: node.data[i], top: box && box.width > 0 ? box.top : null});
        }
    const text = chars.map(ch => ch.c).join(''), broken = [];
    let line = null;
    chars.forEach((ch, i) => {
        if (ch.top === null) return;
        if (line !== null && ch.top > line + 2 && !/[\\s\\-]/.test(chars[i - 1].c) && !/\\s/.test(ch.c))
            broken.push(text.slice(Math.max(0, i - 12), i) + '|' + text.slice(i, i + 12));
        line = ch.top;
    });
    return broken.map(b => ({cell: text.trim(), at: b}));
})"""
_NAMES = "#model-summary table tbody td:first-child"


def test_the_metric_names_are_words_that_wrap_whole_on_a_phone(open_at):
    """Regression (issue 29, leftover 5): at 390x844 the Model tab printed the translation card's raw keys
    (`bleu_copy_source`, `path_patching_previous_token_to_induction_key`) in its metric tables, and the browser broke
    them mid-word to fit the narrow first column. Invariant, measured on the laid-out text of every metric name cell
    of the translation card and the induction card (the longest names): no line break inside a word, and no name
    left as a key (an underscore)."""
    page = open_at(390)
    checked = 0
    for name in ("translate-en-es", "induction"):
        tour.select_checkpoint(page, name)
        tour.show_tab(page, "model")
        page.wait_for_function("n => document.querySelector('#model-summary').textContent.includes(n + ':') && "
                               "document.querySelector('#model-summary table')", arg=name)
        cells = page.locator(_NAMES).all_text_contents()
        checked += len(cells)
        keys = [c for c in cells if "_" in c]
        assert not keys, f"{name}: metric names left as keys: {keys}"
        broken = page.evaluate(_BROKEN_WORDS, _NAMES)
        assert not broken, f"{name}: metric names broken inside a word at 390 px: {broken}"
        tour.small_screenshot(page, tour.SHOTS / f"model-metrics-{name}-390.png")
    MEASURED["metric names checked at 390"] = str(checked)
    assert checked >= 40, f"only {checked} metric names were on the page"
