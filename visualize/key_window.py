"""Which keys a bar chart of one query's attention shows when there are more keys than it can label."""
from __future__ import annotations

import numpy as np

from .style import as_array


def heaviest_window(weights, size: int) -> slice:
    """The `size` consecutive keys holding the most of one query's weights (S,): all S when S <= size, else the
    window [a, a + size) with the largest sum of weights_s, the latest such window on a tie (the most recent keys,
    what a causal model's bars showed before). A translation's cross-attention over a long source then shows the
    words the output token read, not the source's last `size` tokens (issue 29, item 7: 0.7% of the weight was on
    screen)."""
    w = as_array(weights, 1, "weights")  # (S,)
    if size < 1:
        raise ValueError(f"a window holds at least one key, got {size}")
    if len(w) <= size:
        return slice(0, len(w))
    sums = np.convolve(w, np.ones(size), mode="valid")  # (S - size + 1,): sums[a] = weights[a:a + size].sum()
    start = len(sums) - 1 - int(np.argmax(sums[::-1]))  # the latest of the largest
    return slice(start, start + size)
