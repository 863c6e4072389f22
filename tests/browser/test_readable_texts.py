"""Texts a class reads, read in the browser at 1280x800 (a projector) and 390x844 (a phone), as the page lays them
out (issue 29's leftovers 3-5): the Model tab's metric names, the Train tab's watch status, the head caption."""
from __future__ import annotations

import re

import pytest

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
# JS: each metric value cell of the Model tab (its text and on how many lines it is laid out: the distinct tops of
# its text's boxes), and each metric table (its right edge, the screen's width; whether something around it scrolls
# sideways, and the "swipe →" hint of its block)
_VALUES = """() => ({
    values: [...document.querySelectorAll('#model-summary table tbody td:nth-child(2)')].map(cell => {
        const range = document.createRange();
        range.selectNodeContents(cell);
        const tops = [...range.getClientRects()].filter(b => b.width > 0).map(b => Math.round(b.top));
        return {text: cell.innerText.trim(), lines: new Set(tops).size};
    }),
    tables: [...document.querySelectorAll('#model-summary table')].map(table => {
        let scroller = table;
        while (scroller && !(scroller.scrollWidth > scroller.clientWidth + 1
                             && ['auto', 'scroll'].includes(getComputedStyle(scroller).overflowX)))
            scroller = scroller.parentElement;
        const block = table.closest('.block');
        return {right: table.getBoundingClientRect().right, width: innerWidth, scrolls: !!scroller,
                hint: !!block && getComputedStyle(block, '::after').content.includes('swipe')};
    }),
})"""


def test_the_metric_tables_read_whole_on_a_phone(open_at):
    """Regression (issue 29, leftover 5, and the value column after it): at 390x844 the Model tab printed the
    translation card's raw keys (`bleu_copy_source`, `path_patching_previous_token_to_induction_key`) in its metric
    tables, and the browser broke them mid-word to fit the narrow first column; the value column beside them was as
    narrow as one character (gradio's prose breaks a word anywhere), so the reverse card's "0.9646" read "0.964" over
    "6" and "2 entries (not shown)" took 3 lines. Invariants, measured on the laid-out text of the translation,
    induction and reverse cards (the longest names, the longest values, a 4-decimal number): no line break inside a
    name's word, no name left as a key (an underscore), every value on one line, and every table inside the screen's
    width or in a box that scrolls sideways and says "swipe →" (as test_layout.py::test_what_scrolls_sideways_says_so
    asks of the other tables)."""
    page = open_at(390)
    names, values = 0, []
    for name in ("translate-en-es", "induction", "reverse"):
        tour.select_checkpoint(page, name)
        tour.show_tab(page, "model")
        page.wait_for_function("n => document.querySelector('#model-summary').textContent.includes(n + ':') && "
                               "document.querySelector('#model-summary table')", arg=name)
        cells = page.locator(_NAMES).all_text_contents()
        names += len(cells)
        keys = [c for c in cells if "_" in c]
        assert not keys, f"{name}: metric names left as keys: {keys}"
        broken = page.evaluate(_BROKEN_WORDS, _NAMES)
        assert not broken, f"{name}: metric names broken inside a word at 390 px: {broken}"
        laid = page.evaluate(_VALUES)
        values += laid["values"]
        wrapped = [v for v in laid["values"] if v["lines"] != 1]
        assert not wrapped, f"{name}: values not on one line at 390 px: {wrapped}"
        unsaid = [t for t in laid["tables"] if t["right"] > t["width"] + 1 and not (t["scrolls"] and t["hint"])]
        assert not unsaid, f"{name}: a metric table wider than the screen, not said: {unsaid}"
        tour.small_screenshot(page, tour.SHOTS / f"model-metrics-{name}-390.png")
    MEASURED["metric names checked at 390"] = str(names)
    longest = max((v["text"] for v in values), key=len)
    MEASURED["metric values on one line at 390"] = f"{len(values)}, the longest {longest!r}"
    assert names >= 40, f"only {names} metric names were on the page"
    assert any(re.fullmatch(r"\d\.\d{4}", v["text"]) for v in values), "no 4-decimal number was checked"


# JS: the one-head heatmap as drawn (plotly's own data on the page): its tick labels and its cells
_HEATMAP = """() => { const gd = document.querySelector('#att-one .js-plotly-plot');
    return {keys: gd.layout.xaxis.ticktext, queries: gd.layout.yaxis.ticktext,
            z: Array.from(gd._fullData[0].z, row => Array.from(row, v => Number.isFinite(v) ? v : 0))}; }"""
