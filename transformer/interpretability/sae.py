"""A sparse autoencoder (SAE): a dictionary of sparse features that reconstructs activations.

Notation: x (N, d_in) the activations (here a layer's concatenated head outputs z, d_in = H d_k), F the number of
features, f (N, F) their activations, W_enc (d_in, F), W_dec (F, d_in) whose rows d_j are the features' directions,
each of unit norm, b_enc (F,), b_dec (d_in,).

    f(x)     = ReLU((x - b_dec) W_enc + b_enc)                                  (ReLU SAE, Bricken et al. 2023)
    f(x)     = TopK((x - b_dec) W_enc + b_enc), the k largest kept, then ReLU   (TopK SAE, Gao et al. 2024)
    x_hat(f) = f W_dec + b_dec = b_dec + sum_j f_j d_j

The loss, as "Towards Monosemanticity" (Bricken et al. 2023) and Kissane et al. 2024 (arXiv 2406.17759) write it
for the ReLU SAE, with the decoder's rows held at unit norm (so the L1 penalty cannot be dodged by shrinking f and
growing d_j):

    L(x) = ||x - x_hat(f(x))||_2^2 + lambda ||f(x)||_1

and for the TopK SAE (Gao et al. 2024) the reconstruction term alone (k sets the sparsity): L(x) = ||x - x_hat||_2^2.

The SAE reads x divided by `scale`, one number fixed before training so that the mean of ||x / scale||^2 is d_in
(Anthropic's convention): lambda then means the same whatever the model's activations' size. `encode` and
`reconstruct` take and give activations in the model's own units.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import Tensor, nn

KINDS = ("relu", "topk")


@dataclass(frozen=True)
class SAEConfig:
    """The shape of an SAE: `d_in` its input's size, `n_features` F, `kind` "relu" or "topk", `k` the features a
    TopK SAE keeps per input (ignored by ReLU)."""

    d_in: int
    n_features: int
    kind: str = "relu"
    k: int = 8

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind: must be one of {', '.join(KINDS)}, got {self.kind!r}")
        for name in ("d_in", "n_features", "k"):
            if type(getattr(self, name)) is not int or getattr(self, name) < 1:
                raise ValueError(f"{name}: must be a positive integer, got {getattr(self, name)!r}")
        if self.kind == "topk" and self.k > self.n_features:
            raise ValueError(f"k: a TopK SAE keeps at most its n_features={self.n_features} features, got {self.k}")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> SAEConfig:
        if not isinstance(d, dict) or set(d) != {"d_in", "n_features", "kind", "k"}:
            raise ValueError("an SAE config has exactly the fields d_in, n_features, kind and k")
        return cls(**d)


class SparseAutoencoder(nn.Module):
    """The SAE of the module's docstring. Parameters W_enc (d_in, F), b_enc (F,), W_dec (F, d_in), b_dec (d_in,);
    buffer `scale` (a scalar). Build one with `SparseAutoencoder(config)`: decoder rows random unit vectors, the
    encoder their transpose (a common start: each feature first reads its own direction)."""

    def __init__(self, config: SAEConfig, generator: torch.Generator | None = None):
        super().__init__()
        self.config = config
        d_in, F = config.d_in, config.n_features
        W_dec = torch.randn(F, d_in, generator=generator)
        W_dec = W_dec / W_dec.norm(dim=1, keepdim=True)
        self.W_dec = nn.Parameter(W_dec)  # (F, d_in), unit rows
        self.W_enc = nn.Parameter(W_dec.t().contiguous())  # (d_in, F)
        self.b_enc = nn.Parameter(torch.zeros(F))
        self.b_dec = nn.Parameter(torch.zeros(d_in))
        self.register_buffer("scale", torch.tensor(1.0))

    def pre_activations(self, x: Tensor) -> Tensor:
        """(..., d_in) in the model's units -> (..., F): (x / scale - b_dec) W_enc + b_enc."""
        return (x / self.scale - self.b_dec) @ self.W_enc + self.b_enc

    def activation(self, pre: Tensor) -> Tensor:
        """ReLU, or for TopK the ReLU of the k largest pre-activations (the rest 0)."""
        if self.config.kind == "relu":
            return torch.relu(pre)
        top = pre.topk(self.config.k, dim=-1)
        return torch.zeros_like(pre).scatter(-1, top.indices, torch.relu(top.values))

    def encode(self, x: Tensor) -> Tensor:
        """f(x): (..., d_in) -> (..., F), the features' activations (in units of `scale`)."""
        return self.activation(self.pre_activations(x))

    def decode(self, f: Tensor) -> Tensor:
        """x_hat(f): (..., F) -> (..., d_in), in the model's units."""
        return (f @ self.W_dec + self.b_dec) * self.scale

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """(x_hat, f) for x (..., d_in)."""
        f = self.encode(x)
        return self.decode(f), f

    def reconstruct(self, x: Tensor) -> Tensor:
        """x_hat(f(x)), same shape as x."""
        return self.forward(x)[0]

    @torch.no_grad()
    def normalise_decoder(self) -> None:
        """Put every decoder row back on the unit sphere (after an optimiser step)."""
        self.W_dec /= self.W_dec.norm(dim=1, keepdim=True).clamp_min(1e-12)

    @torch.no_grad()
    def drop_parallel_gradient(self) -> None:
        """Remove from W_dec's gradient its part along each row, the part that would only change the row's norm
        (Bricken et al. 2023): the step then moves along the unit sphere."""
        if self.W_dec.grad is not None:
            along = (self.W_dec.grad * self.W_dec).sum(dim=1, keepdim=True)  # (F, 1)
            self.W_dec.grad -= along * self.W_dec


def sae_loss(sae: SparseAutoencoder, x: Tensor, l1_coefficient: float) -> Tensor:
    """The mean over the batch of L(x) (the module's docstring), in the SAE's units (x / scale): the squared error
    plus, for a ReLU SAE, lambda ||f||_1."""
    x_hat, f = sae(x)
    error = ((x - x_hat) / sae.scale).pow(2).sum(-1)  # (N,) ||x - x_hat||^2
    if sae.config.kind == "relu":
        error = error + l1_coefficient * f.abs().sum(-1)  # + lambda ||f||_1
    return error.mean()
