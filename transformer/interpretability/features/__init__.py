"""Sparse features of what an attention layer writes: an SAE on its concatenated head outputs (Kissane et al. 2024).

A layer's heads write z (B, T, H, d_k), each head's output before W^O (the named point `{attn}.z`,
transformer/points.py); flattened per position to (H d_k,), head h in the slice [h d_k, (h+1) d_k). An SAE
(sae.py) on those vectors gives features whose decoder row splits the same way, so each feature says which heads
write it (feature_page.py). Any kind of attention: encoder self (the source's positions), decoder self and cross
(the decoder's positions).

Data are the trainer's batches, `(inputs, targets)`: `inputs` the model's arguments ((tokens,) or (source,
decoder input)), `targets` the next ids the decoder should predict (pad where there is none). Positions whose
token is pad are left out of the activations.

The metrics (`measure`), on held-out batches:
- explained variance  1 - sum ||x - x_hat||^2 / sum ||x - mean(x)||^2
- L0                  the mean number of features active (f_j > 0) per position
- dead fraction       the share of features active at no position
- spliced-in loss     the model's loss with the layer's z replaced by the SAE's reconstruction (a write to the
                      z point: W^O then reads x_hat), beside the clean loss and the loss with z := 0 (zero ablation:
                      the layer writes its W^O bias alone); `loss_recovered` = (zero - spliced) / (zero - clean),
                      1 when splicing costs nothing, 0 when it is as bad as removing the layer's heads.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor

from ...heads import AttentionKind
from ...model import Transformer
from ...points import points
from ..patching_runs import attention_kind
from ..sae import SparseAutoencoder

Batch = tuple[tuple[Tensor, ...], Tensor]  # (inputs, targets), as the trainer's data gives them


@dataclass(frozen=True)
class AttentionLayer:
    """One attention layer of a model: its kind and layer index; `point` is its z."""

    kind: AttentionKind
    layer: int

    def __post_init__(self):
        object.__setattr__(self, "kind", AttentionKind.parse(self.kind))

    @property
    def point(self) -> str:
        return self.kind.point(self.layer, "z")

    def __str__(self) -> str:
        return f"{self.kind} layer {self.layer}"

    def check(self, model: Transformer) -> AttentionLayer:
        """This layer, if `model` has it; else ValueError naming what it has."""
        attention_kind(model, self.kind)
        n = self.kind.n_layers(model.config)
        if not 0 <= self.layer < n:
            raise ValueError(f"layer: this model's {self.kind} attention has layers 0 to {n - 1}, got {self.layer}")
        return self

    def stream(self, inputs: Sequence[Tensor]) -> Tensor:
        """(B, T) the ids at this layer's positions: the source's for encoder self-attention, else the decoder's."""
        return inputs[0] if self.kind.stack == "encoder" else inputs[-1]


