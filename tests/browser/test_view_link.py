"""A link that opens exactly this view (issue 29), in chromium: a view drawn in one browser, its link copied with
one click, opened cold in another browser context (no cookie, no local storage, no session) reproduces the figure:
the same checkpoint, input, kind, layer, head and switches, the same open section, and the heatmap's values read
from the page's plotly figure equal, cell for cell (oracle: the first browser's own figure)."""
from __future__ import annotations

import math

from tests.browser import tour
from tests.browser.conftest import MEASURED

HEATMAP = "() => Array.from(document.querySelector('#att-one .js-plotly-plot')._fullData[0].z, r => Array.from(r))"
TITLE = "() => (document.querySelector('#att-one .gtitle') || {}).textContent"
SLIDER = "id => Number(document.querySelector(`#${id} input[type=range]`).value)"


def _page(browser, clipboard: bool = False):
    """A page in a context of its own (a fresh browser: nothing shared with another context)."""
    context = browser.new_context(viewport=tour.VIEWPORT, reduced_motion=tour.REDUCED_MOTION)
    if clipboard:
        context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = context.new_page()
    page.set_default_timeout(tour.TIMEOUT_MS)
    return page, tour.OfflineGuard().install(page)


def _cells(page) -> list[list[float | None]]:
    return [[None if v is None or math.isnan(v) else v for v in row] for row in page.evaluate(HEATMAP)]


def _view(page) -> dict:
    """What the Attention tab shows: the heatmap's title and cells, the controls, the sections open."""
    from tabs.attention.link import OPEN_SECTIONS_JS

    return {"title": page.evaluate(TITLE), "cells": _cells(page), "layer": page.evaluate(SLIDER, "att-layer"),
            "head": page.evaluate(SLIDER, "att-head"), "ckpt": page.locator("#ckpt input").input_value(),
            "shown": page.locator("#att-cells input:checked").input_value(),
            "open": page.evaluate(OPEN_SECTIONS_JS)}


def test_a_copied_link_opens_the_same_view_in_another_browser(browser, app_url):
    from tabs.attention.link import COPY_JS

    teacher, guard_a = _page(browser, clipboard=True)
    teacher.goto(app_url)
    tour.show_tab(teacher, "attention")  # the heatmap of "attention", computed at the page's load
    teacher.wait_for_function(f"() => /^cross attention, layer \\d+, head \\d+$/.test(({TITLE})() || '')")
    layer, head = teacher.evaluate(SLIDER, "att-layer"), teacher.evaluate(SLIDER, "att-head")
    head = 2 if head != 2 else 1  # another head than the one the tab opened on
    tour._move_slider(teacher, "att-head", head, f"cross attention, layer {layer}, head {head}")
    teacher.locator("#att-cells").get_by_text("value-weighted norms").click()
    teacher.wait_for_function(f"() => ({TITLE})() === 'cross value-weighted norms, layer {layer}, head {head}'")
    teacher.locator("#att-qk-section > button").click()
    teacher.locator("#att-qk .gtitle").wait_for()
    # edited after drawing, not shown: the link opens the figure on the screen, not this text
    teacher.locator("#att-text textarea").fill("edited, never drawn")
    drawn = _view(teacher)
    teacher.locator("#att-link-copy").click()
    teacher.wait_for_function("() => document.querySelector('#att-link textarea').value.startsWith('http')")
    link = teacher.locator("#att-link textarea").input_value()
    assert teacher.evaluate("() => navigator.clipboard.readText()") == link  # one click copied it
    assert link.startswith(app_url.rstrip("/") + f"/?tab=attention&ckpt=reverse&text=attention&kind=cross&"
                                                 f"layer={layer}&head={head}&cells=value-weighted%20norms&words=0")
    assert drawn["open"] == "qk" and link.endswith("&open=qk")

    student, guard_b = _page(browser)  # another browser, opening the link cold
    student.goto(link)
    student.wait_for_function(f"() => ({TITLE})() === '{drawn['title']}'")
    student.locator("#att-qk .gtitle").wait_for()  # the section the link opened has drawn
    opened = _view(student)
    assert opened == drawn
    assert student.locator("#att-text textarea").input_value() == "attention"
    assert not student.locator("#link-note").is_visible()  # nothing of the link was ignored
    MEASURED["link to a view"] = f"{len(link)} characters: {link[len(app_url.rstrip('/')):]}"

    # Behind a proxy the page may sit under a path: the link keeps the page's own path, drops its old query
    student.evaluate("() => history.pushState({}, '', '/spaces/lab/app/?old=1#top')")
    assert student.evaluate(f"({COPY_JS})('?tab=attention')") == \
        app_url.rstrip("/") + "/spaces/lab/app/?tab=attention"
    # A stale link (a head the model does not have) opens the rest, and says in one sentence what it ignored
    student.goto(app_url + "?tab=attention&ckpt=reverse&text=attention&kind=cross&layer=9&head=0")
    student.locator("#link-note").wait_for(state="visible")
    assert student.locator("#link-note").inner_text().strip() == (
        "The link's head cross 9.0 was ignored: this model's cross attention has 2 layers of 4 heads.")
    student.wait_for_function(f"() => /^cross attention, layer \\d+, head \\d+$/.test(({TITLE})() || '')")
    assert guard_a.blocked == [] and guard_b.blocked == [] and guard_b.allowed
    teacher.context.close()
    student.context.close()


