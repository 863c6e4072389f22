"""Drive every tab of the real Attention Lab page in a browser.

One function per tab (`tour_generate`, `tour_attention`, ...) does what a visitor would do and returns what it saw,
so the browser tests assert on the observations and `tests.browser.screenshots` (the README screenshots) runs
exactly the same code. Playwright's sync API, driving Debian's chromium; never `playwright install`.

Timeouts are generous (60 s): the machine running these may be shared and slow.
"""
from __future__ import annotations

import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]
# The pages prefer reduced motion (new_page): the page's scrolls land at once (tabs.ask_first.IN_VIEW), so where a
# figure ends up is measured when it is there, not in the middle of a smooth scroll; test_motion_and_zoom.py checks
# both preferences. Playwright's emulation, not chromium's --force-prefers-reduced-motion, which Debian's chromium
# ignores in headless mode (the pages scrolled smoothly and 6 tests measured figures half-way: CI of stop 43).
REDUCED_MOTION = "reduce"
VIEWPORT = {"width": 1400, "height": 1000}
TIMEOUT_MS = 60_000
# A training's progress on the page (its first step, its evaluations, its end): the run may first wait its turn in the
# training line, and its steps share the cores with the other worker's tests. Each wait ends when the page shows it.
TRAINING_MS = 180_000
# Screenshots (the README's and the layout tests'): written into docs/screenshots only when asked
# (ATTENTION_LAB_SCREENSHOTS=1), so a test run leaves the working tree as it was; otherwise into a temporary folder
# (still taken, so the code path runs).
SHOTS = (Path(__file__).resolve().parents[2] / "docs" / "screenshots" if os.environ.get("ATTENTION_LAB_SCREENSHOTS")
         else Path(tempfile.gettempdir()) / "attention-lab-screenshots")
LOCAL_HOST = "127.0.0.1"

# screenshot file stem -> the tab's label on the page
TABS = {"generate": "Generate", "attention": "Attention", "positional": "Positional encoding", "train": "Train",
        "model": "Model", "class": "Class"}

# JS: the number of points of the live chart's "train loss" curve (0 before the first step; an SVG polyline, see
# visualize/line_chart.py).
_LOSS_POINTS = """() => {
    const line = document.querySelector('#train-curves svg.svg-figure polyline[data-name="train loss"]');
    return line ? line.points.numberOfItems : 0;
}"""


# JS: where the figure `#id` lies on the screen, the bottom of the notes a projector pins at the top (0 when they
# are not pinned), and for a heatmap of tokens its cells' least side as drawn (plotly's axis lengths over its cells)
PLACE = """(id) => {
    const f = document.getElementById(id), plot = f && f.querySelector('.js-plotly-plot');
    const box = (plot || f).getBoundingClientRect(), notes = document.getElementById('demo-notes');
    const pinned = notes && getComputedStyle(notes).position === 'sticky';
    const out = {top: box.top, bottom: box.bottom, screen: innerHeight,
                 under: pinned ? Math.max(0, notes.getBoundingClientRect().bottom) : 0, cell: null};
    const layout = plot && plot._fullLayout, z = plot && plot._fullData && plot._fullData[0] && plot._fullData[0].z;
    if (layout && z && z.length && layout.xaxis && layout.yaxis)
        out.cell = Math.min(layout.xaxis._length / z[0].length, layout.yaxis._length / z.length);
    return out;
}"""
TOKEN_HEATMAPS = {"att-one", "patch-heads"}  # a cell a token (or a head): at least MIN_CELL_PX


# --- browser, page, offline guard ------------------------------------------------------------------------------


@dataclass
class OfflineGuard:
    """Routes every request of a page: 127.0.0.1 goes through, anything else is aborted and recorded."""

    allowed: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)  # requests that got a response

    def install(self, page) -> "OfflineGuard":
        page.route("**/*", self._route)
        page.route_web_socket(re.compile(".*"), self._route_web_socket)
        page.on("requestfinished", lambda request: self.finished.append(request.url))
        return self

    @staticmethod
    def is_local(url: str) -> bool:
        parts = urlsplit(url)
        return parts.scheme in ("data", "blob", "about") or parts.hostname == LOCAL_HOST

    def _route(self, route) -> None:
        url = route.request.url
        if self.is_local(url):
            self.allowed.append(url)
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort("blockedbyclient")

    def _route_web_socket(self, ws) -> None:
        if self.is_local(ws.url):
            self.allowed.append(ws.url)
            ws.connect_to_server()
        else:
            self.blocked.append(ws.url)
            ws.close()

    @property
    def blocked_hosts(self) -> list[str]:
        return sorted({urlsplit(u).hostname or u for u in self.blocked})


