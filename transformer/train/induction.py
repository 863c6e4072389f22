"""The induction phase change trained live (transformer.interpretability.phase_change says what it is and measures
it): the shipped `induction` recipe, cut to the steps a class waits for, with the best head scores after every
evaluation."""
from __future__ import annotations

from typing import Iterator

import torch

from ..data import InductionData
from ..interpretability.phase_change import PhasePoint, best_scores
from ..model import Transformer
from ..tokenization import CharTokenizer
from .run import build_run
from .trainer import StepEvent, TrainConfig, Trainer

# The shipped `induction` checkpoint's recipe (checkpoints/induction/README.md), cut to the steps a class waits for.
INDUCTION_MODEL = dict(arch="decoder-only", n_decoder_layers=2, n_heads=4, d_model=64, d_ff=256, attention_only=True,
                       dropout=0.0, norm_first=True, max_len=64)
INDUCTION_TRAINING = dict(batch_size=64, schedule="constant", lr=3e-3, warmup=100, weight_decay=0.1, seed=0)


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
