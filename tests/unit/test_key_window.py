"""visualize.key_window.heaviest_window against a brute-force oracle: the window of `size` consecutive keys with the
largest sum of weights, the latest on a tie."""
from __future__ import annotations

import numpy as np
import pytest

from visualize.key_window import heaviest_window


def _oracle(w, size):
    if len(w) <= size:
        return slice(0, len(w))
    sums = [sum(w[a:a + size]) for a in range(len(w) - size + 1)]
    best = max(sums)
    start = max(a for a, s in enumerate(sums) if s == best)
    return slice(start, start + size)


def test_a_translation_step_shows_the_words_it_read_not_the_last_keys():
    """Regression (issue 29, item 7): 82 source tokens, the weight on tokens 3-6: the bars showed the last 64
    (keys 18-81, almost none of the weight). The window now starts where the weight is and holds all of it."""
    w = np.full(82, 0.001)
    w[3:7] = (1 - 0.001 * 78) / 4
    shown = heaviest_window(w, 64)
    assert shown.stop - shown.start == 64 and shown.start <= 3 and shown.stop >= 7
    assert w[shown].sum() == pytest.approx(w[:64].sum())


@pytest.mark.parametrize("seed", range(20))
def test_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    n, size = int(rng.integers(1, 40)), int(rng.integers(1, 12))
    w = rng.dirichlet(np.ones(n)) if seed % 2 else np.round(rng.random(n), 1)  # rounded: ties
    got, want = heaviest_window(w, size), _oracle(list(w), size)
    assert np.isclose(w[got].sum(), w[want].sum()) and (got.stop - got.start) == min(n, size)


def test_uniform_weights_keep_the_most_recent_keys():
    """On a tie everywhere (a uniform row) the bars show the most recent keys, as before."""
    assert heaviest_window(np.full(100, 0.01), 64) == slice(36, 100)