TITLE_OF = "id => (document.querySelector(`#${id} .gtitle`) || {}).textContent || ''"
CELLS_OF = "id => Array.from(document.querySelector(`#${id} .js-plotly-plot`)._fullData[0].z, r => Array.from(r))"
SECTIONS_DRAWN = ("two-a", "two-b", "att-qk", "lens-curve", "patch-heads")  # the figures of the sections the link
# opens


def _sections(page) -> dict:
    """The titles of the open sections' figures, the cells of both maps of the two inputs, the second input's box."""
    seen = {f"{id} title": page.evaluate(TITLE_OF, id) for id in SECTIONS_DRAWN}
    seen.update({f"{id} cells": page.evaluate(CELLS_OF, id) for id in ("two-a", "two-b", "patch-heads")})
    seen["text_b"] = page.locator("#two-text textarea").input_value()
    seen["patching"] = (page.locator("#patch-other textarea, #patch-other input").first.input_value(),
                        page.locator("#patch-note").inner_text())
    return seen


def test_a_link_opens_the_second_input_the_query_row_and_the_lens_position_cold(browser, app_url):
    """Regression (issue 29, the link): a link opened the two-inputs and patching sections empty, the Q·K section on
    its first query and the lens on its first position. Now a view with a second input compared ("attentive"),
    the Q·K step of query row 3, the lens's curve at position 4 and the pair patched against the other token "x",
    copied and opened cold in another browser context, draws the same figures: input B's map and the patched heads
    cell for cell, the same Q·K and lens titles and patching note (oracle: the first browser's own figures); B's
    box holds the text compared, not an edit made after."""
    teacher, guard_a = _page(browser)
    teacher.goto(app_url)
    tour.show_tab(teacher, "attention")
    teacher.wait_for_function(f"() => /^cross attention, layer \\d+, head \\d+$/.test(({TITLE})() || '')")
    teacher.locator("#att-two-section > button").click()
    teacher.locator("#two-text textarea").fill("attentive")
    teacher.locator("#two-compare").click()
    teacher.wait_for_function(f"() => ({TITLE_OF})('two-b').startsWith('input B')")
    teacher.locator("#att-qk-section > button").click()
    teacher.locator("#att-qk .gtitle").wait_for()
    tour.set_slider(teacher, "att-query", 3)
    teacher.wait_for_function(f"() => ({TITLE_OF})('att-qk').startsWith('query 3 ')")
    teacher.locator("#att-lens-section > button").click()
    teacher.locator("#lens-curve .gtitle").wait_for()
    tour.set_slider(teacher, "lens-position", 4)
    teacher.wait_for_function(f"() => ({TITLE_OF})('lens-curve').startsWith('position 4 ')")
    teacher.locator("#att-patch-section > button").click()  # then against "x" (the default is the corrupted run's
    # top token, "e" of "evitnetta": the same cells)
    teacher.locator("#patch-heads .gtitle").wait_for()
    heads = f"() => JSON.stringify(({CELLS_OF})('patch-heads'))"  # compared in the page: NaN cells stay NaN
    before = teacher.evaluate(heads)
    other = teacher.locator("#patch-other textarea, #patch-other input").first
    other.fill("x")
    other.press("Enter")
    teacher.wait_for_function(f"t => ({heads})() !== t", arg=before)
    drawn = _sections(teacher)
    teacher.locator("#two-text textarea").fill("edited, never compared")  # the link opens what was compared
    teacher.locator("#att-link-copy").click()
    teacher.wait_for_function("() => document.querySelector('#att-link textarea').value.startsWith('http')")
    link = teacher.locator("#att-link textarea").input_value()
    assert "&text_b=attentive&" in link and link.endswith("&query=3&lens_position=4&open=qk,lens,two,patch&other=x")

    student, guard_b = _page(browser)  # another browser, opening the link cold
    student.goto(link)
    for id in SECTIONS_DRAWN:
        student.wait_for_function(f"t => ({TITLE_OF})('{id}') === t", arg=drawn[f"{id} title"])
    student.wait_for_function("t => document.querySelector('#patch-note').innerText === t", arg=drawn["patching"][1])
    assert _sections(student) == drawn
    assert not student.locator("#link-note").is_visible()  # nothing of the link was ignored
    assert guard_a.blocked == [] and guard_b.blocked == []
    MEASURED["link with a second input"] = f"{len(link)} characters: {link[len(app_url.rstrip('/')):]}"
    teacher.context.close()
    student.context.close()


