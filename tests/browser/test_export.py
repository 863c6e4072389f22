"""Export (issue 29, "what teachers ask"): every figure saves as a PNG (made in the browser) and as one HTML file
that draws it offline (made by the server), in the real page and chromium."""
from __future__ import annotations

import contextlib
import struct

from tests.browser import tour

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# The heatmap's cells as plotly.js holds them after drawing, as lists (typed arrays and base64 decoded alike)
_Z = "(plot) => plot._fullData[0].z.map(row => Array.from(row, v => (v === null || Number.isNaN(v)) ? null : v))"
_SIZE = "(plot) => [plot._fullLayout.width, plot._fullLayout.height]"


@contextlib.contextmanager
def opened_offline(browser, path):
    """(page, requests tried): `path` opened from disk in a new page whose every request but the file is aborted."""
    page, outside = browser.new_page(reduced_motion=tour.REDUCED_MOTION), []
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
               else (outside.append(route.request.url), route.abort("blockedbyclient")))
    try:
        page.goto(path.as_uri())
        yield page, outside
    finally:
        page.close()


def _shown_heatmap(page):
    tour.show_tab(page, "attention")
    page.locator("#att-one .main-svg").first.wait_for()
    return page.locator("#att-one .js-plotly-plot")


def test_png_is_the_figure_as_drawn(lab):
    """Oracle: the PNG file's own header. A click saves a file that starts with the PNG signature and whose IHDR
    width and height are the drawn figure's (plotly's layout size in the page), and the line under the figure
    says so."""
    page = lab.page
    plot = _shown_heatmap(page)
    width, height = plot.evaluate(_SIZE)
    with page.expect_download() as download:
        page.locator("#att-one-png").click()
    data = open(download.value.path(), "rb").read()
    assert download.value.suggested_filename == "attention-head.png"
    assert data[:8] == PNG_SIGNATURE and data[12:16] == b"IHDR"
    assert struct.unpack(">II", data[16:24]) == (round(width), round(height))
    page.wait_for_function("() => document.querySelector('#att-one-saved').innerText.includes('px')")
    assert f"{round(width)} × {round(height)} px" in page.locator("#att-one-saved").inner_text()


def test_html_opens_offline_and_draws_the_same_cells(lab, browser, tmp_path):
    """Oracle: the app's own heatmap in the page. The downloaded HTML, opened from disk in a page whose every
    request other than the file itself is aborted, draws a heatmap whose cells equal the app's, and asked for
    nothing (plotly.js is inside it)."""
    page = lab.page
    app_z = _shown_heatmap(page).evaluate(_Z)
    with page.expect_download() as download:
        page.locator("#att-one-html").click()
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)
    assert saved.name == "attention-head.html" and saved.stat().st_size > 3_000_000  # plotly.js inside
    with opened_offline(browser, saved) as (offline, outside):
        offline.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=tour.TIMEOUT_MS)
        assert offline.locator(".js-plotly-plot").first.evaluate(_Z) == app_z
    assert outside == []


def test_an_empty_figure_says_so_in_words(lab):
    """Refusal: the Generate tab's "where it looked" is empty until something is generated; its PNG button says
    there is no figure yet, and its HTML button says the same in an error."""
    page = lab.page
    tour.show_tab(page, "generate")
    page.locator("#gen-where-png").click()
    page.wait_for_function("() => document.querySelector('#gen-where-saved').innerText.includes('No figure')")
    page.locator("#gen-where-html").click()
    page.locator(".toast-body", has_text="No figure here yet").wait_for()


def test_the_training_chart_saves_as_png_and_as_a_page_of_its_own(lab, browser, tmp_path):
    """Oracle: the chart's SVG in the app. The Train tab's live chart (an SVG, not plotly) saves in the page: the
    PNG has the chart's size on screen, and the HTML, opened from disk with every other request aborted, holds
    the same SVG (the same number of drawn elements and the same title)."""
    page = lab.page
    tour.show_tab(page, "train")
    chart = page.locator("#train-curves svg")
    box = chart.bounding_box()
    with page.expect_download() as download:
        page.locator("#train-curves-png").click()
    data = open(download.value.path(), "rb").read()
    assert data[:8] == PNG_SIGNATURE and struct.unpack(">II", data[16:24]) == (round(box["width"]),
                                                                            round(box["height"]))
    with page.expect_download() as download:
        page.locator("#train-curves-html").click()
    saved = tmp_path / "training-curves.html"
    download.value.save_as(saved)
    shown = chart.evaluate("svg => [svg.querySelectorAll('*').length, svg.querySelector('.title').textContent]")
    with opened_offline(browser, saved) as (offline, outside):
        assert offline.locator("svg").evaluate(
            "svg => [svg.querySelectorAll('*').length, svg.querySelector('.title').textContent]") == shown
    assert outside == []
