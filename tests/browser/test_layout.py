"""Readable on a projector (1280x800) and on a phone (390x844): the real app in Debian's chromium, offline.

At both sizes every tab is visited, its figures drawn with what a visitor would see first (the Generate tab after
one generation, the Train tab after a short training run), and a screenshot saved to
docs/screenshots/<tab>-<width>.png. On every figure no two pieces of text (titles, axis titles, tick labels,
colour-bar titles and ticks, legends, annotations, bar labels) may overlap, no text may be cut off at the figure's
edge, and the numbers written in heatmap cells may not run together: measured on the boxes of plotly's rendered SVG
text, as the browser lays them out. On the phone every tab button must be on the screen (none hidden behind
Gradio's "..." overflow menu); on the projector the one-head heatmap must start above the fold.
"""
from __future__ import annotations

import json

import pytest

from tests.browser import tour
from tests.browser.tour import PLACE, TOKEN_HEATMAPS
from tests.browser.conftest import MEASURED
from tabs.ask_first import CAPTIONS

SIZES = tour.SIZES
SHOTS = tour.SHOTS
# drawn once the tab has loaded (the Attention tab's: its heatmaps, the logit lens and the two inputs compared)
FIGURES = {"generate": 2, "attention": 3 + 2 + 3, "positional": 7, "train": 2, "model": 1}
SECTIONS = {"positional": ("#pe-rope-section", "#pe-alibi-section"),  # closed accordions whose figures count too
            "attention": ("#att-lens-section", "#att-two-section")}


def train_until_first_evaluation(page) -> None:
    """Start the default training, wait for the first evaluation's attention heatmap, stop, wait until stopped."""
    tour.show_tab(page, "train")
    page.locator("#train-start").click()
    page.locator("#train-attention svg.heatmap-chart rect.cell").first.wait_for(timeout=tour.TRAINING_MS)
    page.locator("#train-stop").click()
    page.wait_for_function("() => document.querySelector('#train-status').textContent.includes('Training stopped')",
                           timeout=tour.TRAINING_MS)


def show_with_figures(page, key: str) -> None:
    """Select a tab and wait until its figures are drawn: the Generate tab's after one generation, the Train tab's
    after a training run reached its first evaluation, the Positional tab's with its RoPE and ALiBi sections open."""
    if key == "generate" and not page.locator("#gen-output textarea").input_value():
        tour.tour_generate(page, "attention")
    elif key == "train" and not page.locator("#train-attention svg.heatmap-chart rect.cell").count():
        train_until_first_evaluation(page)
    else:
        tour.visit(page, key)
    for section in SECTIONS.get(key, ()):  # open it (once: a second click would close it)
        if not page.locator(f"{section} .js-plotly-plot").count():
            page.locator(f"{section} > button").first.click()
    if key == "attention" and not page.locator("#two-a .js-plotly-plot").count():
        page.locator("#two-text textarea").fill("attentive")  # a second input: its figures are drawn
        page.locator("#two-compare").click()
    tour.plots_drawn(page, FIGURES.get(key, 0))
    page.wait_for_timeout(300)  # plotly's automargin may redraw once more after the first frame


def test_every_tab_button_is_on_a_phone_screen(open_at):
    """At 390 px every tab button is shown inside the screen: none is moved into the "..." overflow menu."""
    page = open_at(390)
    buttons = tour.tab_buttons(page)
    labels = [b["label"] for b in buttons]
    assert sorted(labels) == sorted(tour.TABS.values()), f"tab buttons in the bar: {labels}"
    off = [b for b in buttons if not b["shown"] or b["x0"] < 0 or b["x1"] > SIZES[390]["width"]]
    assert not off, f"tab buttons not on the screen: {off}"
    assert not page.get_by_role("button", name="More tabs").is_visible()
    # (test_no_text_of_any_figure_overlaps[390] then taps every one of them)


