"""One walk over every attention demo at one screen size, on one page: each demo clicked once, and at each stop every
measurement the layout tests make of that demo (tests/browser/test_layout.py asserts on them). A demo click costs a
server computation and a redraw (4-10 s under load); the tests that clicked the same demos on passes of their own
(test_layout's in-view, above-400, fold and phone checks, test_fit_the_screen's readable cells, labels and grids)
now read what this one walk saw. Like tests/browser/tour's functions, the walk returns what it saw: per demo a
`Stop`, each look's observation by name, or the error that stopped that look (the walk goes on to the next)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from tests.browser import figure_checks, tour
from tests.browser.conftest import MEASURED
from tests.browser.tour import PLACE, SHOTS, SIZES, TOKEN_HEATMAPS

# at 1280 the heatmap starts above y = 400 after each of these; after each of FOLD_DEMOS it ends above the fold
ABOVE_400_DEMOS = ["Reading backwards", "The causal mask", "Previous-token head", "Induction head",
                   "Who reads whom?", "Weights or what moves"]
# demo -> what its own heatmap's title says (a stale heatmap of the previous view must not be measured) and whether
# it has a legend (the translation verse's gold links)
FOLD_DEMOS = {"Reading backwards": ("cross attention", False), "Who reads whom?": ("AER", True)}
PHONE_DEMO = "Reading backwards"
TWO_B = "kqwzjxtbhmfakqwzjxtbhmfb"  # the second input of the two-inputs maps: 24 tokens, a changed copy

_TITLE_HAS = "t => ((document.querySelector('#att-one .gtitle') || {}).textContent || '').includes(t)"
_FIGURE_BOTTOM = """() => Math.max(...[...document.querySelectorAll(
    '#att-one .nsewdrag, #att-one .xtitle, #att-one .xtick text, #att-one .colorbar, #att-one .legend')]
    .map(e => e.getBoundingClientRect().bottom))"""
_HINT = "() => getComputedStyle(document.querySelector('#demo-label p'), '::after').content"
_ROW_IN_VIEW = """() => [...document.querySelectorAll('#demo-row > button')].filter(b => {
    const r = b.getBoundingClientRect(); return r.left < window.innerWidth && r.right > 0; }).length"""
_ROW = """() => { const r = document.querySelector('#demo-row'); return {scroll: r.scrollWidth, width: r.clientWidth,
    mask: getComputedStyle(r).webkitMaskImage || getComputedStyle(r).maskImage}; }"""


def _in_view_now() -> str:
    """JS: the drawn figure of id `id` (a demo's: the one-head heatmap, a patching demo's heads grid): its top and its
    lowest text, in the viewport, and its box's (to its caption's end); the demo's explanation; whether the demo's
    notes are pinned; and where the page is."""
    from tabs.ask_first import CAPTIONS

    return """(id) => {
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
# For each box: whether something inside it scrolls sideways (wider inside than shown), and its "swipe →" hint
_SIDEWAYS = """sels => sels.map(sel => {
    const box = document.querySelector(sel);
    const scroller = [box, ...box.querySelectorAll('*')].find(n => n.scrollWidth > n.clientWidth + 1
        && ['auto', 'scroll'].includes(getComputedStyle(n).overflowX));
    const hint = sel === '#demo-row' ? getComputedStyle(document.querySelector('#demo-label p'), '::after').content
                                     : getComputedStyle(box, '::after').content;
    return {sel, scrolls: !!scroller, by: scroller ? scroller.className : '', hint: hint.includes('swipe')};
})"""
SIDEWAYS_BOXES = ["#demo-row", "#two-a", "#two-b", "#train-compare-table"]


@dataclass
class Stop:
    """What the walk saw at one demo: each look's observation by name, or why the look could not be made."""

    label: str
    seen: dict = field(default_factory=dict)
    failed: dict = field(default_factory=dict)

    def look(self, name: str, measure, *args) -> None:
        try:
            self.seen[name] = measure(*args)
        except Exception as error:  # said by the test that reads this look
            self.failed[name] = f"{type(error).__name__}: {error}"

    def __getitem__(self, name: str):
        """The observation `name`; an AssertionError saying why when it could not be made."""
        why = self.failed.get(name) or self.failed.get("clicked")
        if why or name not in self.seen:
            raise AssertionError(f"after {self.label!r}: {name} was not measured: {why or 'no such look here'}")
        return self.seen[name]


def attention_demos() -> list:
    """The demos the walk clicks: every attention demo that runs here."""
    from tabs.demos import available_demos, runs

    return [d for d in available_demos() if d.kind and runs(d)]


def figure_of(demo) -> str:
    """The figure an attention demo is about: a patching demo's heads patched alone, or the one-head heatmap."""
    return "patch-heads" if demo.text_b else "att-one"


def walk(page, width: int) -> dict[str, Stop]:
    """Click each attention demo in turn, the page scrolled to its top first (a class looks at the demo row), and make
    at each stop the looks that belong to it at this width."""
    stops = {}
    for demo in attention_demos():
        stop = stops[demo.label] = Stop(demo.label)
        stop.look("clicked", _click, page, demo)
        if "clicked" in stop.failed:
            continue
        figure = figure_of(demo)
        stop.look("in_view", in_view, page, demo, figure, width)
        if figure in TOKEN_HEATMAPS:
            stop.look("cell", lambda: page.evaluate(PLACE, figure)["cell"] or 0)
        for name, measure in _looks(width, demo.label):
            stop.look(name, measure, page, width)
    return stops


def _click(page, demo) -> None:
    page.evaluate("() => window.scrollTo(0, 0)")
    tour.click_demo(page, demo.label)
    page.locator("#demo-explain", has_text=demo.label).wait_for()
    if demo.text_b:  # the heads grid of this pair (the previous demo's may still be on the page)
        page.wait_for_function("t => ((document.querySelector('#patch-heads .gtitle') || {}).textContent || '')"
                               ".includes(t)", arg=f"{demo.kind} heads patched", timeout=300_000)
    page.locator(f"#{figure_of(demo)} .nsewdrag").first.wait_for()


def _looks(width: int, label: str):
    """(name, measure(page, width)) of each look made after the demo `label` at this width, in order."""
    if width == 1280 and label in ABOVE_400_DEMOS:
        yield "above_400", heatmap_top
    if width == 1280 and label in FOLD_DEMOS:
        yield "fold", figure_bottom
    if width == 390 and label == PHONE_DEMO:
        yield "phone", phone_row
    yield from FIT_LOOKS.get(label, ())


# --- the in-view, above-400, fold and phone looks --------------------------------------------------------------


def at_rest(page, figure: str, ms: int = 1000) -> None:
    """Wait until the figure's box and the page's scroll have held still for `ms`: what is drawn after it (the DLA
    figure beside the heads grid) may still move it, and the page brings it back into view (it follows a drawn
    figure until nothing moved for limits.PAGE_WAITS["redraw_ms"], tabs.ask_first)."""
    page.evaluate("() => { window.__atRest = null; }")
    page.wait_for_function(_STILL, arg=[figure, ms], polling=100, timeout=30_000)


def in_view(page, demo, figure: str, width: int) -> dict:
    """Where the figure the demo is about lies once drawn and the page has come to rest (_in_view_now), with
    whether the demo compares two inputs."""
    measure = _in_view_now()
    seen = f"""id => {{ const m = ({measure})(id);
        return m && (m.bottom <= m.fold + 1 || Math.abs(m.top - m.under) <= 2); }}"""  # whole, or its top at the top
    try:
        page.wait_for_function(seen, arg=figure, timeout=15_000)
        at_rest(page, figure)  # the scroll and what is drawn after the figure have ended: measure where they left it
    except Exception:  # measured and said by the test
        pass
    m = page.evaluate(measure, figure)
    MEASURED[f"demo figure in view at {width}: {demo.label}"] = (
        f"#{figure} y {m['top']:.0f}-{m['bottom']:.0f} of {m['fold']}, explanation y "
        f"{m['explainTop']:.0f}-{m['explainBottom']:.0f}, page scrolled {m['scrolled']:.0f} px")
    return {**m, "figure": figure, "text_b": bool(demo.text_b)}


def _at_the_top(page) -> dict:
    """Scroll to the top; the boxes of the demo's caption and the heatmap's figure."""
    page.evaluate("() => window.scrollTo(0, 0)")
    return {"caption": page.locator("#demo-explain").bounding_box(),
            "heatmap": page.locator("#att-one").bounding_box()}


def heatmap_top(page, width: int) -> float:
    """Where the heatmap's figure starts with the page at its top."""
    top = _at_the_top(page)["heatmap"]["y"]
    if page.locator("#demo-explain", has_text=ABOVE_400_DEMOS[-1]).count():
        tour.small_screenshot(page, SHOTS / "demo-attention-1280.png")
    return top


def figure_bottom(page, width: int) -> float:
    """Where the heatmap's lowest text (cells, tick labels, x-axis title, colour bar, legend) ends with the page at
    its top, once the demo's own heatmap is drawn."""
    label = next(d for d in FOLD_DEMOS if page.locator("#demo-explain", has_text=d).count())
    titled, legend = FOLD_DEMOS[label]
    page.wait_for_function(_TITLE_HAS, arg=titled)
    if legend:
        page.locator("#att-one .legend").first.wait_for()
    page.evaluate("() => window.scrollTo(0, 0)")
    bottom = page.evaluate(_FIGURE_BOTTOM)
    if label == "Who reads whom?":
        tour.small_screenshot(page, SHOTS / "first-screen-1280.png", full_page=False)  # the README's first screen
    return bottom


def phone_row(page, width: int) -> dict:
    """On a phone, with the page at its top: the caption's and the heatmap's boxes, the tab bar's height, and the demo
    row scrolled to its start (its widths, its mask, the hint under "Demos", its label's left, buttons in view)."""
    boxes = _at_the_top(page)
    bar = page.locator(".tab-container[role=tablist]").first.bounding_box()["height"]
    tour.small_screenshot(page, SHOTS / "demo-attention-390.png")
    page.evaluate("() => { document.querySelector('#demo-row').scrollLeft = 0; }")
    return {**boxes, "bar": bar, "row": page.evaluate(_ROW), "hint": page.evaluate(_HINT),
            "label_x": page.locator("#demo-label").bounding_box()["x"], "buttons_in_view": page.evaluate(_ROW_IN_VIEW)}


# --- test_fit_the_screen's looks: readable cells, labels and grids ---------------------------------------------


def _open(page, section: str, header: str, shown: str) -> None:
    """Open the section (once: a second click would close it) unless what it shows is on the page already."""
    if not page.locator(shown).first.is_visible():
        page.locator(section).get_by_text(header).click()


def induction_ticks(page, width: int) -> dict:
    """The induction demo's heatmap: its tick labels and its texts' problems."""
    figure_checks.wait_title(page, "decoder self attention, layer 1, head \\d")
    tour.plots_drawn(page)
    tour.figure_at_rest(page, "#att-one")  # plotly's automargin may redraw once more
    return {"ticks": page.evaluate(figure_checks.TICKS),
            "problems": figure_checks.overlaps(page, "#att-one", f"fit-ticks-{width}.png")}


def heads_grid(page, width: int) -> dict:
    """The layer's grid of heads after "Reading backwards": its x axes (offset, length) and its texts' problems."""
    figure_checks.wait_title(page, "cross attention, layer \\d, head \\d")
    page.locator("#att-grid .heatmaplayer").first.wait_for()
    page.locator("#att-grid").scroll_into_view_if_needed()
    tour.plots_drawn(page)
    tour.figure_at_rest(page, "#att-grid")
    axes = page.evaluate(figure_checks.AXES, "#att-grid")
    return {"x": sorted((a["offset"], a["length"]) for n, a in axes.items() if n.startswith("x")),
            "problems": figure_checks.overlaps(page, "#att-grid", f"fit-grid-{width}.png")}


def causal_mask(page, width: int) -> dict:
    """The causal mask's heatmap of its 41 tokens: its cells (figure_checks.cells) and its texts' problems."""
    figure_checks.wait_title(page, "decoder self attention, layer \\d, head \\d")
    page.wait_for_function("() => document.querySelectorAll('#att-one .xtick text').length === 41")  # the demo's
    return {**figure_checks.cells(page, "#att-one"),
            "problems": figure_checks.overlaps(page, "#att-one", f"fit-mask-{width}.png")}


def logit_lens(page, width: int) -> dict:
    """The logit lens of the causal mask's 41 positions (its section opened): its cells and its texts' problems."""
    _open(page, "#att-lens-section", "Logit lens: what each layer would predict", "#lens-grid .js-plotly-plot")
    page.wait_for_function("() => Math.max(...['.xtick', '.ytick'].map(t => document.querySelectorAll("
                           "`#lens-grid ${t} text`).length)) === 41")  # this demo's lens, not the one before
    found = figure_checks.cells(page, "#lens-grid")
    figure_checks.measured(f"logit lens cells at {width} px", found)
    return {**found, "problems": figure_checks.overlaps(page, "#lens-grid", f"fit-lens-{width}.png")}


def gold_links(page, width: int) -> dict:
    """The translation verse in words with its gold links: its cells, circles and texts' problems."""
    figure_checks.wait_title(page, "cross attention in words, layer \\d, head \\d")
    found = figure_checks.cells(page, "#att-one")
    figure_checks.measured(f"translation heatmap cells at {width} px", found)
    return {**found, "problems": figure_checks.overlaps(page, "#att-one", f"fit-gold-{width}.png")}


def two_inputs(page, width: int) -> dict:
    """The previous-token demo's 24 tokens against TWO_B: each map's cells and texts' problems; then, the Train tab
    shown, which boxes scroll sideways and which say so (_SIDEWAYS)."""
    figure_checks.wait_title(page, "decoder self attention, layer 0, head \\d")
    _open(page, "#att-two-section", "Two inputs side by side", "#two-text textarea")
    page.locator("#two-text input, #two-text textarea").first.fill(TWO_B)
    page.locator("#two-compare").click()
    page.wait_for_function("() => ['a', 'b'].every(m => document.querySelectorAll(`#two-${m} .xtick`).length >= 24)")
    maps = {sel: {**figure_checks.cells(page, sel),
                  "problems": figure_checks.overlaps(page, sel, f"fit-two-{sel[1:]}-{width}.png")}
            for sel in ("#two-a", "#two-b")}
    tour.show_tab(page, "train")
    page.wait_for_timeout(300)  # the page marks what scrolls once a frame at most
    maps["sideways"] = page.evaluate(_SIDEWAYS, SIDEWAYS_BOXES)
    MEASURED[f"sideways at {width}"] = ", ".join(f"{f['sel']} {'scrolls' if f['scrolls'] else 'fits'}"
                                                 f"{' (hint)' if f['hint'] else ''}" for f in maps["sideways"])
    return maps


PATCHING = ("#patch-residual", "#patch-heads", "#patch-dla", "#patch-from")


def patching_grids(page, width: int) -> dict:
    """Every figure of "What a head does" after "Which heads copy?": its cells and texts' problems."""
    page.wait_for_function("() => ((document.querySelector('#patch-from .gtitle') || {}).textContent || '')"
                           ".includes('into later heads')", timeout=300_000)
    grids = {}
    for sel in PATCHING:
        found = grids[sel] = figure_checks.cells(page, sel)
        figure_checks.measured(f"patching {sel[1:]} cells at {width} px", found)
        found["problems"] = figure_checks.overlaps(page, sel, f"fit-{sel[1:]}-{width}.png")
    page.locator("#att-patch-section").screenshot(path=str(figure_checks.SHOTS / f"patch-section-{width}.png"))
    return grids


# JS: the one-head heatmap's colour bar: its title, the bar's left and right edges and length (flat on a phone,
# upright beside a projector's plot), and the visible left and right edges of the figure's box
_BAR = """() => {
    const gd = document.querySelector('#att-one .js-plotly-plot');
    const fill = gd.querySelector('.colorbar .cbfill').getBoundingClientRect(), seen = gd.getBoundingClientRect();
    return {title: gd.querySelector('.colorbar .cbtitle').textContent, x0: fill.left, x1: fill.right,
            length: Math.max(fill.width, fill.height), left: seen.left, right: seen.right};
}"""


def norms_bar(page, width: int) -> dict:
    """The value-weighted norms' colour bar (the figure scrolled to its left) and the figure's texts' problems."""
    figure_checks.wait_title(page, "value-weighted norms, layer \\d, head \\d")
    figure_checks.cells(page, "#att-one")
    page.evaluate("() => { document.querySelector('#att-one .js-plotly-plot').scrollLeft = 0; }")
    bar = page.evaluate(_BAR)
    MEASURED[f"norms colour bar at {width} px"] = f"{bar['length']:.0f} px long"
    return {**bar, "problems": figure_checks.overlaps(page, "#att-one", f"fit-norms-{width}.png")}


FIT_LOOKS = {"Induction head": [("ticks", induction_ticks)], "Reading backwards": [("grid", heads_grid)],
             "The causal mask": [("mask", causal_mask), ("lens", logit_lens)], "Who reads whom?": [("gold", gold_links)],
             "Previous-token head": [("two", two_inputs)], "Which heads copy?": [("patching", patching_grids)],
             "Weights or what moves": [("norms", norms_bar)]}
