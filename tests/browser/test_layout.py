"""Readable on a projector (1280x800) and on a phone (390x844): the real app in Debian's chromium, offline.

At both sizes every tab is visited, its figures drawn with what a visitor would see first (the Generate tab after
one generation, the Train tab after a short training run), and a screenshot saved to
docs/screenshots/<tab>-<width>.png. On every figure no two pieces of text (titles, axis titles, tick labels,
colour-bar titles and ticks, legends, annotations, bar labels) may overlap, no text may be cut off at the figure's
edge, and the numbers written in heatmap cells may not run together: measured on the boxes of plotly's rendered SVG
text, as the browser lays them out. On the phone every tab button must be on the screen (none hidden behind
Gradio's "..." overflow menu); on the projector the one-head heatmap must start above the fold.

Every attention demo is clicked once per size (the `walked` fixture, tests/browser/demo_walk.py), and each test about
what a demo opens reads what that walk saw at the demo's stop: where its figure came to rest, its cells, its labels
(test_fit_the_screen.py's checks of the demos' figures live here for that reason: one walk, not one per file).
"""
from __future__ import annotations

import pytest

from tests.browser import demo_walk, figure_checks, tour
from tests.browser.demo_walk import ABOVE_400_DEMOS, FOLD_DEMOS, PHONE_DEMO

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


@pytest.fixture(scope="module")
def walked(open_at):
    """walked(width): what one walk over every attention demo at that size saw (tests/browser/demo_walk.py: each demo
    clicked once on the module's page of that size, every look of the tests below made at its stop), walked once."""
    done = {}

    def walk(width: int) -> dict[str, demo_walk.Stop]:
        if width not in done:
            done[width] = demo_walk.walk(open_at(width), width)
        return done[width]
    return walk


def _in_view_problems(m: dict, label: str, width: int) -> list[str]:
    """What is wrong with where a demo's figure came to rest (demo_walk.in_view), as the test below states it."""
    from visualize.style import PHONE_WIDTH

    problems, room = [], m["fold"] - m["under"]
    where = (f"after {label!r} at {width} px: #{m['figure']} at y {m['top']:.0f}-{m['bottom']:.0f} of "
             f"{m['fold']} (its lowest text: {m['lowest']}; its drawing ends at y {m['svgBottom']:.0f}), the "
             f"explanation at {m['explainTop']:.0f}-{m['explainBottom']:.0f}")
    if m["bottom"] - m["top"] > room:
        problems += [where] if abs(m["top"] - m["under"]) > 2 else []
    elif not (m["top"] >= m["under"] - 1 and m["bottom"] <= m["fold"] + 1):
        problems.append(where)
    if width > PHONE_WIDTH:  # a projector: the class sees what to look for and the figure together
        problems += [f"{where}: the explanation"] if not (m["explainTop"] >= 0
                                                           and m["explainBottom"] <= m["top"] + 1) else []
    elif max(m["bottom"], m["boxBottom"]) - m["explainTop"] <= m["fold"] and not m["text_b"]:  # with its caption
        problems += [f"{where}: the explanation"] if m["explainTop"] < 0 else []
    if m["scrolled"] > 0 and not (abs(m["boxBottom"] - m["fold"]) <= 2 or abs(m["boxTop"] - m["under"]) <= 2):
        problems.append(f"{where}, scrolled {m['scrolled']} (further than needed)")
    return problems


