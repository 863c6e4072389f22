"""A comparison stopped in the browser (issue 29, item 10, its last part, which had an app test only): after Stop
the chart's legend names only the variants that drew a curve, read off the SVG as the page shows it."""
from __future__ import annotations

from tests.browser import tour
from tests.chart_reader import read_chart

_SVG = "() => { const s = document.querySelector('#train-curves svg.svg-figure'); return s ? s.outerHTML : ''; }"
_STATUS = "() => document.querySelector('#train-status').innerText"


def _chart(page) -> dict:
    svg = page.evaluate(_SVG)
    return read_chart(svg) if "polyline" in svg else {"legend": [], "curves": {}}


def test_after_stop_the_comparison_legend_names_only_the_variants_with_a_curve(lab):
    """Regression (issue 29, item 10): after Stop the comparison's legend still listed every planned variant, some
    with no curve (MQA after a stop during GQA). Oracle: the curves drawn in the page's SVG (tests/chart_reader,
    which reads the drawing through its own axes). "Compare variants" (MHA, GQA, MQA) is stopped once the first
    variant has drawn points; then the legend is exactly the curves that have points, fewer than the three planned,
    and the status says the comparison stopped."""
    page = lab.page
    tour.show_tab(page, "train")
    page.locator("#train-compare").click()
    page.wait_for_function(f"() => ({_SVG})().includes('kv heads') && /step|Training/.test(({_STATUS})())",
                           timeout=120_000)
    planned = _chart(page)["legend"]
    for _ in range(600):  # the first variant's first points (at most 2 minutes on a busy machine)
        if any(len(c["x"]) >= 2 for c in _chart(page)["curves"].values()):
            break
        page.wait_for_timeout(200)
    page.locator("#train-stop").click()
    page.wait_for_function(f"() => ({_STATUS})().includes('Comparison stopped')", timeout=120_000)
    page.wait_for_timeout(500)  # the ended chart comes with the status
    chart = _chart(page)
    drawn = [name for name, curve in chart["curves"].items() if curve["x"]]
    assert len(planned) == 3 and drawn, (planned, chart)
    assert chart["legend"] == drawn and len(drawn) < len(planned), (planned, chart["legend"], drawn)
