"""What patching measures: a number of the model's output on one run, and how a patched run is scored between the two.

Two metrics, each a function of the logits of a batch of runs (N, T, vocab_size) -> (N,):
- `LogitDifference`: logit(answer) - logit(other) at one decoder position (by default the last; in an
  encoder-decoder model the decoder position t predicts target token t). The default answers are the model's top
  token on each input: the clean run's (`answer`) against the corrupted run's (`other`).
- `TargetLoss`: the mean cross-entropy of the clean run's next tokens (a decoder-only model's input shifted by
  one; an encoder-decoder model's target + </s>).

Normalised recovery, with m the metric of a run:  (m_patched - m_corrupted) / (m_clean - m_corrupted),
so 0 is the corrupted run and 1 the clean run whatever the metric's sign (lower is better for a loss).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from ..model import Transformer
from .patching_runs import MinimalPair, PairRun, run_pair, token_name


@dataclass(frozen=True)
class LogitDifference:
    """logit(answer) - logit(other) at decoder position `position` (a negative position counts from the end)."""

    answer: int
    other: int
    position: int = -1

    def __call__(self, logits: Tensor) -> Tensor:
        at = logits[:, self.position].float()  # (N, vocab_size)
        return at[:, self.answer] - at[:, self.other]  # (N,)

    def describe(self, tokenizer=None) -> str:
        where = "the last position" if self.position == -1 else f"position {self.position}"
        return (f"logit difference {token_name(tokenizer, self.answer)} - {token_name(tokenizer, self.other)} "
                f"at {where}")


@dataclass(frozen=True)
class TargetLoss:
    """The mean cross-entropy (nats) of `target`, what decoder positions 0, 1, ... should predict."""

    target: tuple[int, ...]

    def __call__(self, logits: Tensor) -> Tensor:
        n = len(self.target)
        target = torch.tensor(self.target, device=logits.device).expand(logits.size(0), n)  # (N, n)
        loss = F.cross_entropy(logits[:, :n].float().transpose(1, 2), target, reduction="none")  # (N, n)
        return loss.mean(-1)  # (N,)

    def describe(self, tokenizer=None) -> str:
        return f"the clean target's loss ({len(self.target)} tokens)"


Metric = LogitDifference | TargetLoss


def logit_difference(model: Transformer, pair: MinimalPair | PairRun, answer: int | None = None,
                     other: int | None = None, position: int = -1) -> LogitDifference:
    """The logit difference of two answer tokens at a decoder position; by default `answer` is the clean run's top
    token there and `other` the corrupted run's (read off `pair`'s run: `run_pair`). Raises ValueError when the two
    are one token (nothing to measure)."""
    T = len((pair.pair if isinstance(pair, PairRun) else pair).decoder["clean"])
    if not -T <= position < T:
        raise ValueError(f"position: the decoder reads {T} positions, got {position}")
    if answer is None or other is None:
        logits = run_pair(model, pair).logits
        top = {w: int(logits[w][0, position].argmax()) for w in ("clean", "corrupted")}
        answer = top["clean"] if answer is None else answer
        other = top["corrupted"] if other is None else other
    for name, token in (("answer", answer), ("other", other)):
        if not 0 <= token < model.config.vocab_size:
            raise ValueError(f"{name}: token id {token} is outside this model's vocabulary of "
                             f"{model.config.vocab_size}")
    if answer == other:
        raise ValueError(f"both answers are token {answer} (the clean and corrupted runs predict the same top "
                         "token there): choose two different answer tokens, or another position")
    return LogitDifference(int(answer), int(other), position)


def target_loss(pair: MinimalPair) -> TargetLoss:
    """The clean target's loss: what each decoder position of the clean run should predict."""
    if not pair.next_ids:
        raise ValueError("the input has one token: nothing follows it to measure a loss on")
    return TargetLoss(pair.next_ids)


@dataclass(frozen=True)
class Baseline:
    """The metric on the clean and on the corrupted run: the two ends of the normalised scale."""

    clean: float
    corrupted: float

    def __post_init__(self):
        if abs(self.clean - self.corrupted) < 1e-6 * max(1.0, abs(self.clean)):
            raise ValueError(f"the metric is the same on both inputs ({self.clean:.4g}): there is no difference for "
                             "patching to recover; change the corrupted input or the answer tokens")

    @classmethod
    def of(cls, metric: Metric, clean_logits: Tensor, corrupted_logits: Tensor) -> Baseline:
        """From the logits of one clean and one corrupted run (the first row of each)."""
        return cls(float(metric(clean_logits[:1])[0]), float(metric(corrupted_logits[:1])[0]))

    def normalise(self, values: Tensor) -> Tensor:
        """(m - corrupted) / (clean - corrupted): 0 = the corrupted run, 1 = the clean run."""
        return (values - self.corrupted) / (self.clean - self.corrupted)


def baseline(model: Transformer, pair: MinimalPair | PairRun, metric: Metric) -> Baseline:
    """The metric on both runs; raises ValueError when they are equal (no difference for patching to recover)."""
    runs = run_pair(model, pair)
    return Baseline.of(metric, runs.logits["clean"], runs.logits["corrupted"])