def launch_browser(playwright):
    """Debian's chromium, headless."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)


def new_page(browser):
    """(page, guard): a fresh page whose requests outside 127.0.0.1 are aborted."""
    page = browser.new_page(viewport=VIEWPORT, reduced_motion=REDUCED_MOTION)
    page.set_default_timeout(TIMEOUT_MS)
    return page, OfflineGuard().install(page)


def open_app(page, url: str) -> None:
    """Load the app and wait until its tabs are on the page (a tab's content is rendered when it is selected)."""
    page.goto(url, timeout=TIMEOUT_MS)
    page.get_by_role("tab", name=TABS["generate"]).wait_for()


def show_tab(page, key: str) -> None:
    """Click a tab (by its label) and wait until it is the selected one."""
    tab = page.get_by_role("tab", name=TABS[key], exact=True)
    tab.click()
    page.wait_for_function("t => t.getAttribute('aria-selected') === 'true'", arg=tab.element_handle())


# What each tab shows once it has loaded (the attention heatmap and the summary are computed on page load).
MAIN_CONTENT = {"generate": "#gen-prompt textarea", "attention": "#att-one .main-svg",
                "positional": ".js-plotly-plot .gtitle:has-text('Sinusoidal encoding')", "train": "#train-curves",
                "model": "#model-summary h3", "class": "#class-start"}


def visit(page, key: str):
    """Select a tab and wait for its main content; returns that content's locator."""
    show_tab(page, key)
    content = page.locator(MAIN_CONTENT[key]).first
    content.wait_for(state="visible")
    return content


def select_checkpoint(page, name: str) -> None:
    """Pick `name` in the checkpoint dropdown shared by every tab."""
    page.locator("#ckpt input").click()
    page.get_by_role("option").filter(has_text=re.compile(rf"^\s*✓?\s*{re.escape(name)}\s*$")).click()
    page.locator("#ckpt input").blur()
    _wait_list_closed(page)


def visible_panel(page):
    """The selected tab's panel (get_by_role skips the hidden panels of the other tabs)."""
    return page.get_by_role("tabpanel")


def plot_titles(page) -> list[str]:
    """Titles of the plots drawn in the selected tab."""
    return [t.strip() for t in visible_panel(page).locator(".js-plotly-plot .gtitle").all_text_contents()]


def screenshot(page, path, full_page: bool = True) -> Path:
    """The whole page (or with `full_page` False, the screen: what a projector shows first) saved at `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    page.mouse.move(0, 0)  # no hover highlight on the last button clicked
    page.screenshot(path=str(path), full_page=full_page)
    return path


def _text(page, selector: str) -> str:
    return (page.locator(selector).text_content() or "").strip()


# --- the tabs --------------------------------------------------------------------------------------------------


def tour_generate(page, text: str = "attention") -> dict:
    """Type `text`, press Generate, wait for the output and for the 'where it looked' plot of the first token.

    Expects the page's first generation (an empty output box), so that a filled box cannot be a stale one.
    """
    show_tab(page, "generate")
    output_before = page.locator("#gen-output textarea").input_value()
    page.locator("#gen-prompt textarea").fill(text)
    started = time.perf_counter()
    page.locator("#gen-go").click()
    # The last update of a generation always fills the notice ("Done." or a warning); the output then stays put.
    page.wait_for_function("""() => document.querySelector('#gen-output textarea').value.trim() !== ''
                              && document.querySelector('#gen-notice').textContent.trim() !== ''""")
    seconds = time.perf_counter() - started
    # `.then(inspect_step)` draws where the first generated token looked.
    visible_panel(page).locator(".gtitle", has_text="looked").wait_for()
    return {"input": text, "output_before": output_before, "output": page.locator("#gen-output textarea").input_value(),
            "notice": _text(page, "#gen-notice"), "seconds": seconds, "plot_titles": plot_titles(page)}


def _slider_max(page, elem_id: str) -> int:
    return int(float(page.locator(f"#{elem_id} input[type=range]").get_attribute("max")))


# JS: set a slider as a drag would (value, then input and change events).
_SET_SLIDER = """([id, value]) => {
    const input = document.querySelector(`#${id} input[type=range]`);
    Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(input, String(value));
    input.dispatchEvent(new Event('input', {bubbles: true}));
    input.dispatchEvent(new Event('change', {bubbles: true}));
}"""


def set_slider(page, elem_id: str, value: float) -> None:
    """Set the slider `#elem_id` to `value` as a drag would (its input and change events fire)."""
    page.evaluate(_SET_SLIDER, [elem_id, value])


def _move_slider(page, elem_id: str, value: int, expected_title: str) -> float:
    """Set a slider as a drag would (value + input/change events) and wait, inside the page, until the one-head
    heatmap's title becomes `expected_title`. Returns the milliseconds from the input event to the new title."""
    result = page.evaluate("""async ([id, value, expected, timeout]) => {
        const input = document.querySelector(`#${id} input[type=range]`);
        const title = () => (document.querySelector('#att-one .gtitle') || {}).textContent;
        const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
        const t0 = performance.now();
        setter.call(input, String(value));
        input.dispatchEvent(new Event('input', {bubbles: true}));
        input.dispatchEvent(new Event('change', {bubbles: true}));
        while (title() !== expected) {
            if (performance.now() - t0 > timeout) return {ms: null, title: title()};
            await new Promise(requestAnimationFrame);
        }
        return {ms: performance.now() - t0, title: title()};
    }""", [elem_id, value, expected_title, TIMEOUT_MS])
    if result["ms"] is None:
        raise AssertionError(f"after setting #{elem_id} to {value} the heatmap title stayed {result['title']!r}, "
                             f"expected {expected_title!r}")
    return result["ms"]


def tour_attention(page, layer: int | None = None, head: int | None = None) -> dict:
    """Wait for the heatmap computed on page load, then move the layer and the head sliders and time each redraw.

    By default the layer goes to 0 (the page starts on the last layer); then the head slider visits every other
    head and ends on `head` (default 2, or the last head), so there are several redraws to time.
    """
    show_tab(page, "attention")
    one_title = page.locator("#att-one .gtitle")
    page.wait_for_function("() => /layer \\d+, head \\d+/.test("
                           "(document.querySelector('#att-one .gtitle') || {}).textContent || '')")
    for plot in ("#att-one", "#att-overview", "#att-grid"):
        page.locator(f"{plot} .main-svg").first.wait_for()
    initial = one_title.text_content()
    kind, cur_layer, cur_head = re.fullmatch(r"(.+) attention, layer (\d+), head (\d+)", initial).groups()
    cur_layer, cur_head = int(cur_layer), int(cur_head)
    max_layer, max_head = _slider_max(page, "att-layer"), _slider_max(page, "att-head")
    if layer is None:
        layer = 0 if cur_layer != 0 else max_layer
    if head is None:
        head = min(2, max_head) if cur_head != min(2, max_head) else 0
    redraws = []
    heads = [h for h in range(max_head + 1) if h not in (cur_head, head)] + [head]
    for elem_id, value in [("att-layer", layer)] + [("att-head", h) for h in heads]:
        cur_layer, cur_head = (value, cur_head) if elem_id == "att-layer" else (cur_layer, value)
        expected = f"{kind} attention, layer {cur_layer}, head {cur_head}"
        ms = _move_slider(page, elem_id, value, expected)
        redraws.append({"slider": elem_id, "value": value, "title": one_title.text_content(), "ms": ms})
    return {"initial_title": initial, "max_layer": max_layer, "max_head": max_head, "redraws": redraws,
            "plot_titles": plot_titles(page)}


def tour_positional(page) -> dict:
    """Wait for the four positional-encoding figures drawn on page load."""
    show_tab(page, "positional")
    panel = visible_panel(page)
    for title in ("Sinusoidal encoding", "Chosen dimensions", "Dot product between positions"):
        panel.locator(".gtitle", has_text=title).wait_for()
    plots = panel.locator(".js-plotly-plot")
    for i in range(4):  # the fourth (learned vs fixed) may be a blank figure with a message, without a title
        plots.nth(i).locator(".main-svg").first.wait_for(state="visible")
    return {"plot_titles": plot_titles(page), "plots": panel.locator(".js-plotly-plot").count()}


_WATCH_STATUS = """() => {
    window.__trainStatus = [];
    window.__trainClick = null;
    const el = document.querySelector('#train-status');
    const text = () => ((el.querySelector('[data-testid=markdown]') || el).textContent || '').trim();
    const record = () => {
        const t = text();
        const log = window.__trainStatus;
        if (!log.length || log[log.length - 1].text !== t) log.push({ms: performance.now(), text: t});
    };
    record();
    new MutationObserver(record).observe(el, {subtree: true, childList: true, characterData: true});
    document.querySelector('#train-start').addEventListener('click', () => {
        window.__trainClick = performance.now();
    }, {capture: true, once: true});
}"""


# JS: the cell texts of each row of a gradio Dataframe (by its elem_id); the header row has no gridcell
TABLE_ROWS = """(id) => [...document.querySelectorAll(`#${id} [role=row]`)]
    .map(r => [...r.querySelectorAll('[role=gridcell]')].map(c => c.textContent.trim())).filter(r => r.length)"""


def table_rows(page, elem_id: str, at_least: int = 1) -> list[list[str]]:
    """The rows of the Dataframe `elem_id` (cell texts), once it has at least `at_least`."""
    page.wait_for_function(f"() => ({TABLE_ROWS})('{elem_id}').length >= {at_least}")
    return page.evaluate(TABLE_ROWS, elem_id)


def checkpoint_choices(page) -> list[str]:
    """The options of the checkpoint dropdown (opens it, reads them, closes it)."""
    page.locator("#ckpt input").click()
    page.get_by_role("option").first.wait_for()
    # each option carries a check-mark span (shown only on the selected one): drop it
    choices = [re.sub(r"^\s*✓", "", c).strip() for c in page.get_by_role("option").all_text_contents()]
    page.locator("#ckpt input").press("Escape")
    page.locator("#ckpt input").blur()
    _wait_list_closed(page)
    return choices


def _wait_list_closed(page) -> None:
    """Until the dropdown's list has left the page (it fades out; a screenshot would catch the ghost)."""
    page.wait_for_function("() => document.querySelectorAll('[role=option]').length === 0")


def tour_train(page, min_updates: int = 2, seconds: float = 0.0) -> dict:
    """Press Start (the defaults: reverse, tiny), watch the curves and the status stream, then press Stop.

    Stops once the loss curve has grown and the status has changed `min_updates` times since the first point, and
    at least `seconds` after Start (the screenshot script trains a little longer for a nicer curve).
    """
    show_tab(page, "train")
    page.evaluate(_WATCH_STATUS)
    started = time.perf_counter()
    page.locator("#train-start").click()
    first_ms = page.wait_for_function(f"""() => ({_LOSS_POINTS})() > 0 && window.__trainClick !== null
                                           && performance.now() - window.__trainClick""",
                                      polling="raf", timeout=TRAINING_MS).json_value()
    first_points = page.evaluate(_LOSS_POINTS)
    changes_before = page.evaluate("() => window.__trainStatus.length")
    page.wait_for_function(f"""([n, k]) => ({_LOSS_POINTS})() > n && window.__trainStatus.length >= k""",
                           arg=[first_points, changes_before + min_updates], timeout=TRAINING_MS)
    remaining = seconds - (time.perf_counter() - started)
    if remaining > 0:
        page.wait_for_timeout(remaining * 1000)
    points_before_stop = page.evaluate(_LOSS_POINTS)
    page.locator("#train-stop").click()
    # The run is the status line's one writer (Stop's reply leaves it as it is): its last update says how it ended.
    shown = "(re) => window.__trainStatus.some(s => re.test(s.text))"
    try:
        page.wait_for_function(f"() => ({shown})(/^Training stopped/)")
    except Exception as e:
        statuses = [s["text"][:120] for s in page.evaluate("() => window.__trainStatus")]
        raise AssertionError(f"no 'Training stopped' status after Stop; statuses seen: {statuses}") from e
    page.wait_for_timeout(1000)  # a late reply of any other event would show by now
    return {"first_point_ms": first_ms, "first_points": first_points, "points_before_stop": points_before_stop,
            "final_points": page.evaluate(_LOSS_POINTS),
            "statuses": [s["text"] for s in page.evaluate("() => window.__trainStatus")],
            "final_status": _text(page, "#train-status [data-testid=markdown]"),
            "checkpoints": checkpoint_choices(page), "plot_titles": plot_titles(page)}


def tour_model(page) -> dict:
    """Wait for the parameter summary and the parameter plot of the selected checkpoint."""
    show_tab(page, "model")
    page.wait_for_function("() => /parameters/.test(document.querySelector('#model-summary').textContent)")
    visible_panel(page).locator(".gtitle", has_text="Parameters of").wait_for()
    return {"summary": _text(page, "#model-summary"), "plot_titles": plot_titles(page)}


TOURS = {"generate": tour_generate, "attention": tour_attention, "positional": tour_positional, "train": tour_train,
         "model": tour_model}


# --- layout: what a figure's text looks like on a projector and on a phone --------------------------------------

PROJECTOR = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
SIZES = {1280: PROJECTOR, 390: PHONE}  # the two screens every layout is checked on

# JS: for every drawn plotly figure and live chart (visualize/line_chart.py's SVG) under `root`, the page boxes of its
# SVG texts (titles, axis titles, tick labels, colour-bar titles and ticks, legend texts, annotations, bar texts),
# without the hover layer and empty texts; the heatmap cell numbers separately, as they are meant to sit inside their
# cells.
_FIGURE_TEXTS = """(root) => {
    const figures = [];
    const scope = root ? document.querySelector(root) : document;
    for (const gd of (scope ? scope.querySelectorAll('.js-plotly-plot, svg.svg-figure') : [])) {
        const chart = gd.matches('svg.svg-figure');
        const svg = chart ? gd : gd.querySelector('svg.main-svg');
        if (!svg || !gd.checkVisibility({visibilityProperty: true, checkVisibilityCSS: true})) continue;  // hidden tab
        // what can be seen of the figure: the drawn SVG, cut to the plot's block (whose overflow is hidden); a
        // figure wider than its box scrolls sideways (app's CSS): all of its width can be seen
        const drawn = svg.getBoundingClientRect(), block = (gd.closest('.block') || gd).getBoundingClientRect();
        const scrolls = gd.scrollWidth > gd.clientWidth + 1 && getComputedStyle(gd).overflowX === 'auto';
        const box = {left: scrolls ? drawn.left : Math.max(drawn.left, block.left),
                     right: scrolls ? drawn.right : Math.min(drawn.right, block.right),
                     top: Math.max(drawn.top, block.top), bottom: Math.min(drawn.bottom, block.bottom)};
        if (box.right - box.left < 1 || box.bottom - box.top < 1) continue;  // not drawn yet
        const owner = gd.closest('[id]:not(.js-plotly-plot)');
        const title = (gd.querySelector('.gtitle, text.title') || {}).textContent || '';
        const texts = [], cells = [];
        for (const t of gd.querySelectorAll(chart ? 'text' : 'svg.main-svg text')) {
            if (t.closest('.hoverlayer')) continue;
            const text = (t.textContent || '').trim();
            const r = t.getBoundingClientRect();
            if (!text || r.width < 1 || r.height < 1) continue;
            const style = getComputedStyle(t);
            if (style.visibility === 'hidden' || style.display === 'none' || style.opacity === '0') continue;
            const group = t.closest('g[class]');
            const item = {text: text.slice(0, 40), kind: (t.getAttribute('class') || '') + ' in '
                          + (group ? group.getAttribute('class') : ''),
                          x0: r.left, y0: r.top + window.scrollY, x1: r.right, y1: r.bottom + window.scrollY};
            (t.closest('.heatmap-label') ? cells : texts).push(item);
        }
        figures.push({id: owner ? owner.id : '', title, texts, cells,
                      box: {x0: box.left, y0: box.top + window.scrollY,
                            x1: box.right, y1: box.bottom + window.scrollY}});
    }
    return figures;
}"""


def figure_texts(page, root: str | None = None) -> list[dict]:
    """The text boxes of every figure drawn under the CSS selector `root` (default: the whole page); figures in
    hidden tabs are left out.

    Each figure: {"id": its gr.Plot's elem_id, "title", "box", "texts": [...], "cells": [...]}, every box in page
    pixels {x0, y0, x1, y1}; "cells" are the numbers written inside heatmap cells.
    """
    return page.evaluate(_FIGURE_TEXTS, root)


def _overlap(a: dict, b: dict) -> float:
    """How far two boxes overlap: the smaller of the overlap's width and height (<= 0 when they do not)."""
    return min(min(a["x1"], b["x1"]) - max(a["x0"], b["x0"]), min(a["y1"], b["y1"]) - max(a["y0"], b["y0"]))


def text_overlaps(figure: dict, tolerance: float = 2.0) -> list[str]:
    """Pairs of a figure's texts that overlap by more than `tolerance` pixels (cell numbers only with each other),
    and texts that reach past the visible figure (cut off at its edge) by more than that."""
    problems = []
    for group in ("texts", "cells"):
        items = figure[group]
        for i, a in enumerate(items):
            for b in items[i + 1:]:
                depth = _overlap(a, b)
                if depth > tolerance:
                    problems.append(f"{a['text']!r} ({a['kind']}) overlaps {b['text']!r} ({b['kind']}) "
                                    f"by {depth:.0f} px")
    box = figure["box"]
    for t in figure["texts"] + figure["cells"]:
        out = max(box["x0"] - t["x0"], t["x1"] - box["x1"], box["y0"] - t["y0"], t["y1"] - box["y1"])
        if out > tolerance:
            problems.append(f"{t['text']!r} ({t['kind']}) is cut off at the figure's edge by {out:.0f} px")
    return problems


def tab_buttons(page) -> list[dict]:
    """Every tab button of the page: its label, whether it is shown, and its box in the viewport."""
    return page.evaluate("""() => [...document.querySelectorAll('[role=tab]')].map(b => {
        const r = b.getBoundingClientRect(), s = getComputedStyle(b);
        return {label: b.textContent.trim(), x0: r.left, y0: r.top, x1: r.right, y1: r.bottom,
                shown: r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'};
    })""")


def plots_drawn(page, count: int | None = None) -> None:
    """Wait until the visible tab's figures (plotly figures and live charts) are drawn (at least `count` of them,
    when given) and settled."""
    if count:
        page.wait_for_function("""n => [...document.querySelectorAll('[role=tabpanel]')].some(p => p.checkVisibility()
            && p.querySelectorAll('.js-plotly-plot .main-svg').length / 2  // two main-svg per plotly figure
               + p.querySelectorAll('svg.svg-figure').length >= n)""", arg=count)
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


# Whether the figure under `sel` has had no change in its DOM (plotly's redraws: automargin, a react) for `ms`
_FIGURE_STILL = """([sel, ms]) => {
    const f = document.querySelector(sel);
    if (!f) return false;
    if (f.__still === undefined) {  // first look at this element (gradio replaces it when a figure arrives)
        f.__still = performance.now();
        new MutationObserver(() => { f.__still = performance.now(); })
            .observe(f, {childList: true, subtree: true, attributes: true, characterData: true});
        return false;
    }
    return performance.now() - f.__still >= ms;
}"""


def figure_at_rest(page, sel: str, ms: int = 600) -> None:
    """Wait until the figure under `sel` has not been redrawn for `ms`: plotly redraws a figure once or twice after
    its first frame (automargin), later on a busy machine, and a measure taken between two draws saw the causal
    mask's colour bar over its plot (CI, 2026-11-28; 300 ms of waiting had been enough on a quieter machine)."""
    page.wait_for_function(_FIGURE_STILL, arg=[sel, ms], polling=100, timeout=TIMEOUT_MS)


def small_screenshot(page, path, colours: int = 256, full_page: bool = True) -> Path:
    """A full-page (or screen: `full_page` False) screenshot saved as a palette PNG (a quarter of the size of a
    full-colour one, same look)."""
    from PIL import Image  # pillow comes with gradio

    path = screenshot(page, path, full_page)
    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=colours, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)
    return path


