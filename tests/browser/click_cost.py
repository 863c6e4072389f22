"""What one click costs the page: the server calls it sets off, the plotly figures it (re)draws and the long tasks
(> 50 ms) of the page's main thread, read in a real browser. tests/browser/test_translation_demo.py asserts the counts;
bench/demo_click_cost.py prints the milliseconds (timed figures are not asserted: the machine is shared).

`watch(page)` wraps plotly's `Plotly.react` (the call gradio's Plot makes for every new value, followed by
`Plots.resize`) and the page's `structuredClone`, and observes 'longtask' entries, in the loaded page and the ones
it loads next. `structuredClone` counts the values the page deep-copies: gradio's page snapshots (Svelte's
`$state.snapshot`, which calls it on every value it copies) each component that has held a loading status, at each
status update of each call (widgets.ui.progress_only_where_drawn).
"""
from __future__ import annotations

import json
import re
import time
from collections import Counter
from dataclasses import dataclass, field

# JS: every Plotly.react call (the gr.Plot's elem_id, ' (hidden)' when not on screen, when and how long), every
# long task and the number of values deep-copied (structuredClone calls)
_WATCH = """() => {
    if (window.__draws) return;
    window.__draws = [];
    window.__long = [];
    window.__copies = 0;
    const clone = window.structuredClone;
    window.structuredClone = function (...args) { window.__copies++; return clone.apply(this, args); };
    new PerformanceObserver(list => {
        for (const e of list.getEntries()) window.__long.push({start: e.startTime, ms: e.duration});
    }).observe({type: 'longtask', buffered: true});
    const wrap = value => {
        const react = value.react;
        value.react = function (gd, ...rest) {
            const owner = gd.closest('[id]:not(.js-plotly-plot)');
            const shown = gd.checkVisibility({visibilityProperty: true});
            const at = performance.now(), drawn = react.call(this, gd, ...rest);
            window.__draws.push({id: (owner ? owner.id : '') + (shown ? '' : ' (hidden)'), at,
                                 ms: performance.now() - at});
            return drawn;
        };
        return value;
    };
    let plotly = window.Plotly && wrap(window.Plotly);  // a page that has drawn already
    Object.defineProperty(window, 'Plotly', {configurable: true, get: () => plotly,
                                            set: value => { plotly = wrap(value); }});
}"""
# JS: for each elem_id given, the margins its plotly figure was given and those plotly laid it out with (l, r, t, b)
_MARGINS = """ids => ids.map(id => {
    const gd = document.querySelector('#' + id + ' .js-plotly-plot'), layout = gd && gd._fullLayout;
    return layout ? [id, ['l', 'r', 't', 'b'].map(k => layout.margin[k]), ['l', 'r', 't', 'b'].map(k => layout._size[k])]
                  : [id, null, null];
})"""
SERVER_CALLS = ("/gradio_api/queue/join", "/gradio_api/run/predict")  # queued calls, and those run at once


@dataclass
class ClickCost:
    """What the page did after one click, until it was quiet: each server call (the event's api name or id, and
    whether it was queued), each figure drawn (its gr.Plot's elem_id) and the long tasks' durations (ms)."""

    calls: list[tuple[str, bool]] = field(default_factory=list)
    draws: Counter = field(default_factory=Counter)
    draw_ms: float = 0.0  # inside Plotly.react, all figures together
    long_tasks_ms: list[float] = field(default_factory=list)
    copies: int = 0  # values the page deep-copied (structuredClone calls)
    cpu_ms: float | None = None  # the main thread's CPU time (with a `cpu_clock`)

    @property
    def names(self) -> Counter:
        """How many calls of each event, by its api name without the number gradio appends to repeated names."""
        return Counter(re.sub(r"_\d+$", "", name) for name, _ in self.calls)

    @property
    def queued(self) -> int:
        return sum(queued for _, queued in self.calls)

    @property
    def long_ms(self) -> float:
        return sum(self.long_tasks_ms)

    def describe(self) -> str:
        names = Counter(name for name, _ in self.calls)
        return (f"{len(self.calls)} server calls ({self.queued} queued): {dict(names)}; {sum(self.draws.values())} "
                f"figures drawn: {dict(self.draws)}; {self.copies} values deep-copied; long tasks "
                f"{self.long_ms:.0f} ms in {len(self.long_tasks_ms)}"
                + ("" if self.cpu_ms is None else f"; main thread CPU {self.cpu_ms:.0f} ms"))


