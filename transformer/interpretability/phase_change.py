"""The induction phase change, live (Olsson et al. 2022, "In-context learning and induction heads").

A small attention-only model trained on repeated random tokens first learns only which tokens are frequent; then,
within a few hundred steps, a previous-token head in layer 0 and an induction head in layer 1 form together, and
the loss on the repeated half falls at once. `watch_induction` trains the shipped `induction` recipe and, at every
evaluation, measures the best previous-token and induction scores of the model (transformer.analysis, on random
tokens repeated twice), so the loss curve and the scores can be drawn on one time axis. `rise_window` and
`steepest_drop` say where the score rose and where the loss fell fastest: the same few hundred steps.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Sequence

import torch

from ..data import InductionData
from ..model import Transformer
from ..run import build_run
from ..tokenization import CharTokenizer
from ..train import StepEvent, TrainConfig, Trainer
from .analysis import best_head, repeated_sequence_scores

# The shipped `induction` checkpoint's recipe (checkpoints/induction/README.md), cut to the steps a class waits for.
INDUCTION_MODEL = dict(arch="decoder-only", n_decoder_layers=2, n_heads=4, d_model=64, d_ff=256, attention_only=True,
                       dropout=0.0, norm_first=True, max_len=64)
INDUCTION_TRAINING = dict(batch_size=64, schedule="constant", lr=3e-3, warmup=100, weight_decay=0.1, seed=0)


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


def induction_run(steps: int = 3000, eval_every: int = 50, seed: int = 0, max_seconds: float | None = None,
                  device: str | torch.device = "cpu") -> tuple[Transformer, CharTokenizer, InductionData, TrainConfig]:
    """(model, tokenizer, data, train config) of the induction recipe for `steps` steps, evaluated every
    `eval_every` steps, its model on `device`; `seed` decides the initial weights and the batches."""
    if steps < 1 or eval_every < 1:
        raise ValueError(f"steps and eval_every must be at least 1, got {steps} and {eval_every}")
    train_cfg = TrainConfig(steps=steps, eval_every=eval_every, block_size=INDUCTION_MODEL["max_len"],
                            eval_examples=64, max_seconds=max_seconds or 0.0, **{**INDUCTION_TRAINING, "seed": seed})
    # as `python -m transformer.train --induction`
    run = build_run(train_cfg, induction=True, device=device, **INDUCTION_MODEL)
    return run.model, run.tokenizer, run.data, train_cfg


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


def watch_induction(model: Transformer, tokenizer, data, train_cfg: TrainConfig, n_seqs: int = 8
                    ) -> Iterator[StepEvent | PhasePoint]:
    """Train and yield every StepEvent, and after each evaluation a PhasePoint with the best head scores."""
    trainer = Trainer(model, tokenizer, data, train_cfg)
    for event in trainer.run():
        if event.kind == "step":
            yield event
            continue
        prev_head, prev, ind_head, ind = best_scores(model, n_seqs)
        yield PhasePoint(event.step, event.val_loss, prev, ind, prev_head, ind_head, event.elapsed)


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
