"""The demo "Who reads whom: translation" in a real browser: one click opens the translation model's cross-attention
in words on a held-out verse, on the head that aligns it best, with its AER in the title and the verse's gold links
drawn as circles."""
from __future__ import annotations

from tests.browser import tour
from tests.browser.conftest import MEASURED

LABEL = "Who reads whom: translation"


def test_translation_demo_opens_the_best_aligning_head_with_the_gold_links(lab):
    from tabs.attention.page import focus_head
    from tabs.attention.record import _shipped_record
    from tabs.demos import available_demos
    from transformer.translation.corpus import find_verse
    from transformer.translation.gold import cross_words, gold_links

    demo = next(d for d in available_demos() if d.label == LABEL)
    record = _shipped_record(demo.ckpt, demo.text, demo.target)
    kind, layer, head = focus_head(record, (demo.kind, demo.score))
    verse = find_verse(demo.text)
    cross = cross_words(record.patterns["cross"])
    gold = gold_links(verse, len(cross.en_words), len(cross.es_words))

    page = lab.page
    tour.click_demo(page, LABEL)
    page.locator("#demo-explain", has_text=LABEL).wait_for()
    expected = f"{kind} attention in words, layer {layer}, head {head} · AER"
    page.wait_for_function("t => ((document.querySelector('#att-one .gtitle') || {}).textContent || '')"
                           ".startsWith(t)", arg=expected, timeout=30_000)
    title = page.locator("#att-one .gtitle").text_content()
    circles = page.locator("#att-one .scatterlayer .point").count()
    assert circles == len(gold), (circles, len(gold))
    box = page.locator("#att-one .nsewdrag").first.bounding_box()  # where it sits: tests/browser/test_layout.py
    assert page.locator("#att-words input").is_checked()
    MEASURED["translation demo"] = f"{title}; {circles} gold links drawn; heatmap top at y={box['y']:.0f}"
