"""The logit lens figures: the numbers and tokens drawn are the ones given."""
from __future__ import annotations

import pytest

from visualize.lens import final_token_curve, logit_lens_grid


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