GENERATED = """() => ((document.querySelector('#gen-output textarea') || {}).value || '').trim() !== ''
                 && ((document.querySelector('#gen-notice') || {}).textContent || '').trim() !== ''"""


def _generation(page) -> dict:
    """What the Generate tab shows: the prompt, the decoding chosen, the seed, the output, where its first token
    looked."""
    return {"prompt": page.locator("#gen-prompt textarea").input_value(),
            "decoding": page.locator("#gen-decoding input:checked").input_value(),
            "seed": page.locator("#gen-seed input").input_value(),
            "output": page.locator("#gen-output textarea").input_value(),
            "looked": tour.visible_panel(page).locator(".gtitle", has_text="looked").first.text_content()}


def test_a_copied_link_to_a_generation_generates_it_again_in_another_browser(browser, app_url):
    """Behaviour (issue 29, the link, in the Generate tab): a sampled generation at seed 7, its link copied with one
    click, opened cold in another browser context, opens the Generate tab with the same prompt and controls and
    generates the same text (oracle: the first browser's output); the link holds what was generated, not a prompt
    edited after."""
    teacher, guard_a = _page(browser, clipboard=True)
    teacher.goto(app_url)
    tour.show_tab(teacher, "generate")
    teacher.locator("#gen-decoding").get_by_text("sample").click()
    teacher.locator("#gen-seed input").fill("7")
    tour.tour_generate(teacher, "transformer")
    drawn = _generation(teacher)
    teacher.locator("#gen-prompt textarea").fill("edited, never generated")
    teacher.locator("#gen-link-copy").click()
    teacher.wait_for_function("() => document.querySelector('#gen-link textarea').value.startsWith('http')")
    link = teacher.locator("#gen-link textarea").input_value()
    assert teacher.evaluate("() => navigator.clipboard.readText()") == link
    assert link.startswith(app_url.rstrip("/") + "/?tab=generate&ckpt=reverse&prompt=transformer&decoding=sample&")
    assert link.endswith("&seed=7"), link

    student, guard_b = _page(browser)
    student.goto(link)
    student.wait_for_function(GENERATED)
    tour.visible_panel(student).locator(".gtitle", has_text="looked").wait_for()
    assert _generation(student) == drawn and drawn["decoding"] == "sample"
    assert not student.locator("#link-note").is_visible()
    assert guard_a.blocked == [] and guard_b.blocked == []
    MEASURED["link to a generation"] = f"{len(link)} characters: {link[len(app_url.rstrip('/')):]}"
    teacher.context.close()
    student.context.close()