def test_one_head_heatmap_starts_above_the_fold_on_a_projector(open_at):
    """At 1280x800 the Attention tab's heatmap starts in the first screen, with at least half of it in view."""
    page = open_at(1280)
    tour.visit(page, "attention")
    page.locator("#att-one .nsewdrag").first.wait_for()
    page.evaluate("() => window.scrollTo(0, 0)")
    cells = page.locator("#att-one .nsewdrag").first.bounding_box()  # the heatmap's plot area
    fold = SIZES[1280]["height"]
    assert cells["y"] < fold, f"the heatmap starts {cells['y']:.0f} px down, below the fold at {fold} px"
    visible = (min(cells["y"] + cells["height"], fold) - cells["y"]) / cells["height"]
    assert visible >= 0.5, (f"only {visible:.0%} of the heatmap ({cells['y']:.0f}-{cells['y'] + cells['height']:.0f}"
                            f" px) is above the fold at {fold} px")


@pytest.mark.parametrize("width", SIZES)
def test_no_text_of_any_figure_overlaps(open_at, width):
    """Every tab at this size: no two texts of a figure overlap (2 px of slack), none sticks out of its figure, and
    heatmap cell numbers do not run together. Screenshots of each tab go to docs/screenshots/<tab>-<width>.png."""
    page = open_at(width)
    problems, checked = [], 0
    for key in tour.TABS:
        show_with_figures(page, key)
        tour.small_screenshot(page, SHOTS / f"{key}-{width}.png")
        for figure in tour.figure_texts(page):
            checked += 1
            problems += [f"{key} tab, {figure['id'] or figure['title']!r}: {p}" for p in tour.text_overlaps(figure)]
    assert checked >= sum(FIGURES.values()), f"only {checked} figures were drawn"
    assert not problems, f"{len(problems)} text problems at {width} px:\n" + "\n".join(problems[:40])


# The checks made on one demo pass per size (test_after_every_attention_demo_its_figure_is_in_view_with_its_
# explanation): with the page scrolled back to its top after the demo's heatmap is drawn, the caption and the
# heatmap's figure.
ABOVE_400_DEMOS = ["Reading backwards", "The causal mask", "Previous-token head", "Induction head",
                   "Who reads whom?", "Weights or what moves"]
PHONE_DEMO = "Reading backwards"


def _at_the_top(page) -> dict:
    """Scroll to the top; the boxes of the demo's caption and the heatmap's figure."""
    page.evaluate("() => window.scrollTo(0, 0)")
    return {"caption": page.locator("#demo-explain").bounding_box(),
            "heatmap": page.locator("#att-one").bounding_box()}


def _heatmap_starts_above_400(page, label: str) -> None:
    """Regression: after a demo click the heatmap's top was at y ~ 650 at 1280x800 (150 of its 450 px in view): the
    demo row, its caption and the GPT-2 note pushed it down. Now the figure (its 450 px) starts above y = 400, with
    the page at its top. (Was test_after_any_demo_click_the_heatmap_starts_above_400_px_on_a_projector, its own
    pass over the same demos at 1280.)"""
    top = _at_the_top(page)["heatmap"]["y"]
    assert top < 400, f"after {label!r} the heatmap starts at y = {top:.0f} px"
    if label == ABOVE_400_DEMOS[-1]:
        tour.small_screenshot(page, SHOTS / "demo-attention-1280.png")


_FIGURE_BOTTOM = """() => Math.max(...[...document.querySelectorAll(
    '#att-one .nsewdrag, #att-one .xtitle, #att-one .xtick text, #att-one .colorbar, #att-one .legend')]
    .map(e => e.getBoundingClientRect().bottom))"""


# demo -> what its own heatmap's title says (a stale heatmap of the previous view must not be measured) and whether
# it has a legend (the translation verse's gold links)
FOLD_DEMOS = {"Reading backwards": ("cross attention", False), "Who reads whom?": ("AER", True)}
_TITLE_HAS = "t => ((document.querySelector('#att-one .gtitle') || {}).textContent || '').includes(t)"


