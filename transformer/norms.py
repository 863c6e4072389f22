"""The normalisation every sub-layer and the final norm use: the paper's LayerNorm, or Llama's RMSNorm."""
from __future__ import annotations

import torch
from torch import Tensor, nn

from .config import TransformerConfig


class RMSNorm(nn.Module):
    """RMSNorm(x) = x / sqrt(mean_i(x_i^2) + eps) * g        (Zhang & Sennrich 2019, equation 4)

    LayerNorm without the mean subtraction and without the bias: each vector is divided by its root mean square,
    then scaled by a learned gain g (d_model,). Llama, SmolLM2 and most decoders since 2023 use it.
    """

    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))  # g
        self.eps = eps

    def forward(self, x: Tensor) -> Tensor:
        rms = x.pow(2).mean(-1, keepdim=True).add(self.eps).rsqrt()  # (B, T, 1): 1 / sqrt(mean(x^2) + eps)
        return x * rms * self.weight  # (B, T, d_model)


def make_norm(cfg: TransformerConfig) -> nn.Module:
    """The model's norm over d_model: nn.LayerNorm for norm="layer", RMSNorm for norm="rms" (eps from the config)."""
    if cfg.norm == "rms":
        return RMSNorm(cfg.d_model, eps=cfg.layer_norm_eps)
    return nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)
