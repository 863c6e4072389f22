"""The Train tab's live attention map: the last evaluation's attention, on the head the user chose.

A run's evaluations bring a new pattern every few seconds. The map shows one head of the last layer: the sharpest
one at the first evaluation, then that same head at every later evaluation (a head that changed at each evaluation
made the map jump between unrelated pictures), or the head the user picks, which stays picked. The map is an SVG
(visualize.heatmap_svg): a plotly figure per evaluation kept the page growing (issue 19). No gradio here.
"""
from __future__ import annotations

import numpy as np

from visualize.heatmap_svg import head_heatmap_svg


class LiveHeatmap:
    """One run's map: `show(pattern, step)` at an evaluation, `choose(head)` when the user picks a head."""

    def __init__(self):
        self.pattern = None  # transformer.interpretability AttentionPattern of the last evaluation
        self.step = 0
        self.head: int | None = None  # None until the first evaluation picks the sharpest head

    @staticmethod
    def waiting(first_evaluation: int):
        return head_heatmap_svg(np.zeros((0, 0)), [], [],
                                message=f"Attention appears at the first evaluation (step {first_evaluation})")

    def show(self, pattern, step: int):
        """The map (an SVG string) of a new evaluation's pattern, on the kept head."""
        self.pattern, self.step = pattern, step
        if self.head is None:
            self.head = pattern.sharpest_head(layer=pattern.shape[0] - 1)[1]
        return self.figure()

    def choose(self, head):
        """The user's head (clamped to the model's heads) from now on; its figure, or None before any evaluation."""
        self.head = int(head)
        return self.figure() if self.pattern is not None else None

    @property
    def n_heads(self) -> int:
        return self.pattern.shape[1] if self.pattern is not None else 0

    def figure(self):
        pattern = self.pattern
        layer, head = pattern.shape[0] - 1, min(max(self.head, 0), pattern.shape[1] - 1)
        mask = pattern.drawn_mask
        return head_heatmap_svg(pattern.weights[layer, head], pattern.query_tokens, pattern.key_tokens,
                                title=f"{pattern.kind} attention, last layer, head {head} (step {self.step})",
                                mask=mask)
