"""What a drawn heatmap looks like on the page, measured in the browser (plotly's own layout of the drawn figure): its
cells' sides, its labels' type, its colour bar, its texts' overlaps. The browser tests that ask a figure to be
readable (test_layout.py's demo walk, test_fit_the_screen.py, test_class_session.py) measure with these and assert
with `readable`."""
from __future__ import annotations

import tempfile
from pathlib import Path

from tests.browser import tour
from tests.browser.conftest import MEASURED

SHOTS = Path(tempfile.gettempdir()) / "attention-lab-screenshots"
MIN_HEAD_PX = 120  # a head of the grid narrower than this cannot be read on a phone

# JS: the plot areas of a figure's axes, {name: {offset, length}} in px (plotly's own layout of the drawn figure).
AXES = """(sel) => {
    const gd = document.querySelector(sel + ' .js-plotly-plot');
    const full = gd && gd._fullLayout;
    if (!full) return null;
    const boxes = {};
    for (const name of Object.keys(full)) {
        if (!/^[xy]axis\\d*$/.test(name)) continue;
        const ax = full[name];
        boxes[name] = {offset: ax._offset, length: ax._length};
    }
    return boxes;
}"""
# JS: the tick labels drawn on the one-head heatmap's x and y axes.
TICKS = """() => ({x: [...document.querySelectorAll('#att-one .xtick text')].map(t => t.textContent),
                  y: [...document.querySelectorAll('#att-one .ytick text')].map(t => t.textContent)})"""

# JS: of the heatmap of the figure under `sel`: its cells' side (axis length / number of categories), the font sizes
# of its tick labels and cell texts (px), how many of each, the gold circles' widths, whether the figure scrolls
# sideways in its box, and whether the colour bar reaches into the plot area.
_CELLS = """(sel) => {
    const gd = document.querySelector(sel + ' .js-plotly-plot');
    const full = gd && gd._fullLayout;
    if (!full) return null;
    const size = t => parseFloat(t.style.fontSize || getComputedStyle(t).fontSize);
    const ticks = [...gd.querySelectorAll('.xtick text, .ytick text')];
    const cells = [...gd.querySelectorAll('svg.main-svg text')].filter(t => t.closest('.heatmap-label'));
    const plot = gd.querySelector('.nsewdrag').getBoundingClientRect();
    const bar = gd.querySelector('.colorbar');
    const b = bar && bar.getBoundingClientRect();
    const into = b ? Math.max(0, Math.min(b.right, plot.right) - Math.max(b.left, plot.left)) > 1
                     && Math.max(0, Math.min(b.bottom, plot.bottom) - Math.max(b.top, plot.top)) > 1 : false;
    return {column: full.xaxis._length / full.xaxis._categories.length,
            row: full.yaxis._length / full.yaxis._categories.length,
            xticks: gd.querySelectorAll('.xtick text').length, yticks: gd.querySelectorAll('.ytick text').length,
            tick_font: Math.min(...ticks.map(size)), cells: cells.length,
            cell_font: cells.length ? Math.min(...cells.map(size)) : null,
            circles: [...gd.querySelectorAll('.scatterlayer .point')].map(p => p.getBoundingClientRect().width),
            scrolls: gd.scrollWidth > gd.clientWidth + 1, width: full.width, box: gd.clientWidth,
            bar_in_plot: into};
}"""


def wait_title(page, pattern: str) -> str:
    """Wait until the one-head heatmap's title matches the regular expression `pattern`; return the title."""
    page.wait_for_function("re => new RegExp(re).test((document.querySelector('#att-one .gtitle') || {}).textContent"
                           " || '')", arg=pattern)
    return page.locator("#att-one .gtitle").text_content()


def cells(page, sel: str) -> dict:
    """The heatmap under `sel` as drawn (_CELLS), once it is drawn, in view and has not been redrawn for a while."""
    page.locator(f"{sel} .heatmaplayer").first.wait_for()
    page.locator(sel).scroll_into_view_if_needed()
    tour.plots_drawn(page)
    tour.figure_at_rest(page, sel)  # plotly's automargin may redraw once more
    found = page.evaluate(_CELLS, sel)
    for _ in range(50):  # caught between a figure's removal and its redraw (seen once in CI): read it again
        if found is not None:
            break
        page.wait_for_timeout(200)
        found = page.evaluate(_CELLS, sel)
    return found


def readable(found: dict, what: str) -> None:
    """Every cell at least MIN_CELL_PX each way, every label and cell text at least MIN_LABEL_PX, the colour bar
    outside the plot area."""
    from visualize.sizes import MIN_CELL_PX, MIN_LABEL_PX

    assert found["column"] >= MIN_CELL_PX - 0.5 and found["row"] >= MIN_CELL_PX - 0.5, (what, found)
    assert found["tick_font"] >= MIN_LABEL_PX and (found["cell_font"] or MIN_LABEL_PX) >= MIN_LABEL_PX, (what, found)
    assert not found["bar_in_plot"], (what, "the colour bar covers the plot", found)


def measured(name: str, found: dict) -> None:
    """The sizes found, for the run's summary."""
    circles = f", circles <= {max(found['circles']):.0f} px" if found["circles"] else ""
    text = f", cell text {found['cell_font']:.0f} px" if found["cell_font"] else ""
    MEASURED[name] = (f"{found['column']:.0f} x {found['row']:.0f} px, labels {found['tick_font']:.0f} px{text}"
                      f"{circles}, figure {found['width']:.0f} px in a {found['box']} px box")


def overlaps(page, sel: str, shot: str) -> list[str]:
    """The text problems of the figure under `sel` (tour.text_overlaps), with a screenshot of it saved as `shot`."""
    figure = next(f for f in tour.figure_texts(page, sel))
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(sel).screenshot(path=str(SHOTS / shot))
    return tour.text_overlaps(figure)