def _whole_heatmap_above_the_fold(page, label: str) -> None:
    """Regression (issue 29, item 14): after "Reading backwards" (a 3-line explanation) at 1280x800 the heatmap's
    x-axis title fell below the fold (its bottom at y = 812); after "Who reads whom?" the gold links'
    legend under the plot ended at y = 882. Now after each, with the page at its top, its cells, tick labels, x-axis
    title, colour bar and legend all end above y = 800 (measured 787 and 795: the legend sits beside the title).
    (Was test_after_a_demo_click_the_whole_heatmap_is_above_the_fold_on_a_projector, its own pass at 1280.)"""
    titled, legend = FOLD_DEMOS[label]
    page.wait_for_function(_TITLE_HAS, arg=titled)
    if legend:
        page.locator("#att-one .legend").first.wait_for()
    page.evaluate("() => window.scrollTo(0, 0)")
    bottom = page.evaluate(_FIGURE_BOTTOM)
    assert bottom <= SIZES[1280]["height"], f"after {label!r} the heatmap's lowest text ends at y = {bottom:.0f}"
    if label == "Who reads whom?":
        tour.small_screenshot(page, SHOTS / "first-screen-1280.png", full_page=False)  # the README's first screen


def _on_a_phone_the_heatmap_comes_right_after_the_caption(page, boxes: dict) -> None:
    """At 390x844 nothing but the tab bar sits between a demo's caption and the heatmap it opens (was ~400 px of
    input boxes and buttons: the heatmap started at y ~ 1047). (Was
    test_on_a_phone_the_heatmap_comes_right_after_the_demo_caption, its own click of "Reading backwards" at 390.)"""
    gap = boxes["heatmap"]["y"] - (boxes["caption"]["y"] + boxes["caption"]["height"])
    bar = page.locator(".tab-container[role=tablist]").first.bounding_box()["height"]
    assert gap < bar + 120, f"{gap:.0f} px between the caption and the heatmap (tab bar {bar:.0f} px)"
    tour.small_screenshot(page, SHOTS / "demo-attention-390.png")


_HINT = "() => getComputedStyle(document.querySelector('#demo-label p'), '::after').content"
_IN_VIEW = """() => [...document.querySelectorAll('#demo-row > button')].filter(b => {
    const r = b.getBoundingClientRect(); return r.left < window.innerWidth && r.right > 0; }).length"""


def _on_a_phone_the_demo_row_says_it_goes_on_sideways(page, boxes: dict) -> None:
    """Regression (issue 29, item 14): at 390x844 the demo row showed 1.5 of its 11 buttons in one line and hid the
    rest sideways with no hint. Now it shows two lines (at least 4 buttons in view), "swipe →" under "Demos" and a
    fading right edge where it goes on; its smaller explanation pays for the second line: after "Reading
    backwards" the heatmap starts at y = 648 (705 before). (Was test_on_a_phone_the_demo_row_says_it_goes_on_sideways,
    its own click of "Reading backwards" at 390.)"""
    page.evaluate("() => { document.querySelector('#demo-row').scrollLeft = 0; }")
    row = page.evaluate("() => { const r = document.querySelector('#demo-row'); return {scroll: r.scrollWidth, "
                        "width: r.clientWidth, "
                        "mask: getComputedStyle(r).webkitMaskImage || getComputedStyle(r).maskImage}; }")
    assert row["scroll"] > row["width"]  # it does go on sideways: so it must say so
    assert "swipe" in page.evaluate(_HINT) and "gradient" in row["mask"], row
    assert page.locator("#demo-label").bounding_box()["x"] >= 0
    assert page.evaluate(_IN_VIEW) >= 4
    assert boxes["heatmap"]["y"] < 690, f"the heatmap starts at y = {boxes['heatmap']['y']:.0f}"


