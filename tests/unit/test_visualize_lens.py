"""The logit lens figures: the numbers and tokens drawn are the ones given."""
from __future__ import annotations

import numpy as np
import pytest

from visualize.lens import final_token_curve, logit_lens_grid
from visualize.sizes import MIN_CELL_PX, MIN_LABEL_PX


def test_grid_draws_the_probabilities_and_tokens_given():
    """Invariant: z is top_probs, the cells' text the tokens (escaped), rows labelled in order."""
    fig = logit_lens_grid([["a", "<s>"], ["b", "c"]], [[0.1, 0.2], [0.9, 0.8]], ["embedding", "layer 0"],
                          ["x", "y"], title="t", chosen=1)
    trace = fig.data[0]
    assert [list(r) for r in trace.z] == [[0.1, 0.2], [0.9, 0.8]]
    assert trace.text[0][1] == "&lt;s&gt;" and list(fig.layout.yaxis.ticktext) == ["embedding", "layer 0"]
    assert len(fig.layout.shapes) == 1 and fig.layout.shapes[0].x0 == 0.5


def test_grid_refuses_mismatched_shapes():
    """Bad input: tokens that do not match the probabilities raise a ValueError."""
    with pytest.raises(ValueError, match="rows"):
        logit_lens_grid([["a"]], [[0.1, 0.2]], ["embedding"], ["x", "y"])


def test_curve_draws_one_point_per_row():
    """Invariant: one point per row label, the probabilities given."""
    fig = final_token_curve([0.1, 0.5, 0.9], ["embedding", "layer 0", "layer 1"], " the")
    assert list(fig.data[0].y) == [0.1, 0.5, 0.9] and list(fig.layout.xaxis.ticktext)[-1] == "1"


def _lens(rows: int, T: int, token: str = "e"):
    tokens = [[token] * T for _ in range(rows)]
    probs = [[0.5] * T for _ in range(rows)]
    labels = ["embedding"] + [f"layer {i}" for i in range(rows - 1)]
    return tokens, probs, labels, [f"{t % 10}" for t in range(T)]


@pytest.mark.parametrize("container", [None, 1192, 302])
def test_every_cell_writes_its_token_in_a_readable_font(container):
    """Regression (issue 29, item 1): past 40 positions the grid wrote no token (texttemplate ""), and plotly sized
    the text to ~100 px of phone. Invariant: 41 positions, every cell's text is its token, in a font of at least
    MIN_LABEL_PX, and every position has its label."""
    fig = logit_lens_grid(*_lens(7, 41), chosen=3, container_px=container)
    trace = fig.data[0]
    layers = [t for t in fig.data if (t.name or "").startswith("cell text")]  # black and white text (test_colour.py)
    assert all(t.texttemplate == "%{text}" and t.textfont.size >= MIN_LABEL_PX for t in layers) and len(layers) == 2
    written = np.array([[a or b for a, b in zip(*rows)] for rows in zip(*(t.text for t in layers))])
    assert (written == "e").all() and written.shape == np.array(trace.text).shape
    assert all(cell == "e" for row in trace.text for cell in row) and len(trace.text) * len(trace.text[0]) == 7 * 41
    axis = fig.layout.yaxis if len(trace.text) == 41 else fig.layout.xaxis
    assert list(axis.ticktext) == [f"{t % 10}" for t in range(41)]
    # the cells on the positions the labels name (a categorical axis without x and y drew one column)
    assert list(trace.x) == list(range(len(trace.text[0]))) and list(trace.y) == list(range(len(trace.text)))


def test_a_phone_turns_the_grid_and_keeps_cells_at_least_min_cell_px():
    """At 302 px (a phone's section) 41 positions across would be 5 px each: the grid is turned (positions down,
    41 rows of at least MIN_CELL_PX, the 7 layers across at least MIN_CELL_PX each) and fits the box. At 1192 px
    (a projector) the positions stay across, each at least MIN_CELL_PX."""
    phone = logit_lens_grid(*_lens(7, 41), chosen=3, container_px=302)
    assert len(phone.data[0].z) == 41 and list(phone.layout.xaxis.ticktext) == ["emb"] + [f"L{i}" for i in range(6)]
    assert phone.layout.width is None and phone.layout.height >= 41 * MIN_CELL_PX
    assert phone.layout.shapes[0].y0 == 2.5  # the chosen position's frame follows the turn
    wide = logit_lens_grid(*_lens(7, 41), container_px=1192)
    assert len(wide.data[0].z) == 7 and wide.layout.width is None


def test_a_grid_too_wide_even_turned_keeps_its_cells_and_scrolls():
    """13 rows (GPT-2's embedding and 12 layers) of 6-character tokens at 302 px: turned, 13 columns of at least
    the text's width are wider than the box, so the figure is (the page scrolls it sideways), and long tokens are
    cut to CELL_CHARS characters with "…" (the hover has them whole)."""
    fig = logit_lens_grid(*_lens(13, 20, token="▁Espíritu"), container_px=302)
    assert fig.layout.width > 302 and (fig.layout.width - 60) / 13 >= MIN_CELL_PX
    assert fig.data[0].text[0][0] == "▁Espí…"
