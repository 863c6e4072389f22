"""Attention that carries weight (Kobayashi et al. 2020, "Attention is not only a weight").

Head h's part of the attention output for query i is sum_j alpha_ij f_h(x_j), with f_h(x) = (x W_V^h + b_V^h) W_O^h
the vector key j would add at full attention. A weight alpha_ij says where the head looks; the norm
||alpha_ij f_h(x_j)|| says how much it actually moves: a head can put most of its weight on `<s>` or "." whose
f_h is small, and move almost nothing. The value bias b_V^h is inside f_h, so the vectors alpha_ij f_h(x_j) summed
over j are exactly the head's slice of the output (before the output projection's own bias b_O, which no key adds).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from ..heads import AttentionKind
from ..model import Transformer
from .probe import AttentionRecord, inside_point


@dataclass
class ValueNorms:
    """Per layer and head, (L, H, T, S): `norms` ||alpha_ij f_h(x_j)||, `shares` the same normalised per query (each
    row sums to 1, comparable with the weights), and `weights` alpha_ij from the same forward pass."""

    kind: str
    norms: Tensor
    shares: Tensor
    weights: Tensor


def transformed_values(module, v: Tensor) -> Tensor:
    """f_h(x_j) for every head and key: v (H, S, d_v) (each head's values, bias included) -> (H, S, d_model), the
    values through the head's own columns W_O^h of the output projection."""
    H, S, d_v = v.shape
    w_o = module.out_proj.weight.view(-1, H, d_v)  # (d_model, H, d_v): column block h is W_O^h
    return torch.einsum("hsv,dhv->hsd", v, w_o)  # (H, S, d_model)


@torch.no_grad()
def value_weighted_norms(model: Transformer, record: AttentionRecord, inside: dict[str, Tensor], kind: str
                         ) -> ValueNorms:
    """||alpha_ij f_h(x_j)|| for every layer, head, query and key of `kind`, from the record's forward pass: its
    weights and the values in `inside` (probe.record_inside of the record); the model gives only W^O."""
    if kind not in record.patterns:
        raise ValueError(f"this record has no {kind!r} attention (it has {', '.join(record.kinds)})")
    kind = AttentionKind.parse(kind)
    weights, norms = [], []
    for i, module in enumerate(kind.modules(model)):
        device = module.out_proj.weight.device
        alpha = record.patterns[kind].weights[i].to(device)  # (H, T, S)
        v = inside_point(inside, kind, i, "v").to(device).float()  # (G, S, d_v): each key/value head's values
        v = v.repeat_interleave(alpha.size(0) // v.size(0), dim=0)  # (H, S, d_v)
        f_norm = transformed_values(module, v).norm(dim=-1)  # (H, S)
        norms.append(alpha * f_norm[:, None, :])  # (H, T, S): ||alpha_ij f(x_j)|| = alpha_ij ||f(x_j)||
        weights.append(alpha)
    norms_t = torch.stack(norms).cpu()  # (L, H, T, S)
    total = norms_t.sum(-1, keepdim=True)
    shares = torch.where(total > 0, norms_t / total.clamp_min(1e-30), torch.zeros_like(norms_t))
    return ValueNorms(kind, norms_t, shares, torch.stack(weights).cpu())