# The drawn figure of id `id` (a demo's: the one-head heatmap, a patching demo's heads grid): its top and its lowest
# text, in the viewport, and its box's (to its caption's end); the demo's explanation; whether the demo's notes are
# pinned; and where the page is
_IN_VIEW_NOW = """(id) => {
    const texts = [...document.querySelectorAll(['.nsewdrag', '.xtitle', '.xtick text', '.colorbar', '.legend']
                                                .map(s => `#${id} ${s}`).join(', '))];
    const svg = document.querySelector(`#${id} .main-svg`);
    if (!svg || !texts.length) return null;
    const box = document.getElementById(id).getBoundingClientRect();
    const explain = document.getElementById('demo-explain').getBoundingClientRect();
    const notes = document.getElementById('demo-notes');
    const pinned = !!notes && getComputedStyle(notes).position === 'sticky';
    const said = document.getElementById(CAPTIONS[id] || '');  // its caption, brought into view with it
    const lowest = texts.reduce((a, e) => e.getBoundingClientRect().bottom > a.getBoundingClientRect().bottom ? e : a);
    return {top: svg.getBoundingClientRect().top, bottom: Math.max(...texts.map(e => e.getBoundingClientRect().bottom)),
            lowest: `${lowest.getAttribute('class')} '${lowest.textContent.slice(0, 40)}'`,
            svgBottom: svg.getBoundingClientRect().bottom,
            boxTop: box.top, boxBottom: said ? said.getBoundingClientRect().bottom : box.bottom,
            fold: window.innerHeight, scrolled: window.scrollY,
            explainTop: explain.top, explainBottom: explain.bottom, pinned,
            under: pinned ? notes.getBoundingClientRect().bottom : 0};
}""".replace("CAPTIONS", json.dumps(CAPTIONS))
# in view as the demo leaves it: whole, or its top at the viewport's top (under the pinned notes)
_SEEN = f"""id => {{ const m = ({_IN_VIEW_NOW})(id);
    return m && (m.bottom <= m.fold + 1 || Math.abs(m.top - m.under) <= 2); }}"""


# Whether the box of the element of id `id` and the page's scroll have held still for `ms` (polled: the time since
# they last changed is kept in the page)
_STILL = """([id, ms]) => {
    const f = document.getElementById(id);
    if (!f) return false;
    const b = f.getBoundingClientRect(), now = performance.now();
    const seen = `${b.top} ${b.height} ${window.scrollY}`, rest = window.__atRest || (window.__atRest = {});
    if (rest.seen !== seen) { rest.seen = seen; rest.since = now; }
    return now - rest.since >= ms;
}"""


def _at_rest(page, figure: str, ms: int = 1000) -> None:
    """Wait until the figure's box and the page's scroll have held still for `ms`: what is drawn after it (the DLA
    figure beside the heads grid) may still move it, and the page brings it back into view (it follows a drawn
    figure until nothing moved for limits.PAGE_WAITS["redraw_ms"], tabs.ask_first)."""
    page.evaluate("() => { window.__atRest = null; }")
    page.wait_for_function(_STILL, arg=[figure, ms], polling=100, timeout=30_000)


def _scrolled_into_view(page, demo, figure: str, width: int) -> None:
    """Once drawn, the figure the demo is about (`figure`) is in the viewport whole, or, taller than the room it has,
    starts at the top of that room (under the pinned notes on a projector); the page scrolled only as far as that
    needed (not at all when it fitted: the figure's box, to its caption's end, then meets the fold or the top of the
    room). On a projector the explanation is whole in view above the figure; on a phone, when the two (and the
    figure's caption) fit the screen together."""
    from visualize.style import PHONE_WIDTH

    try:
        page.wait_for_function(_SEEN, arg=figure, timeout=15_000)
        _at_rest(page, figure)  # the scroll and what is drawn after the figure have ended: measure where they left it
    except Exception:  # measured and said below
        pass
    m = page.evaluate(_IN_VIEW_NOW, figure)
    room = m["fold"] - m["under"]
    where = (f"after {demo.label!r} at {width} px: #{figure} at y {m['top']:.0f}-{m['bottom']:.0f} of "
             f"{m['fold']} (its lowest text: {m['lowest']}; its drawing ends at y {m['svgBottom']:.0f}), the "
             f"explanation at {m['explainTop']:.0f}-{m['explainBottom']:.0f}")
    if m["bottom"] - m["top"] > room:
        assert abs(m["top"] - m["under"]) <= 2, where
    else:
        assert m["top"] >= m["under"] - 1 and m["bottom"] <= m["fold"] + 1, where
    if width > PHONE_WIDTH:  # a projector: the class sees what to look for and the figure together
        assert m["explainTop"] >= 0 and m["explainBottom"] <= m["top"] + 1, where
    elif max(m["bottom"], m["boxBottom"]) - m["explainTop"] <= m["fold"] and not demo.text_b:  # with its caption
        assert m["explainTop"] >= 0, where
    MEASURED[f"demo figure in view at {width}: {demo.label}"] = (
        f"#{figure} y {m['top']:.0f}-{m['bottom']:.0f} of {m['fold']}, explanation y "
        f"{m['explainTop']:.0f}-{m['explainBottom']:.0f}, page scrolled {m['scrolled']:.0f} px")
    if m["scrolled"] > 0:  # only as far as needed
        assert abs(m["boxBottom"] - m["fold"]) <= 2 or abs(m["boxTop"] - m["under"]) <= 2, \
            f"{where}, scrolled {m['scrolled']}"



