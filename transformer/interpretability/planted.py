"""Ground truth for a sparse autoencoder: activations built from features we planted.

Elhage et al. 2022 ("Toy Models of Superposition") show a layer storing more sparse features than it has
dimensions, each along its own direction; Sharkey et al. 2022 test a dictionary learner on exactly such data:

    x = sum_i c_i g_i,     g_i (d,) unit vectors, i = 1..n_true with n_true > d (superposition),
                           c_i = 0 unless feature i is on (probability p each, independently), then uniform in (0, 1]

and score it by the mean max cosine similarity (MMCS): for each true direction g_i, the best cosine with any
learned direction, averaged over i. 1 is every planted feature found; a random dictionary scores far less.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass(frozen=True)
class Planted:
    """`x` (N, d) the activations, `dictionary` (n_true, d) the true unit directions g_i, `coefficients`
    (N, n_true) the c_i of each activation."""

    x: Tensor
    dictionary: Tensor
    coefficients: Tensor


def planted_features(d: int, n_true: int, n_samples: int, p_active: float, seed: int = 0) -> Planted:
    """`n_samples` activations in d dimensions made of `n_true` planted features, each on with probability
    `p_active` (the module's docstring)."""
    if not 0 < p_active <= 1 or min(d, n_true, n_samples) < 1:
        raise ValueError("d, n_true and n_samples must be positive and p_active in (0, 1]")
    generator = torch.Generator().manual_seed(seed)
    g = torch.randn(n_true, d, generator=generator)
    g = g / g.norm(dim=1, keepdim=True)  # (n_true, d)
    on = torch.rand(n_samples, n_true, generator=generator) < p_active
    c = on * (1 - torch.rand(n_samples, n_true, generator=generator))  # (N, n_true), (0, 1] where on
    return Planted(c @ g, g, c)


def mean_max_cosine(true: Tensor, learned: Tensor) -> float:
    """MMCS: the mean over the rows of `true` (n_true, d) of the largest cosine similarity with a row of
    `learned` (n_learned, d)."""
    t = true / true.norm(dim=1, keepdim=True)
    u = learned / learned.norm(dim=1, keepdim=True).clamp_min(1e-12)
    return float((t @ u.t()).max(dim=1).values.mean())
