"""The demo "Who reads whom?" in a real browser: one click opens the translation model's cross-attention
in words on a held-out verse, on the head that aligns it best, with its AER in the title and the verse's gold links
drawn as circles; and what that click costs the page (server calls, figures drawn)."""
from __future__ import annotations

import pytest

from tests.browser import click_cost, tour
from tests.browser.conftest import MEASURED

LABEL = "Who reads whom?"


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
    # plotly drew it once: the margins visualize computed hold its labels, colour bar and legend (visualize.margins)
    assert not click_cost.margins_pushed(page, ["att-one", "att-grid", "att-overview"])


# Listeners that draw only inside a section or a tab that is not on screen after a demo click (widgets.ui.separately)
HIDDEN_DRAWS = {"draw_qk", "draw_rollout", "logit_lens", "draw_two_inputs", "patching", "rope", "alibi", "model"}


@pytest.mark.parametrize("width", [390])  # the phone, where the issue measured the longest; the bench does both
def test_a_demo_click_computes_once_and_draws_only_what_is_on_screen(open_at, width):
    """Issue 26 item 5, issue 29 item 11: one click on the translation demo (after another demo, the Model tab seen
    once, so a hidden tab holds a figure) calls the server once to compute the record and once to draw it, calls
    nothing for the closed sections and the hidden tabs, and redraws exactly the three figures on screen, once each.
    Before: 21 server calls (16 queued; the record computed twice, once for the checkpoint's change; 6 calls for
    closed sections, each firing twice) and 5 figures drawn, 2 of them in hidden tabs. The long tasks of the main
    thread are measured, not asserted (bench/demo_click_cost.py, bench/RESULTS.md).
    Issue 29 item 11: 5 server calls, one of them for all that follows the checkpoint (widgets.ui.Followers; before:
    8, four listeners of the checkpoint), and the page deep-copies fewer than 40,000 values in that click (before:
    about 147,000, most of the click's main thread: gradio's page copied every component that had ever shown a
    progress, every component of the tabs too, at each status update of each call;
    widgets.ui.progress_only_where_drawn).
    Issue 29 item 11, what was left: 4 server calls (before: 5: the record is computed and its head drawn in one
    call, tabs.attention.page.compute_and_draw), fewer than 15,000 values deep-copied (before: about 19,000; no
    closed section's gate fails any more, widgets.ui.separately), and every figure drawn once: plotly keeps the
    margins visualize computed for it (visualize.margins; before, it pushed every figure's 10 px margins to ~110 px
    and laid out and drew it again)."""
    page = open_at(width)
    click_cost.watch(page)
    names = click_cost.event_names(page.url)
    for tab in ("model", "attention"):  # the Model tab's figure is then in a hidden tab
        tour.visit(page, tab)
    click_cost.measure(page, click_cost.drawn_after(page, lambda: tour.click_demo(page, "Reading backwards")), names,
                       quiet_s=1.5)  # drawn, and quiet
    cost = click_cost.measure(page, click_cost.drawn_after(page, lambda: tour.click_demo(page, LABEL)), names,
                              quiet_s=1.5)
    MEASURED[f"translation demo click at {width}"] = cost.describe()
    assert cost.names["compute_and_draw"] == 1 and cost.names.keys().isdisjoint({"compute_attention", "draw_view"}), \
        cost.describe()  # computed and drawn in one call (tabs.attention.page.compute_and_draw)
    assert not HIDDEN_DRAWS & set(cost.names), f"calls for what is not on screen: {cost.describe()}"
    on_top = {name: n for name, n in cost.draws.items() if not name.startswith("att-beside")}
    assert on_top == {"att-one": 1, "att-grid": 1, "att-overview": 1}, cost.describe()
    # under them, once the translations are made (maybe after this window), our model's map beside Marian's
    # (tabs.attention.beside; no Marian cached here, so no second map)
    assert cost.draws.keys() - on_top.keys() <= {"att-beside-ours"} and cost.draws["att-beside-ours"] <= 1
    assert cost.names["follow"] == 1 and len(cost.calls) <= 4, cost.describe()
    assert cost.copies < 15_000, cost.describe()
    # each figure drawn once: plotly kept the margins visualize computed for it (before: 10 px pushed to ~110 by
    # the labels, the colour bar and the legend, and every figure laid out and drawn a second time)
    assert not click_cost.margins_pushed(page, list(cost.draws)), cost.describe()


def test_without_a_cached_marian_the_demo_says_how_to_get_one(lab, monkeypatch):
    """Beside the heatmap the demo opened (the test above): our model's translation and the reference, and, with no
    Marian English -> Spanish in the cache (made so here, whatever this machine's cache holds), the command that
    downloads opus-mt-en-es, instead of a map."""
    from tabs.attention import beside
    from tabs.attention.beside import GET_MARIAN
    from tabs.demos import available_demos
    from tabs.generate import translate_as_generate

    monkeypatch.setattr(beside, "pretrained_translator", lambda *languages: None)  # the app runs in this process
    demo = next(d for d in available_demos() if d.label == LABEL)
    page = lab.page
    tour.click_demo(page, LABEL)  # drawn again with no Marian to find
    page.locator("#demo-explain", has_text=LABEL).wait_for()
    marian = page.locator("#att-beside-marian-text", has_text="python -m transformer.pretrained")
    marian.wait_for(timeout=30_000)
    assert "`python -m transformer.pretrained Helsinki-NLP/opus-mt-en-es`" in GET_MARIAN
    assert "python -m transformer.pretrained Helsinki-NLP/opus-mt-en-es downloads opus-mt-en-es" in \
        " ".join(marian.text_content().split())
    ours = translate_as_generate(demo.ckpt, "", demo.text)
    assert f"“{ours}”" in page.locator("#att-beside-ours-text").text_content()
    page.wait_for_function("() => ((document.querySelector('#att-beside-ours .gtitle') || {}).textContent || '')"
                           ".startsWith('cross attention in words')")
    assert page.locator("#att-beside-marian .main-svg").count() == 0  # no map without the weights


def test_the_norms_demo_shows_the_norms_of_the_head_where_they_differ_most(lab):
    """Issue 29 item 12: one click on "Weights or what moves" switches "Cells show" to the value-weighted norms
    and draws them on the head of its verse where they differ most from the weights (recomputed here:
    tabs.attention.views.most_moved over every kind, the library's max of moved_share), with the caption saying how
    much the norms move. Before, the norms switch had no demo (tests/app/test_norms_demo.py checks the cells)."""
    from tabs.attention.record import _shipped_record
    from tabs.attention.views import SHOW, most_moved
    from tabs.demos import available_demos

    demo = next(d for d in available_demos() if d.label == "Weights or what moves")
    kind, layer, head = most_moved(_shipped_record(demo.ckpt, demo.text, demo.target), demo.ckpt)
    page = lab.page
    tour.click_demo(page, demo.label)
    page.locator("#demo-explain", has_text=demo.label).wait_for()
    expected = f"{kind} value-weighted norms, layer {layer}, head {head}"
    page.wait_for_function("t => ((document.querySelector('#att-one .gtitle') || {}).textContent || '') === t",
                           arg=expected, timeout=30_000)
    assert page.locator("#att-cells input:checked").input_value() == SHOW[1]
    page.locator("#att-caption", has_text=f"Layer {layer}, head {head}").wait_for()
    assert "the norms move" in page.locator("#att-caption").text_content()
