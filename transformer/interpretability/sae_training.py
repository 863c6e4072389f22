"""Training a sparse autoencoder (transformer.interpretability.sae) on a fixed set of activations.

Adam on minibatches drawn (seeded) from the activations; after every step the decoder's rows go back to unit norm,
and the gradient's part along each row is removed before the step (Bricken et al. 2023). The L1 coefficient of a
ReLU SAE ramps up linearly over the first `l1_warmup` of the steps (Anthropic's April 2024 update: fewer features
die early). Before the first step `scale` is fixed (mean ||x / scale||^2 = d_in) and b_dec starts at the mean.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable

import torch
from torch import Tensor

from .sae import SAEConfig, SparseAutoencoder, sae_loss


@dataclass(frozen=True)
class SAETraining:
    """How an SAE is trained: `steps` of `batch_size` activations, Adam at `lr`, the ReLU SAE's L1 coefficient
    (lambda, in the normalised units of sae.py), its ramp over the first `l1_warmup` fraction of the steps, `seed`
    for the initial dictionary and the batches."""

    steps: int = 2000
    batch_size: int = 512
    lr: float = 1e-3
    l1_coefficient: float = 3.0
    l1_warmup: float = 0.05
    seed: int = 0

    def __post_init__(self):
        for name in ("steps", "batch_size"):
            if type(getattr(self, name)) is not int or getattr(self, name) < 1:
                raise ValueError(f"{name}: must be a positive integer, got {getattr(self, name)!r}")
        if not self.lr > 0 or not self.l1_coefficient >= 0 or not 0 <= self.l1_warmup <= 1:
            raise ValueError("lr must be positive, l1_coefficient at least 0 and l1_warmup in [0, 1]")

    def to_dict(self) -> dict:
        return asdict(self)


def fit_input(sae: SparseAutoencoder, x: Tensor) -> None:
    """Fix `scale` so that the mean of ||x / scale||^2 is d_in, and start b_dec at the mean of x / scale."""
    with torch.no_grad():
        x = x.float()
        sae.scale.fill_(float((x.pow(2).sum(-1).mean() / x.size(-1)).sqrt().clamp_min(1e-12)))
        sae.b_dec.copy_(x.mean(0) / sae.scale)


def train_sae(x: Tensor, config: SAEConfig, training: SAETraining = SAETraining(),
              progress: Callable[[int, int, float], None] | None = None) -> SparseAutoencoder:
    """An SAE of `config` trained on the activations x (N, d_in); `progress(step, steps, loss)` after each step.
    Deterministic for `training.seed` on one thread."""
    if x.dim() != 2 or x.size(1) != config.d_in or x.size(0) < 1:
        raise ValueError(f"the activations must be (N, {config.d_in}) with N >= 1, got {tuple(x.shape)}")
    if not torch.isfinite(x).all():
        raise ValueError("the activations hold a NaN or an infinity")
    generator = torch.Generator().manual_seed(training.seed)
    sae = SparseAutoencoder(config, generator)
    x = x.detach().float().cpu()
    fit_input(sae, x)
    optimiser = torch.optim.Adam(sae.parameters(), lr=training.lr)
    ramp = max(1, round(training.l1_warmup * training.steps))
    for step in range(training.steps):
        batch = x[torch.randint(x.size(0), (training.batch_size,), generator=generator)]  # (batch, d_in)
        l1 = training.l1_coefficient * min(1.0, (step + 1) / ramp)
        loss = sae_loss(sae, batch, l1)
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        sae.drop_parallel_gradient()
        optimiser.step()
        sae.normalise_decoder()
        if progress is not None:
            progress(step + 1, training.steps, float(loss))
    return sae.eval()
