"""Motion and zoom (issue 40, item 5): the page's scroll to a figure follows `prefers-reduced-motion`, and the page
keeps all of its content at 200% zoom on a projector (WCAG 1.4.4) and reflowed to 320 CSS px (1.4.10).

200% zoom at 1280x800 is a 640x400 CSS px viewport at two device pixels per CSS px; 320 CSS px is 1280 at 400%.
"Content lost" is text cut by a box that hides its overflow (its own or an ancestor's), or text laid out past the
page's edge where nothing scrolls to it. A figure or a table that scrolls sideways in its own box is allowed
(1.4.10's exception for content that needs two dimensions), and so is the page scrolling down.
"""
from __future__ import annotations

import pytest

from tests.browser import tour
from tests.browser.conftest import MEASURED
from tabs.ask_first import IN_VIEW

# JS: scroll the page to its end, then bring the one-head heatmap into view as a demo does (tabs.ask_first.IN_VIEW)
# and record the page's scroll position at every frame until it has held still for 10 frames
_SCROLL_FRAMES = """async () => {
    window.scrollTo(0, document.documentElement.scrollHeight);
    await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
    const start = window.scrollY, seen = [];
    (IN_VIEW)('att-one');
    let still = 0;
    while (still < 10 && seen.length < 600) {
        seen.push(window.scrollY);
        await new Promise(requestAnimationFrame);
        still = window.scrollY === seen[seen.length - 1] ? still + 1 : 0;
    }
    return {start, seen, end: window.scrollY};
}""".replace("IN_VIEW", IN_VIEW)
# JS: gradio's own smooth scroll (to an error) asked for, and where the page is right after the call
_GRADIO_SMOOTH = """() => { window.scrollTo({top: 0, behavior: 'smooth'}); return window.scrollY; }"""


@pytest.mark.parametrize("motion", ["reduce", "no-preference"])
def test_the_scroll_to_a_figure_follows_prefers_reduced_motion(browser, app_url, motion):
    """Behaviour: with reduced motion the page lands on the heatmap at once (no frame in between) and gradio's own
    smooth scrolls land at once too; without it, the page glides there over several frames. Both end with the
    heatmap in view. Failed before (IN_VIEW jumped at once whatever the visitor preferred: 0 frames in between with
    no-preference), and gradio's smooth scroll slid under reduced motion."""
    page, _ = tour.new_page(browser)
    try:
        page.set_viewport_size(tour.PROJECTOR)
        page.emulate_media(reduced_motion=motion)
        tour.open_app(page, app_url)
        tour.visit(page, "attention")
        page.locator("#att-one .main-svg").first.wait_for()
        frames = page.evaluate(_SCROLL_FRAMES)
        between = [y for y in frames["seen"][1:] if y not in (frames["start"], frames["end"])]
        box = page.locator("#att-one .main-svg").first.bounding_box()
        MEASURED[f"scroll to the heatmap, {motion}"] = (f"{frames['start']:.0f} -> {frames['end']:.0f} px, "
                                                        f"{len(set(between))} positions in between")
        assert frames["end"] < frames["start"], frames  # it scrolled up to the heatmap
        assert -1 <= box["y"] < tour.PROJECTOR["height"], box  # (the page scrolls by whole pixels)
        if motion == "reduce":
            assert not between, f"with reduced motion the page passed through {between[:10]}"
            assert page.evaluate(_GRADIO_SMOOTH) == 0
        else:
            assert len(set(between)) >= 2, f"without reduced motion the page jumped: {frames['seen'][:5]}"
    finally:
        page.close()


# JS: every piece of visible text (an element's own text) that is cut or lost: [{text, why}]
_LOST = """() => {
    const width = document.documentElement.clientWidth, lost = [];
    const scrolls = (s) => ['auto', 'scroll'].includes(s.overflowX);
    for (const e of document.querySelectorAll('body *')) {
        if (e.closest('svg, .sr-only, .js-plotly-plot, [aria-hidden=true], .virtual-table-viewport')) continue;
        if (![...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
        if (!e.checkVisibility({visibilityProperty: true, opacityProperty: true})) continue;
        const r = e.getBoundingClientRect();
        if (r.width < 1 || r.height < 1) continue;
        const text = e.textContent.trim().slice(0, 40), s = getComputedStyle(e);
        if (['hidden', 'clip'].includes(s.overflowX) && e.scrollWidth > e.clientWidth + 1) {
            lost.push({text, why: `cut by its own box (${e.scrollWidth} > ${e.clientWidth} px)`});
            continue;
        }
        let scroller = false;
        for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
            const ps = getComputedStyle(p);
            if (scrolls(ps)) { scroller = true; break; }
            if (!['hidden', 'clip'].includes(ps.overflowX)) continue;
            const b = p.getBoundingClientRect();
            if (r.right > b.right + 1 || r.left < b.left - 1) {
                lost.push({text, why: `cut by ${p.id || p.className} at x ${b.left.toFixed(0)}-${b.right.toFixed(0)}`});
                break;
            }
        }
        if (!scroller && (r.right > width + 1 || r.left < -1)) {
            lost.push({text, why: `off the page at x ${r.left.toFixed(0)}-${r.right.toFixed(0)} of ${width}`});
        }
    }
    return {lost, pageWidth: document.documentElement.scrollWidth, width};
}"""
ZOOMS = {"200% at 1280x800": ({"width": 640, "height": 400}, 2), "reflow at 320": ({"width": 320, "height": 256}, 4)}


@pytest.mark.parametrize("zoom", list(ZOOMS))
def test_no_content_is_lost_when_zoomed(browser, app_url, zoom):
    """Behaviour: on every tab, its figures drawn (and after a demo), no text is cut or pushed off the page, the
    page does not scroll sideways, and every tab and demo button can be reached."""
    viewport, scale = ZOOMS[zoom]
    page = browser.new_page(viewport=viewport, device_scale_factor=scale, reduced_motion=tour.REDUCED_MOTION)
    page.set_default_timeout(tour.TIMEOUT_MS)
    tour.OfflineGuard().install(page)
    try:
        tour.open_app(page, app_url)
        problems = []
        tour.click_demo(page, "Reading backwards")
        page.locator("#demo-explain", has_text="Reading backwards").wait_for()
        for key in tour.TABS:
            tour.visit(page, key)
            tour.plots_drawn(page)
            found = page.evaluate(_LOST)
            problems += [f"{key}: {p['text']!r} {p['why']}" for p in found["lost"]]
            if found["pageWidth"] > found["width"] + 1:
                problems.append(f"{key}: the page scrolls sideways ({found['pageWidth']} > {found['width']} px)")
        for button in page.locator("[role=tab], #demo-row button").all():
            button.scroll_into_view_if_needed()
            box = button.bounding_box()
            if not box or box["x"] < -1 or box["x"] + box["width"] > viewport["width"] + 1:
                problems.append(f"button {button.text_content()!r} cannot be reached: {box}")
        MEASURED[f"zoom {zoom}"] = f"{len(problems)} pieces of content lost"
        assert not problems, "\n".join(problems[:40])
    finally:
        page.close()
