"""The patching section's figures from its grids (tabs.attention.patching): a grid with each cell's words in the
hover, the heads grid with the selected head outlined, the paths into or out of a head, and the boxes they fit on a
page of a given width."""
from __future__ import annotations

import visualize as viz
from visualize.sizes import box_width

from checks import check_index


def paths_figure(grids: dict, title: str, box: float | None):
    """{kind: Grid (input, layer, head)} as one figure: a row per (kind, layer, input) with any path, heads across."""
    rows, values, hover = [], [], []
    for kind, grid in grids.items():
        for i in range(grid.values.shape[1]):
            for c, name in enumerate(grid.axes[0].labels):
                row = grid.values[c, i]
                if not row.isnan().all():
                    rows.append(f"{kind} {i} {name}")
                    values.append(row.tolist())
                    hover.append([f"{kind}, {grid.cell(c, i, h)}" for h in range(len(row))])
    heads = [str(h) for h in range(len(values[0]))]
    return viz.patching_grid(values, rows, heads, hover, title, "recovered (1 = clean)", row_title="kind layer input",
                             column_title="head", container_px=box)


def grid_figure(grid, title: str, scale: str, box: float | None, chosen=None):
    """A two-axis Grid as a figure: its values, its axis labels and each cell's own words in the hover."""
    R, C = grid.values.shape
    hover = [[grid.cell(r, c) for c in range(C)] for r in range(R)]
    return viz.patching_grid(grid.values.tolist(), grid.axes[0].labels, grid.axes[1].labels, hover, title, scale,
                             row_title=grid.axes[0].name, column_title=grid.axes[1].name, chosen=chosen,
                             container_px=box)


def boxes(width) -> tuple[float | None, float | None]:
    """(the residual grid's box, the other figures'), in px, on a page `width` px wide (None: plotly's own): the
    section's width, and half of it (all of it on a phone)."""
    if not width:
        return None, None
    return (box_width(width, in_section=True),
            box_width(width, in_section=True, columns=1 if viz.narrow_page(width) else 2))


def heads_figure(grids: dict, kind: str, layer, head, box) -> tuple:
    """(the heads grid of `grids` with head (layer, head) outlined, drawn for a box `box` px wide, the layer, the
    head): the figure a patching demo is about (tabs.demos: "patch-heads")."""
    L, H = grids["heads"].values.shape
    layer, head = check_index(layer, "layer", L), check_index(head, "head", H)
    return (grid_figure(grids["heads"], f"{kind} heads patched (all positions)", "recovered (1 = clean)", box,
                         chosen=(layer, head)), layer, head)
