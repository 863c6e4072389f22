"""axe-core on the real page (issue 40, item 1): no critical and no serious violation of the WCAG 2.0, 2.1 and 2.2 A
and AA rules, at 1280x800 (a projector) and 390x844 (a phone), on every tab with its figures drawn and every section
open, and after each demo that runs here, in the order of the demo row.

The engine is axe-core 4.12.1 as `axe-playwright-python==0.1.8` bundles it (requirements-dev.txt), injected into the
page and run on the whole document; what is hidden (the other tabs' panels) is not checked. Before the fix (main at
81db1ab) the first page alone had 69 serious nodes at 1280 (color-contrast 65, aria-prohibited-attr 4) and 68 at 390
(one more: scrollable-region-focusable). Moderate violations are counted and may not grow past MODERATE_AT_MOST.
"""
from __future__ import annotations

import pytest

from tests.browser import tour
from tests.browser.conftest import MEASURED

TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]  # axe's tags of the WCAG 2.0/2.1/2.2 A and AA rules
AXE_VERSION = "4.12.1"
# The moderate violations seen over a whole run (nodes, by rule), at most: lower it when a fix lowers it
MODERATE_AT_MOST = 0
# Serious violations known and not fixed yet, (width, rule) -> nodes at most in one check; a check finding more nodes,
# or the rule anywhere else, fails. Empty: the last entry, (390, "scrollable-region-focusable"): 2 (the Train tab's
# tables, which scroll sideways in gradio's Dataframe viewport at 390), went with widgets/accessible.py giving such a
# table's first header cell a place in the tab order.
KNOWN_SERIOUS: dict[tuple[int, str], int] = {}


def axe_violations(page) -> list[dict]:
    """axe-core's violations of the WCAG A and AA rules on the page as it is: [{id, impact, nodes: [target...]}]."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, options={"runOnly": {"type": "tag", "values": TAGS}, "resultTypes": ["violations"]})
    assert results.response["testEngine"]["version"] == AXE_VERSION
    return [{"id": v["id"], "impact": v["impact"],
             "nodes": [" ".join(map(str, n["target"])) + ": " + (n.get("failureSummary") or "")[:160]
                       for n in v["nodes"]]} for v in results.response["violations"]]


def open_every_section(page) -> int:
    """Open every closed section (accordion) of the selected tab; how many were opened."""
    closed = tour.visible_panel(page).locator(".label-wrap:not(.open)")
    opened = 0
    for _ in range(closed.count()):
        closed.first.click()
        opened += 1
    return opened


def wait_for_demo(page, demo) -> None:
    """After a demo's click: its explanation is shown, and the figure it is about drawn anew (its figures were
    cleared in the same update that showed the explanation)."""
    page.locator("#demo-explain", has_text=demo.label).wait_for()
    if demo.kind:
        page.locator(f"#{demo.figure} .main-svg").first.wait_for(timeout=tour.TRAINING_MS)
    tour.plots_drawn(page)


@pytest.mark.parametrize("width", [1280, 390])
def test_no_serious_or_critical_violation_on_any_tab_or_demo(open_at, app_url, width):
    """Behaviour: axe-core finds 0 critical and 0 serious violations on every tab (figures drawn, every section
    open) and after every demo; moderate ones stay within MODERATE_AT_MOST. Failed before the theme's colours,
    the placeholders' role and the scrolling boxes' focus (widgets/accessible.py): 69 / 68 serious nodes."""
    from tabs.demos import available_demos, runs

    page = open_at(width)
    serious, known, moderate, runs_done = [], [], {}, 0

    def check(where: str) -> None:
        nonlocal runs_done
        runs_done += 1
        for v in axe_violations(page):
            if v["impact"] == "serious" and len(v["nodes"]) <= KNOWN_SERIOUS.get((width, v["id"]), 0):
                known.append(f"{where}: {v['id']} x{len(v['nodes'])}")
            elif v["impact"] in ("critical", "serious"):
                serious.append(f"{where}: {v['impact']} {v['id']} x{len(v['nodes'])}: {v['nodes'][:3]}")
            else:
                moderate[v["id"]] = moderate.get(v["id"], 0) + len(v["nodes"])

    for key in tour.TABS:
        tour.visit(page, key)
        open_every_section(page)
        tour.plots_drawn(page)
        check(f"{width} tab {key}, sections open")
    # The demos on a fresh page, as a class meets them: sections closed unless the demo opens one. With every section
    # left open, each demo's click also redrew every open section and axe walked them all again: this test at 1280
    # took 348 s (axe alone 200 s, up to 40 s a check), on a fresh page 216 s, at the same load (~6 on 2 cores). The
    # fresh page also found a defect the open sections hid: the empty "Beside a real translator" figures read by axe
    # without their role (widgets.accessible names a placeholder as it is added)
    tour.open_app(page, app_url)
    kinds_seen = set()
    for demo in available_demos():
        if not runs(demo):
            continue
        kind = (demo.figure, demo.show, demo.watch)  # what a demo leaves on the page that axe reads
        if width != 1280 and kind in kinds_seen:  # a phone: each kind of page once (1280 runs every demo); what
            continue  # differs at 390 is the layout (reflow, sideways boxes), the same for two demos of one kind
        kinds_seen.add(kind)
        tour.click_demo(page, demo.label)
        wait_for_demo(page, demo)
        check(f"{width} after {demo.label!r}")
        if demo.watch:  # the watch trains at once: stop it, the page checked while it ran (by the keyboard: the
            # page follows the growing status line, and a mouse click on Stop waited for it to hold still at 390)
            page.locator("#train-stop").focus()
            page.keyboard.press("Enter")
            page.wait_for_function("() => /stopped/i.test(document.querySelector('#train-status').textContent)",
                                   timeout=tour.TRAINING_MS)
    MEASURED[f"axe-core {AXE_VERSION} at {width}"] = (f"{runs_done} runs, {len(serious)} with serious or critical "
                                                      f"violations, known and not fixed yet {known}, moderate nodes "
                                                      f"by rule {moderate}")
    assert not serious, "\n".join(serious)
    assert sum(moderate.values()) <= MODERATE_AT_MOST, moderate