def click_demo(page, label: str) -> None:
    """Click the demo button named exactly `label` ("Induction head" is also inside "Watch an induction head form")."""
    page.locator("#demo-row").get_by_role("button", name=label, exact=True).click()


# JS, run in a page before it loads (watch_calls): the page's server calls in flight, each from the request that makes
# it (a queued call's join, a call run at once) to its end (the session's stream says `process_completed`; a call run
# at once ends with its reply), and when a plotly figure last changed. A call whose stream has sent an update is marked
# `generating` (a training streams until it is stopped).
_CALLS = """() => {
    if (window.__calls) return;
    const calls = window.__calls = {pending: new Map(), done: new Set(), doneAt: performance.now(),
                                    drawnAt: performance.now(), n: 0};
    const fetch = window.fetch;
    const finish = id => { calls.pending.delete(id); calls.done.add(id); calls.doneAt = performance.now(); };
    const read = async body => {
        const reader = body.getReader(), text = new TextDecoder();
        let rest = '';
        for (;;) {
            const {value, done} = await reader.read();
            if (done) return;
            const lines = (rest + text.decode(value, {stream: true})).split('\\n');
            rest = lines.pop();
            for (const line of lines) {
                let m = null;
                try { m = line.startsWith('data:') && JSON.parse(line.slice(5)); } catch (e) { continue; }
                if (!m || !m.event_id) continue;
                const id = 'q' + m.event_id;
                if (m.msg === 'process_completed') finish(id);
                else if (m.msg === 'process_generating' && calls.pending.has(id))
                    calls.pending.get(id).generating = true;
            }
        }
    };
    window.fetch = async function (input, init) {
        const url = typeof input === 'string' ? input : (input && input.url) || String(input);
        const method = ((init && init.method) || (input && input.method) || 'GET').toUpperCase();
        const join = method === 'POST' && url.includes('/queue/join');
        if (!join && !(method === 'POST' && url.includes('/run/predict'))) {
            const response = await fetch.call(this, input, init);
            if (!url.includes('/queue/data') || !response.body) return response;
            const [mine, theirs] = response.body.tee();  // the page reads one copy of the stream, this watch the other
            read(mine);
            return new Response(theirs, {status: response.status, statusText: response.statusText,
                                         headers: response.headers});
        }
        const key = 'c' + (++calls.n), call = {generating: false};
        calls.pending.set(key, call);
        try {
            const response = await fetch.call(this, input, init);
            if (!join || !response.ok) { finish(key); return response; }
            response.clone().json().then(j => {  // the queued call goes on under its event id, until it completes
                calls.pending.delete(key);
                const id = 'q' + j.event_id;
                if (j.event_id && !calls.done.has(id)) calls.pending.set(id, call);
                else calls.doneAt = performance.now();
            }, () => finish(key));
            return response;
        } catch (e) { finish(key); throw e; }
    };
    new MutationObserver(records => {
        for (const r of records) {
            const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
            if (el && el.closest('.js-plotly-plot')) { calls.drawnAt = performance.now(); return; }
        }
    }).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
}"""
# JS: no server call in flight (but those streaming, when `streaming`) and no plotly figure changed for `ms`
_SETTLED = """([ms, streaming]) => {
    const c = window.__calls;
    if ([...c.pending.values()].some(call => !(streaming && call.generating))) return false;
    return performance.now() - Math.max(c.doneAt, c.drawnAt) >= ms;
}"""


def watch_calls(page) -> None:
    """Watch the server calls of the pages `page` loads from now on (call it before `open_app`), for `settled`."""
    page.add_init_script(f"({_CALLS})()")


def settled(page, ms: int = 600, streaming: bool = False, timeout_ms: int = TRAINING_MS) -> None:
    """Wait until every server call the page made has ended (a call that streams, such as a training, counts once it
    has sent an update, when `streaming`) and no plotly figure has changed for `ms`: what a click set off, the
    sections' figures its new input redraws included, is on the page. Needs `watch_calls` before the page loaded.
    `ms` covers the steps the page chains in itself between two calls, and plotly's redraws after a figure's
    first frame (figure_at_rest)."""
    page.wait_for_function(_SETTLED, arg=[ms, streaming], polling=100, timeout=timeout_ms)
