"""The induction phase change, live (Olsson et al. 2022, "In-context learning and induction heads").

A small attention-only model trained on repeated random tokens first learns only which tokens are frequent; then,
within a few hundred steps, a previous-token head in layer 0 and an induction head in layer 1 form together, and
the loss on the repeated half falls at once. `best_scores` measures the best previous-token and induction scores of
a model (transformer.analysis, on random tokens repeated twice); transformer.train.induction trains the shipped
`induction` recipe and yields a PhasePoint of them at every evaluation, so the loss curve and the scores can be drawn
on one time axis. `rise_window` and `steepest_drop` say where the score rose and where the loss fell fastest: the
same few hundred steps.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..model import Transformer
from .analysis import best_head, repeated_sequence_scores

@dataclass
class PhasePoint:
    """One evaluation of a run: the validation loss and the best head scores, each head's best over the model."""

    step: int
    val_loss: float
    previous_token: float  # the best previous-token score of any head
    induction: float  # the best induction score of any head
    previous_token_head: str  # "0.1": layer.head (HeadId.label)
    induction_head: str
    elapsed: float  # seconds of training so far
    kind: str = "phase"


def best_scores(model: Transformer, n_seqs: int = 8) -> tuple[str, float, str, float]:
    """(previous-token head, its score, induction head, its score): the best heads of the model on n_seqs fixed
    sequences of random distinct tokens repeated twice (transformer.analysis.repeated_sequence_scores)."""
    was_training = model.training
    model.eval()
    scores = repeated_sequence_scores(model, n_seqs=n_seqs, seed=0)
    model.train(was_training)
    out = []
    for name in ("previous token", "induction"):
        head, score = best_head(scores[name], name)
        out += [head.label, score]
    return tuple(out)


def rise_window(steps: Sequence[int], scores: Sequence[float], low: float = 0.1, high: float = 0.5
                ) -> tuple[int, int] | None:
    """(a, b): the evaluations between which the score rose from below `low` to `high` for the first time: b is the
    first step with a score >= high, a the last step before b with a score < low. None if it never reached high."""
    for i, (step, score) in enumerate(zip(steps, scores)):
        if score >= high:
            below = [s for s, v in zip(steps[:i], scores[:i]) if v < low]
            return (below[-1] if below else steps[0]), step
    return None


def steepest_drop(steps: Sequence[int], losses: Sequence[float]) -> tuple[int, int]:
    """(a, b): the two consecutive evaluations between which the loss fell fastest per step."""
    if len(steps) < 2:
        raise ValueError("steepest_drop needs at least two evaluations")
    rates = [(losses[i] - losses[i + 1]) / (steps[i + 1] - steps[i]) for i in range(len(steps) - 1)]
    i = max(range(len(rates)), key=rates.__getitem__)
    return steps[i], steps[i + 1]