@pytest.mark.parametrize("width", SIZES)
def test_after_every_attention_demo_its_figure_is_in_view_with_its_explanation(walked, width):
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
    between them for a one-head heatmap); the patching grids lie 3,000 px under it, and a taller heatmap starts at the
    screen's top, its explanation one swipe up. After "Who carries a word?" the heads grid's box grew 60-66 px under
    the fold once brought into view (390 px: 2 runs in 6; 1280 px: in CI): the page now follows a drawn figure until
    the page around it is still (tabs.ask_first), and the figure is measured where the page came to rest."""
    stops = walked(width)
    problems = []
    for demo in demo_walk.attention_demos():
        assert demo.question is None or demo.question.figure == demo_walk.figure_of(demo), demo.label
        problems += _in_view_problems(stops[demo.label]["in_view"], demo.label, width)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("width", SIZES)
def test_a_demos_token_heatmap_keeps_readable_cells(walked, width):
    """At both sizes a heatmap of tokens or heads a demo opens draws its cells no smaller than
    visualize.sizes.MIN_CELL_PX, as plotly lays them out (was test_demos_in_view.py's pass over the same demos:
    "Previous-token head" and "Induction head" drew 15.8 px cells on a phone, "Weights or what moves" 15.4 px)."""
    from visualize.sizes import MIN_CELL_PX

    stops, small = walked(width), []
    for demo in demo_walk.attention_demos():
        if demo_walk.figure_of(demo) in tour.TOKEN_HEATMAPS:
            cell = stops[demo.label]["cell"]
            small += [f"after {demo.label!r}: cells of {cell:.1f} px"] if cell < MIN_CELL_PX - 0.01 else []
    assert not small, f"at {width} px: {small}"


def test_after_any_demo_click_the_heatmap_starts_above_400_px_on_a_projector(walked):
    """Regression: after a demo click the heatmap's top was at y ~ 650 at 1280x800 (150 of its 450 px in view): the
    demo row, its caption and the GPT-2 note pushed it down. Now the figure (its 450 px) starts above y = 400, with
    the page at its top, after each of ABOVE_400_DEMOS."""
    stops = walked(1280)
    tops = {label: stops[label]["above_400"] for label in ABOVE_400_DEMOS}
    assert all(top < 400 for top in tops.values()), f"the heatmap starts at y = {tops}"


def test_after_a_demo_click_the_whole_heatmap_is_above_the_fold_on_a_projector(walked):
    """Regression (issue 29, item 14): after "Reading backwards" (a 3-line explanation) at 1280x800 the heatmap's
    x-axis title fell below the fold (its bottom at y = 812); after "Who reads whom?" the gold links' legend under the
    plot ended at y = 882. Now after each, with the page at its top, its cells, tick labels, x-axis title, colour bar
    and legend all end above y = 800 (measured 787 and 795: the legend sits beside the title)."""
    stops = walked(1280)
    bottoms = {label: stops[label]["fold"] for label in FOLD_DEMOS}
    assert all(b <= SIZES[1280]["height"] for b in bottoms.values()), f"the heatmap's lowest text ends at y {bottoms}"


def test_on_a_phone_the_heatmap_comes_right_after_the_demo_caption(walked):
    """At 390x844 nothing but the tab bar sits between a demo's caption and the heatmap it opens (was ~400 px of
    input boxes and buttons: the heatmap started at y ~ 1047), after PHONE_DEMO with the page at its top."""
    seen = walked(390)[PHONE_DEMO]["phone"]
    gap = seen["heatmap"]["y"] - (seen["caption"]["y"] + seen["caption"]["height"])
    assert gap < seen["bar"] + 120, f"{gap:.0f} px between the caption and the heatmap (tab bar {seen['bar']:.0f} px)"


def test_on_a_phone_the_demo_row_says_it_goes_on_sideways(walked):
    """Regression (issue 29, item 14): at 390x844 the demo row showed 1.5 of its 11 buttons in one line and hid the
    rest sideways with no hint. Now it shows two lines (at least 4 buttons in view), "swipe →" under "Demos" and a
    fading right edge where it goes on; its smaller explanation pays for the second line: after "Reading
    backwards" the heatmap starts at y = 648 (705 before)."""
    seen = walked(390)[PHONE_DEMO]["phone"]
    assert seen["row"]["scroll"] > seen["row"]["width"]  # it does go on sideways: so it must say so
    assert "swipe" in seen["hint"] and "gradient" in seen["row"]["mask"], seen
    assert seen["label_x"] >= 0 and seen["buttons_in_view"] >= 4, seen
    assert seen["heatmap"]["y"] < 690, f"the heatmap starts at y = {seen['heatmap']['y']:.0f}"


