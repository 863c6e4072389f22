"""The patching grids' labels (issue 38 item 1 cut long token labels at 16 characters): a row the app names, such as
a path's "decoder self 1 query", and every hover stay whole, so the three inputs of one layer can be told apart;
a column's long token label is cut."""
from __future__ import annotations

import html

import visualize as viz


def test_row_labels_and_hover_stay_whole_and_long_columns_are_cut():
    rows = ["decoder self 1 query", "decoder self 1 key", "decoder self 1 value"]
    columns = ["0", "1 'supercalifragilistic'"]
    hover = [[f"{r}, head {c}: 0.5 and more words than sixteen" for c in range(2)] for r in rows]
    fig = viz.patching_grid([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]], rows, columns, hover, "paths", "recovered")
    assert list(fig.layout.yaxis.ticktext) == rows  # three distinct rows, as the app named them
    assert fig.data[0].customdata[2][1] == hover[2][1]
    assert fig.layout.xaxis.ticktext[0] == "0" and fig.layout.xaxis.ticktext[1].endswith("…")
    assert len(html.unescape(fig.layout.xaxis.ticktext[1])) <= 16