# JS: where the head caption is, its type size, and whether it is what the page shows at its centre (not covered)
_CAPTION = """() => { const e = document.querySelector('#att-caption'), r = e.getBoundingClientRect();
    const shown = document.elementFromPoint(r.left + r.width / 2, Math.min(r.top + r.height / 2, innerHeight - 1));
    return {text: e.innerText, top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: innerWidth,
            fold: innerHeight, font: parseFloat(getComputedStyle(e.querySelector('p') || e).fontSize),
            uncovered: !!shown && e.contains(shown),
            figureTop: document.querySelector('#att-one').getBoundingClientRect().top}; }"""
# demo -> what its heatmap's title says (the previous demo's must not be read) and the role its caption names
CAPTION_DEMOS = {"Reading backwards": ("cross attention", "anti-diagonal head"),
                 "Previous-token head": ("decoder self attention", "previous-token head")}


def _content(labels: list[str]) -> list[int]:
    """The positions that hold text: not a marker such as `<s>`, `</s>` (escaped for plotly: `&lt;s&gt;`)."""
    return [i for i, label in enumerate(labels) if not (label.startswith("&lt;") and label.endswith("&gt;"))]


def _share_read_off(role: str, cells: dict) -> float:
    """The caption's number read off the drawn cells, as the caption defines it: an anti-diagonal head's mean weight
    of the i-th text query on the (n-1-i)-th of the n text keys; a previous-token head's mean weight of each text
    query t >= 1 on key t - 1 (a query without such a key counts 0)."""
    z, queries, keys = cells["z"], _content(cells["queries"]), _content(cells["keys"])
    if role == "anti-diagonal head":
        return sum(z[q][keys[len(keys) - 1 - i]] if len(keys) - 1 - i >= 0 else 0.0
                   for i, q in enumerate(queries)) / len(queries)
    rows = [t for t in queries if t >= 1]
    return sum(z[t][t - 1] for t in rows) / len(rows)


@pytest.mark.parametrize("width", tour.SIZES)
def test_the_head_caption_is_seen_with_the_heatmap_and_says_its_cells(open_at, width):
    """Regression (issue 29, leftover 4): the head caption under the one-head heatmap (what the head does, in words:
    transformer.interpretability.captions via tabs.attention.views.describe_view) had no browser test, and after a
    demo it was under the fold: the page scrolled the heatmap's bottom to the fold, and the caption, 60 px further
    down, at y 861-913 of 800 after "Reading backwards" at 1280.

    Invariant, after each demo: the caption is shown, inside the screen's width, uncovered, in type of at least
    MIN_LABEL_PX, and in the viewport with the heatmap whenever the two fit the screen (the previous-token head's
    24 rows and its caption do not on a phone: there it is measured after scrolling to it). Oracle: its percentage
    equals the score read off the drawn heatmap's cells (plotly's data on the page), computed here from the cells
    as the caption defines it."""
    from visualize.sizes import MIN_LABEL_PX

    page = open_at(width)
    for label, (titled, role) in CAPTION_DEMOS.items():
        page.evaluate("() => window.scrollTo(0, 0)")
        tour.click_demo(page, label)
        page.locator("#demo-explain", has_text=label).wait_for()
        page.wait_for_function("t => ((document.querySelector('#att-one .gtitle') || {}).textContent || '')"
                               ".includes(t)", arg=titled)
        page.locator("#att-caption", has_text=role).wait_for()
        seen = f"() => {{ const c = ({_CAPTION})(); return c.top >= 0 && c.bottom <= c.fold + 1; }}"
        try:
            page.wait_for_function(seen, timeout=10_000)  # the page brings the heatmap into view once drawn
        except Exception:  # measured and said below
            pass
        c = page.evaluate(_CAPTION)
        fits = c["bottom"] - c["figureTop"] <= c["fold"]
        where = f"after {label!r} at {width} px: the caption at y {c['top']:.0f}-{c['bottom']:.0f} of {c['fold']}"
        if fits:
            assert c["top"] >= 0 and c["bottom"] <= c["fold"] + 1, where
        else:
            page.locator("#att-caption").scroll_into_view_if_needed()
            c = page.evaluate(_CAPTION)
        assert c["uncovered"] and 0 <= c["left"] and c["right"] <= c["width"], c
        assert c["font"] >= MIN_LABEL_PX, c
        said = re.search(r"(\d+)% of", c["text"])
        read = _share_read_off(role, page.evaluate(_HEATMAP))
        assert said and said.group(0) == f"{read:.0%} of", f"{label}: the caption says {c['text']!r}, cells {read:.3f}"
        MEASURED[f"head caption at {width}: {label}"] = (
            f"{said.group(1)}% (cells {read:.4f}), y {c['top']:.0f}-{c['bottom']:.0f} of {c['fold']}"
            f"{'' if fits else ' (scrolled to)'}")