@pytest.mark.parametrize("width", SIZES)
def test_what_scrolls_sideways_says_so(walked, width):
    """Regression (issue 29, items 2 and 10): at 390 px the two inputs' maps and the Train tab's comparison table
    scrolled sideways (2.5 of the table's 8 columns shown) with nothing saying so; only the demo row said "swipe →".
    Invariant, on the page itself (after "Previous-token head", its 24 tokens against a changed copy, the Train tab
    shown): each of these boxes shows the hint exactly when something in it scrolls sideways (at 390 all of them do;
    at 1280 none does, and none says so)."""
    found = walked(width)["Previous-token head"]["two"]["sideways"]
    assert all(f["hint"] == f["scrolls"] for f in found), found
    assert all(f["scrolls"] == (width == 390) for f in found), found


# --- test_fit_the_screen's checks of the demos' figures, made on the same walk ----------------------------------


@pytest.mark.parametrize("width", SIZES)
def test_every_token_of_a_24_token_input_is_labelled_without_overlap(walked, width):
    """Regression: at 24 tokens (the induction demo's input) the heatmap labelled every other token. Now every
    query and every key has its label, at 1280 and 390 px, and no two texts of the figure overlap."""
    from tabs.attention.record import _shipped_record
    from tabs.demo_list import REPEATED
    from visualize import axis_labels

    seen = walked(width)["Induction head"]["ticks"]
    tokens = axis_labels(_shipped_record("induction", REPEATED, "").patterns["decoder self"].key_tokens)
    assert len(tokens) >= 24
    assert seen["ticks"]["x"] == tokens and seen["ticks"]["y"] == tokens, seen["ticks"]
    assert not seen["problems"], "\n".join(seen["problems"][:20])


def test_a_phone_shows_the_heads_of_a_layer_two_by_two(walked):
    """Regression: at 390x844 the grid of a layer's four heads gave each ~35 px. Now two heads a row, each at least
    MIN_HEAD_PX wide, with their labels not overlapping; at 1280x800 the grid keeps its four heads a row."""
    from tests.browser.conftest import MEASURED
    from tests.browser.figure_checks import MIN_HEAD_PX

    widths = {}
    for width in SIZES:
        seen = walked(width)["Reading backwards"]["grid"]
        widths[width] = x = seen["x"]
        assert len(x) == 4 and len({offset for offset, _ in x}) == (4 if width == 1280 else 2), (width, x)
        assert not seen["problems"], "\n".join(seen["problems"][:20])
    narrowest = min(length for _, length in widths[390])
    MEASURED["grid head width at 390 px"] = f"{narrowest:.0f} px (at 1280: {min(l for _, l in widths[1280]):.0f})"
    assert narrowest >= MIN_HEAD_PX, f"a head of the grid is {narrowest:.0f} px wide at 390 px"


@pytest.mark.parametrize("width", SIZES)
def test_the_logit_lens_writes_every_token_readably(walked, width):
    """Regression (issue 29, item 1): on the causal-mask demo's 41 positions the lens wrote no token (colours only),
    and on a phone its 14-41 columns shared ~100 px. Now each of the 7 x 41 cells writes its top token in at least
    MIN_LABEL_PX, on cells of at least MIN_CELL_PX (turned on a phone: positions down), every position labelled,
    no two texts overlapping."""
    lens = walked(width)["The causal mask"]["lens"]
    figure_checks.readable(lens, f"lens at {width}")
    assert lens["cells"] == 7 * 41, lens
    assert max(lens["xticks"], lens["yticks"]) == 41, "every position labelled"
    assert not lens["problems"], "\n".join(lens["problems"][:20])