@pytest.mark.parametrize("width", SIZES)
def test_after_every_attention_demo_its_figure_is_in_view_with_its_explanation(open_at, width):
    """Regression (issue 29, item 14, and its leftovers 1 and 2): after a demo click, with the page at its top, the
    figure it opens was drawn below the fold: at 1280x800 its lowest text (cells, ticks, x-axis title, colour bar,
    legend) at y = 1289 (the causal mask), 945 (previous-token, induction), 869 (norms); on a phone it started at y
    653-758 of 844. Then the patching demos scrolled to the one-head heatmap while their question is about the heads
    grid drawn later (#patch-heads, 3,100 px further down), and a heatmap taller than the screen (the causal mask's
    41 rows, 958 px) had its top brought to the screen's top, its explanation scrolled out of view above it (y -114).

    Invariant, for every attention demo that runs here, clicked in turn on one page: once drawn, the figure the demo
    is about (Demo.figure: its question's) is in the viewport whole, or, taller than the room it has, starts at the
    top of that room; the page scrolled only as far as that needed (the one-head heatmap's caption comes with it:
    tests/browser/test_readable_texts.py). On a projector the demo's notes are pinned at
    the screen's top: the explanation is whole in view and the figure under it, not under the explanation (the
    causal mask's lowest rows are below the fold, the explanation above them as the teacher scrolls on). On a phone
    (390x844) the explanation is not pinned (its 6-12 lines, 126-260 px, would take up to a third of the screen):
    it is in view with the figure when both (and the heatmap's caption) fit the screen (nothing but the tab bar
    between them for a one-head heatmap); the patching grids lie 3,000 px under it, and a taller heatmap starts at the screen's top, its
    explanation one swipe up.

    The same pass, one click of each demo per size, also makes every assertion of four tests that clicked the same
    demos at the same size on passes of their own (merged to halve the suite's demo clicks; each check's docstring
    says which test it was): at 1280 the heatmap starts above y = 400 after each of ABOVE_400_DEMOS
    (_heatmap_starts_above_400) and ends above the fold after each of FOLD_DEMOS (_whole_heatmap_above_the_fold); at
    390 after PHONE_DEMO the heatmap comes right after the caption and the demo row says it goes on sideways; and at
    both sizes a heatmap of tokens or heads draws its cells no smaller than visualize.sizes.MIN_CELL_PX
    (test_demos_in_view.py's pass over the same demos, merged here: "Previous-token head" and "Induction head" drew
    15.8 px cells on a phone, "Weights or what moves" 15.4 px). After "Who carries a word?" the heads grid's box grew 60-66 px under the fold
    once brought into view (390 px: 2 runs in 6; 1280 px: in CI): the page now follows a drawn figure until the page
    around it is still (tabs.ask_first), and the figure is measured where the page came to rest."""
    from tabs.demos import available_demos, runs
    from visualize.sizes import MIN_CELL_PX

    page = open_at(width)
    clicked = []
    for demo in [d for d in available_demos() if d.kind and runs(d)]:
        figure = "patch-heads" if demo.text_b else "att-one"  # a patching demo is about the heads patched alone
        assert demo.question is None or demo.question.figure == figure, demo.label
        page.evaluate("() => window.scrollTo(0, 0)")  # a class looks at the demo row
        tour.click_demo(page, demo.label)
        page.locator("#demo-explain", has_text=demo.label).wait_for()
        if demo.text_b:  # the heads grid of this pair (the previous demo's may still be on the page)
            page.wait_for_function("t => ((document.querySelector('#patch-heads .gtitle') || {}).textContent || '')"
                                   ".includes(t)", arg=f"{demo.kind} heads patched", timeout=300_000)
        page.locator(f"#{figure} .nsewdrag").first.wait_for()
        _scrolled_into_view(page, demo, figure, width)
        clicked.append(demo.label)
        if figure in TOKEN_HEATMAPS:
            cell = page.evaluate(PLACE, figure)["cell"] or 0
            assert cell >= MIN_CELL_PX - 0.01, f"after {demo.label!r} at {width} px: #{figure}'s cells {cell:.1f} px"
        if width == 1280 and demo.label in ABOVE_400_DEMOS:
            _heatmap_starts_above_400(page, demo.label)
        if width == 1280 and demo.label in FOLD_DEMOS:
            _whole_heatmap_above_the_fold(page, demo.label)
        if width == 390 and demo.label == PHONE_DEMO:
            boxes = _at_the_top(page)
            _on_a_phone_the_heatmap_comes_right_after_the_caption(page, boxes)
            _on_a_phone_the_demo_row_says_it_goes_on_sideways(page, boxes)
    merged = {1280: ABOVE_400_DEMOS + list(FOLD_DEMOS), 390: [PHONE_DEMO]}[width]
    assert set(merged) <= set(clicked), f"the merged checks' demos {merged} were not all clicked: {clicked}"


