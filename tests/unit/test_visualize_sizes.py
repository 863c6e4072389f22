"""The minimum readable heatmap (visualize.sizes, issue 29 item 2): figure_size on numbers worked by hand."""
from __future__ import annotations

import pytest

from visualize.sizes import MIN_CELL_PX, MIN_LABEL_PX, box_width, figure_size


def test_cells_that_fit_share_the_box():
    """Oracle, by hand: 10 columns in a 1192 px box with 92 px around: (1192 - 92) / 10 = 110 px each, the width
    left to the box (None); 7 rows of 30 px + 100 = 310 px high."""
    size = figure_size(10, 7, 1192, around_x=92, around_y=100, row_px=30)
    assert size.width is None and size.column_px == 110 and size.height == 310 and size.row_px == 30


def test_cells_below_the_minimum_keep_it_and_the_figure_grows_wider_than_its_box():
    """Oracle, by hand: 16 columns in a 302 px box (a phone's section) with 60 px around would be 15.1 px each;
    they keep MIN_CELL_PX (16) and the figure is 60 + 16 x 16 = 316 px, wider than the box (the page scrolls it)."""
    size = figure_size(16, 12, 302, around_x=60, around_y=90)
    assert MIN_CELL_PX == 16 and size.column_px == 16 and size.width == 316 > 302
    assert size.height == 90 + 12 * 16


def test_the_minimum_height_and_exact_fit():
    """Invariant: exactly n x column_px free is enough (no scroll); the height never falls below min_height."""
    size = figure_size(5, 1, 5 * MIN_CELL_PX + 10, around_x=10, min_height=320)
    assert size.width is None and size.column_px == MIN_CELL_PX and size.height == 320


def test_the_box_of_a_full_width_figure_is_the_measured_one():
    """Measured in chromium on the app: full-width blocks 1216 px at 1280 and 326 at 390; inside an accordion
    1192 and 302. MIN_LABEL_PX is readable (12 px or more)."""
    assert (box_width(1280), box_width(390)) == (1216, 326)
    assert (box_width(1280, in_section=True), box_width(390, in_section=True)) == (1192, 302)
    assert box_width(3000) == 1500 - 64 and MIN_LABEL_PX >= 12
    assert box_width(1280, in_section=True, columns=2) == 588  # measured: the two-inputs maps at 1280


@pytest.mark.parametrize("columns, rows, cell", [(0, 3, 24), (3, 0, 24), (3, 3, 0)])
def test_no_cells_is_refused(columns, rows, cell):
    with pytest.raises(ValueError):
        figure_size(columns, rows, 300, column_px=cell)


@pytest.mark.parametrize("page_width", [320, 390, 640, 641, 1024, 1280, 1920])
def test_where_it_looked_shows_as_many_bars_as_fit_readable(page_width):
    """Invariant (issue 29, item 7): visualize.bars_shown(width) bars each get at least MIN_CELL_PX of their box
    (half the page beside the top alternatives, the whole width on a phone, less BAR_AROUND_PX), and one more would
    not; at most the cap, and the cap when the page's width is not known (an API client)."""
    from visualize import bars_shown, narrow_page
    from visualize.generation import BAR_AROUND_PX

    room = box_width(page_width, columns=1 if narrow_page(page_width) else 2) - BAR_AROUND_PX
    n = bars_shown(page_width, 64)
    assert n * MIN_CELL_PX <= room < (n + 1) * MIN_CELL_PX or n == 64
    assert bars_shown(page_width, 5) == min(5, n) and bars_shown(None, 64) == 64