# JS: the watch's status line as laid out: its text's box, its type size, how opaque it is drawn (and what fades it),
# and what covers it (a visible loading or progress element of gradio's over the text, or another element at the
# text's centre)
_STATUS = """() => {
    const box = document.querySelector('#train-status'), text = box.querySelector('p') || box;
    const range = document.createRange();
    range.selectNodeContents(text);
    const r = range.getBoundingClientRect();
    let opacity = 1;
    const faded = [];
    for (let e = text; e; e = e.parentElement) {
        const o = parseFloat(getComputedStyle(e).opacity);
        opacity *= o;
        if (o < 1) faded.push(`${e.tagName}.${e.className} ${o}`);
    }
    const meets = b => b.width > 0 && b.height > 0 && b.left < r.right && b.right > r.left && b.top < r.bottom
                       && b.bottom > r.top;
    const overlays = [...box.querySelectorAll('*')].filter(e => !e.contains(text)
        && /wrap|progress|eta|loader|meta-text|toast/.test(e.className && e.className.toString())
        && getComputedStyle(e).visibility !== 'hidden' && getComputedStyle(e).display !== 'none'
        && meets(e.getBoundingClientRect()))
        .map(e => `${e.className} '${e.innerText.trim().slice(0, 40)}'`);
    text.scrollIntoView({block: 'center'});
    const c = range.getBoundingClientRect(), at = document.elementFromPoint(c.left + c.width / 2, c.top + c.height / 2);
    return {text: text.innerText.trim(), left: r.left, right: r.right, width: innerWidth, opacity, faded, overlays,
            font: parseFloat(getComputedStyle(text).fontSize),
            uncovered: !!at && (text.contains(at) || at.contains(text))};
}"""
# JS: where the watch's status line and the chart under it are in the viewport, and the fold
_WATCH_IN_VIEW = """() => {
    const status = document.querySelector('#train-status').getBoundingClientRect();
    const curves = document.querySelector('#train-curves').getBoundingClientRect();
    return {statusTop: status.top, statusBottom: status.bottom, curvesTop: curves.top, curvesBottom: curves.bottom,
            fold: innerHeight};
}"""
# JS: the live chart as drawn when the status line says an evaluation's best heads (one update of the run brings both;
# null until then): the status, the chart's SVG, and on screen the right edge of its plot area (its x axis's last
# tick), its right axis and that axis's title
_SCORED = """() => {
    const status = (document.querySelector('#train-status') || {}).innerText || '';
    const svg = document.querySelector('#train-curves svg.svg-figure');
    if (!/best induction head/.test(status) || !svg) return null;
    const ticks = [...svg.querySelectorAll('.x-axis .tick')].map(t => t.querySelector('line').getBoundingClientRect());
    const axis = svg.querySelector('.right-axis');
    return {status, svg: svg.outerHTML, plotRight: Math.max(...ticks.map(t => t.right)),
            rightAxisLeft: axis ? axis.getBoundingClientRect().left : null,
            rightTitle: axis ? axis.querySelector('.axis-title').textContent : null};
}"""


def _readings(page, count: int) -> list[dict]:
    """`count` readings of the streaming status line (_STATUS), 0.7 s apart."""
    readings = []
    for _ in range(count):
        readings.append(page.evaluate(_STATUS))
        page.wait_for_timeout(700)
    return readings