# For each box: whether something inside it scrolls sideways (wider inside than shown), and its "swipe →" hint
_SIDEWAYS = """sels => sels.map(sel => {
    const box = document.querySelector(sel);
    const scroller = [box, ...box.querySelectorAll('*')].find(n => n.scrollWidth > n.clientWidth + 1
        && ['auto', 'scroll'].includes(getComputedStyle(n).overflowX));
    const hint = sel === '#demo-row' ? getComputedStyle(document.querySelector('#demo-label p'), '::after').content
                                     : getComputedStyle(box, '::after').content;
    return {sel, scrolls: !!scroller, by: scroller ? scroller.className : '', hint: hint.includes('swipe')};
})"""
_SIDEWAYS_BOXES = ["#demo-row", "#two-a", "#two-b", "#train-compare-table"]


@pytest.mark.parametrize("width", SIZES)
def test_what_scrolls_sideways_says_so(open_at, width):
    """Regression (issue 29, items 2 and 10): at 390 px the two inputs' maps and the Train tab's comparison table
    scrolled sideways (2.5 of the table's 8 columns shown) with nothing saying so; only the demo row said "swipe →".
    Invariant, on the page itself: each of these boxes shows the hint exactly when something in it scrolls sideways
    (at 390 all of them do; at 1280 none does, and none says so)."""
    page = open_at(width)
    tour.click_demo(page, "Previous-token head")  # 24 tokens, against a changed copy
    page.locator("#demo-explain", has_text="Previous-token head").wait_for()
    page.locator("#att-one .nsewdrag").first.wait_for()
    if not page.locator("#two-text textarea").is_visible():
        page.locator("#att-two-section").get_by_text("Two inputs side by side").click()
    page.locator("#two-text textarea").fill("kqwzjxtbhmfakqwzjxtbhmfb")
    page.locator("#two-compare").click()
    page.wait_for_function("() => document.querySelectorAll('#two-b .xtick').length >= 24")  # B's map drawn
    tour.show_tab(page, "train")
    page.wait_for_timeout(300)  # the page marks what scrolls once a frame at most
    found = page.evaluate(_SIDEWAYS, _SIDEWAYS_BOXES)
    MEASURED[f"sideways at {width}"] = ", ".join(f"{f['sel']} {'scrolls' if f['scrolls'] else 'fits'}"
                                                 f"{' (hint)' if f['hint'] else ''}" for f in found)
    assert all(f["hint"] == f["scrolls"] for f in found), found
    assert all(f["scrolls"] == (width == 390) for f in found), found
