"""Live training in a real browser stays light (issue 19): a projector laptop must keep up with the stream, and a
run ends as it says.

Regression: 4 updates a second, each redrawing the whole loss plot and the heatmap; renderer memory 482 MB -> 2.7 GB
in 180 s, "Training finished" never shown, a Stop click sent after 43 s. Then, at 2 updates a second, gradio's Plot
(Plotly.react + Plots.resize on every value) still left ~500 detached DOM nodes and ~125 listeners reachable per
update: the page grew ~40 MB/s. The curves are now an SVG chart (visualize/line_chart.py) in a gr.HTML.

The default run (reverse, tiny, with 5000 steps so it outlasts the window) is sampled for ATTENTION_LAB_LIVE_SECONDS
(default 60; the issue's figure is 180) through Chrome's own metrics (CDP Performance.getMetrics: JS heap, DOM
nodes) after a forced garbage collection every 5 s; the figures are printed at the end of the run. Screenshots of
the Train tab mid-run and after it, at 1280x800 and 390x844, go where tests/browser/test_layout.py puts its own.
"""
from __future__ import annotations

import os
import time

from tests.browser import tour
from tests.browser.conftest import MEASURED
from visualize.line_chart import LIVE_POINTS

SECONDS = float(os.environ.get("ATTENTION_LAB_LIVE_SECONDS", 60))
SAMPLE_EVERY_MS = 5000
# The bounds: after the second evaluation, what the page holds may not grow with the run's length. Measured with the
# SVG chart and map (bench/RESULTS.md, issue 19): detached nodes +0.6 to +1.5 a second (~10 at each evaluation; a
# sample now and then catches a render in flight, +660 and +4,458 seen, gone at the next), JS heap +0.003 MB a
# second, listeners constant. With a plotly loss plot every update left ~500 nodes and ~60 listeners reachable
# (~1,000 nodes and 0.45-40 MB a second); with only the map plotly, ~500 nodes at every evaluation (~50 a second).
NODES_PER_SECOND = 10.0  # the slope of the detached nodes over the window (median of pairwise slopes)
NODE_MARGIN = 150  # the last sample's detached nodes at most this + NODES_PER_SECOND x the window above the first
HEAP_MB_PER_SECOND = 0.1  # a 60 s window on a busy CI machine measured 0.035 (GC timing); the plotly leak was 0.45-40
HEAP_MARGIN_MB = 4.0
# Stop click -> "Training stopped" on the page: the click's request reaches the server, the run ends its step and sends
# its last update, the page draws it: 0.15-0.35 s on a quiet machine. Every link stretches when the machine is loaded
# (at load 10: 0.9 s, 0.6 s of it before the server had the click; at load 14, 1.16 s and 1.79 s failed a bound of
# 1 s): the bound is STOP_MS beyond two of the page's round trips to the server measured during the run just before
# the click (the request and the last update cross the same loaded machine). The regression was 43 s.
STOP_MS = 1000
# The page's round trip to the server: the median of 5 fetches of a small file (through the offline guard, as the
# page's own requests go)
_ROUND_TRIP = """async () => {
    const times = [];
    for (let i = 0; i < 5; i++) {
        const t0 = performance.now();
        await (await fetch('favicon.ico?' + i, {cache: 'no-store'})).arrayBuffer();
        times.push(performance.now() - t0);
    }
    return times.sort((a, b) => a - b)[2];
}"""
# Every change of the status text, with its time (the status changes once per update of the stream).
_WATCH = """() => {
    window.__statuses = [];
    const el = document.querySelector('#train-status');
    const record = () => {
        const t = el.innerText.trim(), log = window.__statuses;
        if (!log.length || log[log.length - 1].text !== t) log.push({ms: performance.now(), text: t});
    };
    new MutationObserver(record).observe(el, {subtree: true, childList: true, characterData: true});
}"""
# The nodes attached to the page (elements, text, comments), and the elements of the curves, the map and the samples
# table: the CDP count minus the first is what is kept reachable though detached.
_ATTACHED = """() => {
    const walker = document.createTreeWalker(document, NodeFilter.SHOW_ALL);
    let n = 1;
    while (walker.nextNode()) n++;
    return [n, ...['#train-curves', '#train-attention', '#train-samples'].map(
        id => (document.querySelector(id) || document.createElement('i')).getElementsByTagName('*').length)];
}"""
_MAP_STEP = "() => (/step (\\d+)/.exec(document.querySelector('#train-attention .title')?.textContent || '') || [])[1]"
_READABLE = """() => {
    const el = document.querySelector('#train-status [data-testid=markdown]')
        || document.querySelector('#train-status');
    let opacity = 1;
    for (let e = el; e; e = e.parentElement) opacity *= parseFloat(getComputedStyle(e).opacity);
    const cover = [...document.querySelectorAll('#train-status .wrap')].filter(w => {
        const s = getComputedStyle(w); return s.display !== 'none' && s.visibility !== 'hidden'
            && w.getBoundingClientRect().height > 0 && !w.classList.contains('minimal')
            && !w.classList.contains('hide'); });
    return {opacity, covered: cover.length};
}"""


