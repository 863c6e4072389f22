"""The smallest readable heatmap: the one owner of the minimum cell and label sizes, and of a figure's size.

A heatmap shown on a projector or a phone never shrinks its cells below MIN_CELL_PX or its labels below MIN_LABEL_PX
to fit the width it is given: past that it keeps the size and grows wider than its box, which the page scrolls
sideways (app's CSS), or it is drawn turned (the logit lens puts the positions down). `figure_size` is the rule.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

MIN_LABEL_PX = 12  # the smallest tick label or cell text (px): a projector's back row and a phone at arm's length
MAX_LABEL_CHARS = 16  # the longest tick label (characters): a longer token or word is cut, its last one "…" (the
# hover names it whole). A 40-character word upright took 392 px beside a 720 px heatmap and pushed a layer's grid's
# margins past its height: plotly threw "Something went wrong with axis scaling" and the page stopped drawing
MIN_CELL_PX = 16  # the smallest side of a cell (px): holds a MIN_LABEL_PX label upright (a 1.25 x 12 = 15 px line)
# or two characters across, and a gold circle inside it
PAGE_MARGIN_PX = 64  # a full-width block is the page's width less this (measured in chromium: 1216 px at 1280, 326 at
# 390); the page is at most PAGE_MAX_PX wide (app's CSS)
PAGE_MAX_PX = 1500
SECTION_INSET_PX = 24  # an accordion's padding: a figure inside one is this much narrower (1192 px at 1280, 302 at 390)
COLUMN_GAP_PX = 16  # between the columns of a row (measured: two plots of a 1192 px section are 588 px each)


@dataclass(frozen=True)
class FigureSize:
    """A figure's size: `width` None = the width of its box (plotly's autosize), else a width larger than the box
    (the page scrolls it sideways); `height`; the side of a cell along x and y as drawn."""

    width: int | None
    height: int
    column_px: float
    row_px: float


def box_width(page_width: float, in_section: bool = False, columns: int = 1) -> float:
    """The width (px) of a figure's box on a page `page_width` px wide: the page's full width (inside an accordion
    with `in_section`), or one of `columns` side by side in it."""
    full = min(page_width, PAGE_MAX_PX) - PAGE_MARGIN_PX - (SECTION_INSET_PX if in_section else 0)
    return (full - COLUMN_GAP_PX * (columns - 1)) / columns


def bars_that_fit(container_px: float, around_px: float) -> int:
    """How many bars (or columns) of at least MIN_CELL_PX fit in a box `container_px` wide with `around_px` of it
    taken by labels and margins beside them; at least 1. Example: a 600 px box, 100 px around: 500 // 16 = 31."""
    return max(1, int((container_px - around_px) // MIN_CELL_PX))


def figure_size(n_columns: int, n_rows: int, container_px: float, around_x: float = 0.0, around_y: float = 0.0,
                column_px: float = MIN_CELL_PX, row_px: float = MIN_CELL_PX, min_height: float = 0.0
                ) -> FigureSize:
    """The size of a figure of n_columns x n_rows cells in a box `container_px` wide, with `around_x` px of it
    (labels, margins) beside the cells and `around_y` above and below them.

    Columns share the box's width when each then gets at least `column_px` (the width is the box's: None);
    otherwise each gets `column_px` and the figure is around_x + n_columns * column_px wide, more than the box.
    The height is around_y + n_rows * row_px, at least `min_height`.
    Example: 16 columns in a 302 px box with 60 px around: 242 / 16 = 15.1 px < 16, so width 60 + 16 * 16 = 316.
    """
    if n_columns < 1 or n_rows < 1:
        raise ValueError(f"a figure needs at least one column and one row, got {n_columns} x {n_rows}")
    if column_px <= 0 or row_px <= 0:
        raise ValueError(f"cells must be larger than 0 px, got {column_px} x {row_px}")
    free = container_px - around_x
    if free >= n_columns * column_px:
        width, column = None, free / n_columns
    else:
        width, column = math.ceil(around_x + n_columns * column_px), float(column_px)
    height = max(math.ceil(min_height), math.ceil(around_y + n_rows * row_px))
    return FigureSize(width, height, column, float(row_px))