@pytest.mark.parametrize("width", SIZES)
def test_heatmaps_keep_readable_cells_and_scroll_sideways(walked, width):
    """Regression (issue 29, item 2): heatmaps shrank their cells to fit the width (41 columns in ~170 px on a phone,
    the translation's 12 in ~100 px with 11 px labels running into each other and gold circles larger than the
    cells). Now the one-head heatmap keeps cells of at least MIN_CELL_PX and labels of at least MIN_LABEL_PX, a
    figure that cannot fit its box scrolls sideways in it, the colour bar stays out of the plot, and no gold circle
    is wider than its cell (the causal mask's 41 tokens; the translation verse of "Who reads whom?")."""
    stops = walked(width)
    mask = stops["The causal mask"]["mask"]
    figure_checks.readable(mask, f"causal mask at {width}")
    assert mask["xticks"] == 41 and mask["yticks"] == 41, "every token labelled"
    assert mask["scrolls"] == (mask["width"] > mask["box"]), mask
    if width == 1280:  # issue 38, item 3: it was 732 px in its 720 px box (the right margin's padding past it)
        assert not mask["scrolls"] and mask["width"] <= mask["box"], mask
    assert not mask["problems"], "\n".join(mask["problems"][:20])
    gold = stops["Who reads whom?"]["gold"]
    figure_checks.readable(gold, f"translation at {width}")
    assert gold["xticks"] == 12 and gold["circles"], gold
    assert max(gold["circles"]) <= min(gold["column"], gold["row"]), ("a gold circle is wider than its cell", gold)
    assert not gold["problems"], "\n".join(gold["problems"][:20])


@pytest.mark.parametrize("width", SIZES)
def test_the_two_inputs_maps_keep_readable_cells(walked, width):
    """Issue 29, item 2, on the two-inputs maps: the induction demo's 24 tokens against a changed copy, each map
    with cells of at least MIN_CELL_PX and every token labelled in at least MIN_LABEL_PX (they were drawn at
    plotly's thinning, every other label), side by side on a projector, one under the other on a phone."""
    two = walked(width)["Previous-token head"]["two"]
    for sel in ("#two-a", "#two-b"):
        figure_checks.readable(two[sel], f"{sel} at {width}")
        assert two[sel]["xticks"] == 24 and two[sel]["yticks"] == 24, two[sel]
        assert not two[sel]["problems"], "\n".join(two[sel]["problems"][:20])


@pytest.mark.parametrize("width", SIZES)
def test_the_patching_grids_keep_readable_cells(walked, width):
    """Issue 27 on this screen: after "Which heads copy?" every figure of "What a head does" (residual
    stream, heads, direct logit attribution, the open head's paths) keeps cells of at least MIN_CELL_PX, labels and
    written values of at least MIN_LABEL_PX, its colour bar out of the plot, and no two texts overlapping; the
    39-position residual grid scrolls sideways where it does not fit."""
    grids = walked(width)["Which heads copy?"]["patching"]
    for sel in demo_walk.PATCHING:
        figure_checks.readable(grids[sel], f"{sel} at {width}")
        assert grids[sel]["scrolls"] == (grids[sel]["width"] > grids[sel]["box"]), grids[sel]
        assert not grids[sel]["problems"], "\n".join(grids[sel]["problems"][:20])


@pytest.mark.parametrize("width", SIZES)
def test_the_norms_colour_bar_names_the_norms_and_is_seen_whole(walked, width):
    """Regression (issue 29, item 12, its demo): after "Weights or what moves" the colour bar said "weight" over the
    value-weighted norms' shares. Now it says "norms", and its bar keeps at least 60 px (its 0, 0.5 and 1 apart) and
    lies whole inside what the page shows of the figure (a longer title, "share of norms", took the phone's flat
    bar's whole 160 px: 0 px of scale, measured at 390), no two texts overlapping."""
    bar = walked(width)["Weights or what moves"]["norms"]
    assert bar["title"] == "norms", bar
    assert bar["length"] >= 60 and bar["left"] <= bar["x0"] and bar["x1"] <= bar["right"], bar
    assert not bar["problems"], "\n".join(bar["problems"][:20])