def _slope(times: list[float], values: list[float]) -> float:
    """The median of the slopes between every two samples (Theil-Sen): one outlying sample does not move it."""
    slopes = sorted((values[j] - values[i]) / (times[j] - times[i])
                    for i in range(len(times)) for j in range(i + 1, len(times)) if times[j] > times[i])
    return slopes[len(slopes) // 2]


def _metrics(cdp) -> dict:
    """Heap and nodes still reachable (garbage collected first: detached nodes awaiting collection are not a leak),
    and the main thread's busy time so far."""
    cdp.send("HeapProfiler.collectGarbage")
    m = {x["name"]: x["value"] for x in cdp.send("Performance.getMetrics")["metrics"]}
    return {"s": time.perf_counter(), "heap_mb": m["JSHeapUsedSize"] / 1e6, "nodes": m["Nodes"],
            "listeners": m["JSEventListeners"], "busy_s": m.get("TaskDuration", 0.0)}


def _status_matches(page, pattern: str, timeout: float | None = None) -> float:
    """Wait until the status text matches the JS regex `pattern`; the page's clock (ms) when it did."""
    return page.wait_for_function(f"() => /{pattern}/.test(document.querySelector('#train-status').innerText) "
                                  f"&& performance.now()", timeout=timeout).json_value()


def _screenshots(page, when: str) -> None:
    """The Train tab at the projector's and the phone's size (the page's own size restored after)."""
    size = page.viewport_size
    for name, viewport in (("1280", tour.PROJECTOR), ("390", tour.PHONE)):
        page.set_viewport_size(viewport)
        page.wait_for_timeout(300)
        tour.small_screenshot(page, tour.SHOTS / f"train-live-{when}-{name}.png")
    page.set_viewport_size(size)


def test_a_live_run_keeps_the_page_light_readable_and_stoppable(lab):
    """While the default run streams: at most ~2.5 status updates a second; JS heap, DOM nodes and listeners do
    not grow with the run's length (the last sample within a small margin of the first, taken after the first
    evaluation); the status line readable (not greyed under a progress overlay); Stop answered with "Training
    stopped" within STOP_MS of the click beyond two of the page's round trips to the server, measured just
    before the click."""
    page = lab.page
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")
    tour.show_tab(page, "train")
    page.get_by_text("Hyper-parameters").click()
    steps = page.get_by_label("Steps (10-5000)")
    steps.fill("5000")  # the run outlasts the sampling window (the tiny preset's 1500 steps take about a minute)
    steps.press("Enter")
    page.evaluate(_WATCH)
    page.locator("#train-start").click()
    _status_matches(page, "step \\d", timeout=tour.TRAINING_MS)
    # the baseline: once the page has everything a run shows (an evaluation's map and samples) and has replaced them
    # once (the second evaluation: the components then hold what they hold for the rest of the run)
    page.locator("#train-attention svg.heatmap-chart rect.cell").first.wait_for(timeout=tour.TRAINING_MS)
    first_map = page.evaluate(_MAP_STEP)
    page.wait_for_function(f"() => ({_MAP_STEP})() !== {first_map!r}", timeout=tour.TRAINING_MS)
    page.wait_for_timeout(1000)
    start, t0 = _metrics(cdp), time.perf_counter()
    window_from = page.evaluate("() => performance.now()")
    samples, readable = [start], []
    attached = [page.evaluate(_ATTACHED)]
    while time.perf_counter() - t0 < SECONDS:
        page.wait_for_timeout(SAMPLE_EVERY_MS)
        samples.append(_metrics(cdp))
        attached.append(page.evaluate(_ATTACHED))
        readable.append(page.evaluate(_READABLE))
    window_to = page.evaluate("() => performance.now()")
    seconds = (window_to - window_from) / 1000
    statuses = page.evaluate("() => window.__statuses")
    rate = len([s for s in statuses if window_from <= s["ms"] <= window_to]) / seconds
    busy = (samples[-1]["busy_s"] - start["busy_s"]) / seconds
    still_training = "Training finished" not in statuses[-1]["text"]
    _screenshots(page, "mid-run")
    round_trip = page.evaluate(_ROUND_TRIP)
    clicked = page.evaluate("() => performance.now()")
    page.locator("#train-stop").click(force=True)
    _status_matches(page, "Training stopped")
    stopped = next(s["ms"] for s in page.evaluate("() => window.__statuses")
                   if s["ms"] >= clicked and "Training stopped" in s["text"])
    _screenshots(page, "after")
    heap, nodes, listeners = ([s[k] for s in samples] for k in ("heap_mb", "nodes", "listeners"))
    detached = [n - a[0] for n, a in zip(nodes, attached)]  # reachable but not on the page
    curves = [a[1] for a in attached]
    times = [s["s"] - start["s"] for s in samples]
    node_rate, heap_rate = _slope(times, detached), _slope(times, heap)
    MEASURED[f"live run, {seconds:.0f} s sampled"] = (
        f"{rate:.2f} status updates/s; JS heap {heap[0]:.1f} -> max {max(heap):.1f} -> {heap[-1]:.1f} MB; DOM nodes "
        f"{nodes[0]:.0f} -> max {max(nodes):.0f} -> {nodes[-1]:.0f} (detached {detached[0]:.0f} -> max "
        f"{max(detached):.0f} -> {detached[-1]:.0f}; the chart's elements {curves[0]} -> {curves[-1]}); listeners "
        f"{listeners[0]:.0f} -> max {max(listeners):.0f} -> {listeners[-1]:.0f}; growth {node_rate:.2f} detached "
        f"nodes/s, {heap_rate * 1000:.1f} kB heap/s; main thread busy {busy:.0%}; Stop click -> 'Training stopped' "
        f"{(stopped - clicked) / 1000:.2f} s (the page's round trip to the server then {round_trip:.0f} ms)")
    print(MEASURED[f"live run, {seconds:.0f} s sampled"])
    print("heap MB:", [round(h, 1) for h in heap], "nodes:", [int(n) for n in nodes], "listeners:",
          [int(n) for n in listeners])
    print("attached elements (page, curves, map, samples):", attached)
    assert still_training, "the run finished inside the sampling window: Stop could not be measured"
    assert rate <= 2.5, f"{rate:.2f} updates a second (the stream sends at most 2)"
    assert all(r["opacity"] > 0.99 and not r["covered"] for r in readable), readable
    assert node_rate <= NODES_PER_SECOND, f"detached nodes grow {node_rate:.1f} a second: {detached}"
    # the lower of the last two samples: one sample may catch a render in flight, gone at the next (+660 and +4,458
    # seen; the fresh-clone run ci6 failed on a last sample of 5,457 after 4,244 with the slope at 1.87 a second)
    assert min(detached[-2:]) <= detached[0] + NODE_MARGIN + NODES_PER_SECOND * times[-1], detached
    # what is on the page grows only by the chart's evaluation markers, which are thinned to LIVE_POINTS a curve
    assert attached[-1][0] - attached[0][0] <= 2 * (curves[-1] - curves[0]) + 50, attached
    assert curves[-1] <= 2 * LIVE_POINTS + 150, curves
    assert listeners[-1] <= listeners[0] + NODE_MARGIN, listeners
    assert heap_rate <= HEAP_MB_PER_SECOND, f"JS heap grows {heap_rate:.3f} MB a second: {heap}"
    assert heap[-1] <= heap[0] + HEAP_MARGIN_MB and max(heap) <= heap[0] + 2 * HEAP_MARGIN_MB, heap
    assert stopped - clicked <= STOP_MS + 2 * round_trip, (
        f"'Training stopped' {stopped - clicked:.0f} ms after the Stop click (round trip {round_trip:.0f} ms)")


def test_a_short_run_ends_with_training_finished(lab):
    """Regression: "Training finished" never appeared although the model was saved. A 30-step run's last update
    says it, names the model, and the model is in the checkpoint list."""
    page = lab.page
    tour.show_tab(page, "train")
    if not page.get_by_label("Steps (10-5000)").is_visible():
        page.get_by_text("Hyper-parameters").click()
    steps = page.get_by_label("Steps (10-5000)")
    steps.fill("30")
    steps.press("Enter")
    page.locator("#train-start").click()
    _status_matches(page, "Training finished", timeout=tour.TRAINING_MS)
    status = page.locator("#train-status").inner_text()
    assert "is now in the checkpoint list" in status and "exact match" in status, status