def width(model: Transformer) -> int:
    """H d_k: the size of a layer's concatenated head outputs, the SAE's d_in."""
    return model.config.n_heads * (model.config.d_model // model.config.n_heads)


@dataclass(frozen=True)
class Activations:
    """A layer's z at every real position of some batches: `x` (N, H d_k); `where` (N, 2) the (row, position) of
    each in `tokens` (rows, T) the stream's ids (the batches' rows one after the other, padded with pad_id)."""

    x: Tensor
    where: Tensor
    tokens: Tensor


@torch.no_grad()
def layer_activations(model: Transformer, layer: AttentionLayer, batches: Iterable[Batch]) -> Activations:
    """The layer's concatenated head outputs z at every non-pad position of `batches`."""
    layer.check(model)
    pad, xs, wheres, rows, offset = model.config.pad_id, [], [], [], 0
    for inputs, _ in batches:
        inputs = tuple(t.to(model.device) for t in inputs)
        with points(read=[layer.point], stop_at=layer.point) as seen:  # the layers after it are not run
            model(*inputs)
        z = seen[layer.point]  # (B, T, H, d_k)
        ids = layer.stream(inputs)  # (B, T)
        real = ids != pad
        xs.append(z.flatten(2)[real].float().cpu())  # (n, H d_k)
        where = real.nonzero().cpu()  # (n, 2)
        wheres.append(where + torch.tensor([offset, 0]))
        rows.append(ids.cpu())
        offset += ids.size(0)
    if not xs:
        raise ValueError("no batches to read activations from")
    longest = max(r.size(1) for r in rows)
    tokens = torch.cat([F.pad(r, (0, longest - r.size(1)), value=pad) for r in rows])  # (rows, T)
    return Activations(torch.cat(xs), torch.cat(wheres), tokens)


def splice(sae: SparseAutoencoder):
    """A write function for a z point: every position's concatenated heads replaced by the SAE's reconstruction."""

    def write(z: Tensor) -> Tensor:  # (B, T, H, d_k)
        return sae.reconstruct(z.flatten(2).float()).to(z.dtype).view_as(z)

    return write


def zero(z: Tensor) -> Tensor:
    """A write function for a z point: every head writes nothing (z := 0)."""
    return torch.zeros_like(z)


@torch.no_grad()
def mean_loss(model: Transformer, batches: Iterable[Batch], write: dict | None = None) -> float:
    """The mean cross-entropy (nats) of the decoder's next-token predictions over `batches` (pad targets left
    out), with the named points in `write` written."""
    total, count = 0.0, 0
    for inputs, targets in batches:
        with points(write=write or {}):
            logits = model(*(t.to(model.device) for t in inputs)).logits.float()  # (B, T, V)
        targets = targets.to(logits.device)
        total += float(F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=model.config.pad_id,
                                       reduction="sum"))
        count += int((targets != model.config.pad_id).sum())
    if not count:
        raise ValueError("the batches have no target to measure a loss on")
    return total / count


@dataclass(frozen=True)
class FeatureMetrics:
    """What `measure` reports (the module's docstring); losses in nats per predicted token."""

    explained_variance: float
    l0: float
    dead_fraction: float
    loss_clean: float
    loss_spliced: float
    loss_zero_ablation: float
    positions: int

    @property
    def loss_recovered(self) -> float:
        return (self.loss_zero_ablation - self.loss_spliced) / (self.loss_zero_ablation - self.loss_clean)

    def to_dict(self, digits: int = 4) -> dict:
        out = {k: round(v, digits) if isinstance(v, float) else v for k, v in self.__dict__.items()}
        return {**out, "loss_recovered": round(self.loss_recovered, digits)}


@torch.no_grad()
def reconstruction_metrics(sae: SparseAutoencoder, x: Tensor) -> tuple[float, float, float]:
    """(explained variance, L0, dead fraction) of the SAE on activations x (N, d_in)."""
    x = x.float()
    x_hat, f = sae(x)
    explained = 1 - float((x - x_hat).pow(2).sum() / (x - x.mean(0)).pow(2).sum())
    active = f > 0  # (N, F)
    return explained, float(active.sum(1).float().mean()), float((~active.any(0)).float().mean())


@torch.no_grad()
def measure(model: Transformer, sae: SparseAutoencoder, layer: AttentionLayer, batches: Sequence[Batch],
            acts: Activations | None = None) -> FeatureMetrics:
    """The SAE's metrics on `batches` (held out from its training data); `acts`: the layer's activations on them,
    when the caller has them already."""
    acts = layer_activations(model, layer, batches) if acts is None else acts
    if acts.x.size(1) != sae.config.d_in:
        raise ValueError(f"this SAE reads {sae.config.d_in} numbers per position; {layer} writes {acts.x.size(1)}")
    explained, l0, dead = reconstruction_metrics(sae, acts.x)
    return FeatureMetrics(explained, l0, dead, mean_loss(model, batches),
                          mean_loss(model, batches, {layer.point: splice(sae)}),
                          mean_loss(model, batches, {layer.point: zero}), acts.x.size(0))