def test_the_watch_status_is_seen_and_readable_on_a_phone_and_a_projector(open_at):
    """Issue 29, item 9 and leftover 3: the status line of "Watch an induction head form" (step, loss, time, the best
    heads) was nearly invisible under gradio's "training - 62.0%" overlay, and on a phone the demo "Induction head
    forming" left it and its chart ~1,700 px down the page (y 1709 and 1751-2055 of 844): the class saw neither.

    One watch, started by the demo at 390x844, then read at exactly 1280x800 (the page resized, the run going on).
    Invariants: as the demo left the page, the status line is in the viewport with the chart under it (whole, or the
    status at the screen's top when the two are taller than it: tabs.ask_first.CAPTIONS); at both sizes, on each
    reading of the streaming status, the text is drawn fully opaque, no gradio loading or progress element lies over
    it, nothing else is at its centre, it stays inside the screen's width, and its type is at least MIN_LABEL_PX.
    Oracle for the explanation's "right axis, same chart" (tabs/train/watch.py): the best induction score is a curve
    of the chart that draws the loss, on a y axis drawn right of the plot area and titled "score", and its last point
    read back through that axis's ticks (tests/chart_reader) is at the step the status line reports and equals the
    score it says, to its 2 decimals. The watch is then stopped."""
    from tabs.train.watch import WATCH_EXPLAINED
    from tests.chart_reader import pixel_tolerance, read_chart
    from visualize.sizes import MIN_LABEL_PX

    page = open_at(390)
    tour.click_demo(page, "Induction forming")
    page.wait_for_function("() => /step \\d/.test((document.querySelector('#train-status') || {}).innerText || '')",
                           timeout=180_000)
    seen = page.evaluate(_WATCH_IN_VIEW)  # as the demo left the page: nothing here has scrolled it yet
    readings = {390: _readings(page, 6)}
    tour.small_screenshot(page, tour.SHOTS / "train-watch-390.png", full_page=False)
    try:
        page.set_viewport_size(tour.SIZES[1280])
        readings[1280] = _readings(page, 3)
        scored = page.wait_for_function(_SCORED, polling="raf", timeout=180_000).json_value()
    finally:
        page.set_viewport_size(tour.SIZES[390])
        page.locator("#train-stop").click(force=True)
    page.wait_for_function("() => /stopped/i.test(document.querySelector('#train-status').innerText)",
                           timeout=60_000)
    for width, taken in readings.items():
        last = taken[-1]
        MEASURED[f"watch status at {width}"] = (f"{last['text'][:60]!r}: x {last['left']:.0f}-{last['right']:.0f} "
                                                f"of {last['width']}, {last['font']:.0f} px")
    MEASURED["watch in view at 390"] = (f"status y {seen['statusTop']:.0f}-{seen['statusBottom']:.0f}, chart y "
                                        f"{seen['curvesTop']:.0f}-{seen['curvesBottom']:.0f} of {seen['fold']}")
    assert seen["statusTop"] >= -1 and seen["statusBottom"] <= seen["fold"] + 1, seen
    assert seen["curvesBottom"] <= seen["fold"] + 1 or abs(seen["statusTop"]) <= 2, seen
    for width, taken in readings.items():
        for r in taken:
            assert "step" in r["text"], (width, r)
            assert r["opacity"] > 0.99 and not r["overlays"] and r["uncovered"], (width, r)
            assert r["left"] >= 0 and r["right"] <= r["width"] == width, (width, r)
            assert r["font"] >= MIN_LABEL_PX, (width, r)
    assert "right axis, same chart" in WATCH_EXPLAINED
    chart = read_chart(scored["svg"])
    score = chart["curves"].get("best induction score")
    said = float(re.search(r"best induction head \S+ (\d+\.\d+)", scored["status"]).group(1))
    assert score and score["axis"] == "right" and "train loss" in chart["curves"], chart["curves"]
    MEASURED["watch score at 1280"] = (f"status {said:.2f}, read off the right axis {score['y'][-1]:.4f}; right "
                                       f"axis at x {scored['rightAxisLeft']:.0f}, the plot's right edge "
                                       f"{scored['plotRight']:.0f}")
    assert scored["rightTitle"] == "score" and scored["rightAxisLeft"] >= scored["plotRight"] - 1, scored
    step = int(re.search(r"step (\d+)/", scored["status"]).group(1))  # the evaluation the status line reports
    dx, dy = pixel_tolerance(scored["svg"], "right")
    assert abs(score["x"][-1] - step) <= 2 * dx, (score, scored["status"])
    assert abs(score["y"][-1] - said) <= 0.005 + 2 * dy, (score, said)