def watch(page) -> None:
    """Wrap plotly's drawing and observe long tasks in the page's document and every one it loads from now on
    (long tasks from before this call are not seen in a loaded document)."""
    page.add_init_script(f"({_WATCH})()")
    page.evaluate(_WATCH)


def drawn_after(page, press, figure: str = "att-one"):
    """A click for `measure`: `press()`, then wait until the figure whose elem_id is `figure` is drawn again (a title
    on screen may still be the previous input's)."""
    def click():
        count = f"() => window.__draws.filter(d => d.id === {json.dumps(figure)}).length"
        before = page.evaluate(count)
        press()
        page.wait_for_function(f"n => ({count})() > n", arg=before, timeout=120_000)
    return click


def margins_pushed(page, ids) -> dict[str, tuple]:
    """{elem_id: (margins given, margins used)} of the figures among `ids` that plotly laid out with other margins
    than those it was given (more than its 1 px tolerance): plotly then drew them twice (visualize.margins). A figure
    not drawn counts as pushed (None, None)."""
    return {id_: (asked, used) for id_, asked, used in page.evaluate(_MARGINS, list(ids))
            if asked is None or any(abs(a - u) > 1 for a, u in zip(asked, used))}


def event_names(url: str) -> dict[int, str]:
    """{fn_index: the event's api name, or 'fn<index>' for one without}: the page's own config."""
    import urllib.request

    with urllib.request.urlopen(url.rstrip("/") + "/config", timeout=30) as r:
        config = json.load(r)
    return {dep["id"]: dep.get("api_name") or f"fn{dep['id']}" for dep in config["dependencies"]}


def cpu_clock(page):
    """A function that reads the CPU time (ms) of the page's main thread so far (DevTools' Performance metrics in
    thread time): unlike the long tasks' wall time, it does not grow with other processes' load on the machine."""
    session = page.context.new_cdp_session(page)
    session.send("Performance.enable", {"timeDomain": "threadTicks"})
    return lambda: 1000 * next(m["value"] for m in session.send("Performance.getMetrics")["metrics"]
                                if m["name"] == "ThreadTime")


def measure(page, click, names: dict[int, str], quiet_s: float = 2.5, timeout_s: float = 90,
            clock=None) -> ClickCost:
    """Call `click()` (which clicks and may wait for what it expects), then wait until no server call was made and no
    figure drawn for `quiet_s`; what happened from the click on (and the main thread's CPU time, with a `clock`
    from `cpu_clock`)."""
    cost, last = ClickCost(), [time.monotonic()]
    cpu_before = clock() if clock else None

    def on_request(request):
        path = next((p for p in SERVER_CALLS if p in request.url), None)
        if path is None or request.method != "POST":
            return
        body = json.loads(request.post_data or "{}")
        cost.calls.append((names.get(body.get("fn_index"), f"fn{body.get('fn_index')}"), path == SERVER_CALLS[0]))
        last[0] = time.monotonic()

    start, copied = page.evaluate("() => [performance.now(), window.__copies]")
    page.on("request", on_request)
    try:
        click()
        drawn, deadline = 0, time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            page.wait_for_timeout(250)
            now = page.evaluate("t => window.__draws.filter(d => d.at >= t).length", start)
            if now != drawn:
                drawn, last[0] = now, time.monotonic()
            if time.monotonic() - last[0] >= quiet_s:
                break
    finally:
        page.remove_listener("request", on_request)
    cost.draws.update(page.evaluate("t => window.__draws.filter(d => d.at >= t).map(d => d.id)", start))
    cost.draw_ms = page.evaluate("t => window.__draws.filter(d => d.at >= t).reduce((s, d) => s + d.ms, 0)", start)
    cost.long_tasks_ms = page.evaluate("t => window.__long.filter(e => e.start >= t).map(e => e.ms)", start)
    cost.copies = page.evaluate("() => window.__copies") - copied
    if clock:
        cost.cpu_ms = clock() - cpu_before
    return cost
