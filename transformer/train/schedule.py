"""What a training run is asked for (TrainConfig: steps, batch, the schedule and the optimiser's settings, checked)
and the learning rate at each step: the paper's schedule (equation 3), a cosine decay, or constant."""
from __future__ import annotations

import math
from dataclasses import dataclass

SCHEDULES = ("noam", "cosine", "constant")


@dataclass
class TrainConfig:
    """How to train. `lr` is the factor in front of the paper's schedule for "noam", else the peak rate."""

    steps: int = 2000
    batch_size: int = 64
    schedule: str = "noam"
    lr: float = 1.0
    warmup: int = 400
    label_smoothing: float = 0.0
    weight_decay: float = 0.0
    beta2: float = 0.98  # AdamW's beta2: 0.98 as in section 5.3; nanoGPT's char models use 0.99
    clip_grad: float = 1.0
    bf16: bool | None = None  # None: bf16 autocast where it pays (see bf16_pays)
    block_size: int = 128  # text: tokens per training window
    eval_every: int = 200
    eval_examples: int = 200
    checkpoint_every: int = 0  # 0: a checkpoint only at the end (when the Trainer has an out_dir)
    max_seconds: float = 0.0  # 0: no wall-time limit
    seed: int = 0

    def __post_init__(self):
        for name in ("steps", "batch_size", "block_size", "eval_every", "eval_examples"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"{name}: must be a positive integer, got {getattr(self, name)!r}")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule: must be one of {SCHEDULES}, got {self.schedule!r}")
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise ValueError(f"lr: must be a positive number, got {self.lr!r}")
        if self.warmup < 0 or self.checkpoint_every < 0 or self.max_seconds < 0 or self.clip_grad < 0:
            raise ValueError("warmup, checkpoint_every, max_seconds and clip_grad must be >= 0")
        if not 0 < self.beta2 < 1:
            raise ValueError(f"beta2: must be in (0, 1), got {self.beta2!r}")
        if not 0 <= self.label_smoothing < 1:
            raise ValueError(f"label_smoothing: must be in [0, 1), got {self.label_smoothing}")


def learning_rate(step: int, cfg: TrainConfig, d_model: int) -> float:
    """noam: lrate = d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)      (equation 3), times cfg.lr.
    cosine: linear warm-up to cfg.lr, then a cosine decay to cfg.lr / 10 at the last step."""
    step = max(step, 1)
    if cfg.schedule == "noam":
        return cfg.lr * d_model ** -0.5 * min(step ** -0.5, step * max(cfg.warmup, 1) ** -1.5)
    if cfg.schedule == "cosine":
        if step < cfg.warmup:
            return cfg.lr * step / cfg.warmup
        progress = (step - cfg.warmup) / max(cfg.steps - cfg.warmup, 1)
        return cfg.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(progress, 1.0))))
    return cfg.lr
