"""Attribution patching (Nanda 2023; Syed et al. 2023): every head's patching effect at once, from one backward pass.

Activation patching runs one forward per cell. Its first-order Taylor approximation needs one forward on each
input and one backward on the corrupted run: for a head's output z,

    m(corrupted with z := z_clean) - m(corrupted)  ~=  (z_clean - z_corrupted) . dm/dz |corrupted

summed over the head's positions and d_k, then normalised like activation patching (0 = the corrupted run,
1 = the clean run; the denoising direction). It is exact for a metric linear in z and drifts where the model
is not (an attention softmax that saturates, a LayerNorm): `rank_correlation` measures how well it ranks heads
against true patching (activation_patching.head_patching) on the same pair.

The gradients are taken with torch.autograd.grad on zero offsets added at each z, so the model's parameters
gather no .grad (a shared model is left untouched) and it works under torch.no_grad callers.
"""
from __future__ import annotations

import torch
from torch import Tensor

from ..model import Transformer
from .patching_metric import Baseline, Metric
from ..heads import AttentionKind
from .patching_runs import Axis, Grid, MinimalPair, PairRun, run, run_pair


def attribution_patching(model: Transformer, pair: MinimalPair | PairRun, metric: Metric, by_position: bool = False
                         ) -> dict[str, Grid]:
    """{kind: Grid (layer, head)} for every attention kind: the first-order estimate of head_patching's recovery
    for each head's output at every position at once; with `by_position`, (layer, head, position)."""
    kinds = AttentionKind.of(model.config)
    names = {k: [k.point(i, "z") for i in range(k.n_layers(model.config))] for k in kinds}
    every = [n for ns in names.values() for n in ns]
    runs = run_pair(model, pair)
    pair, clean_logits, clean = runs.pair, runs.logits["clean"], runs.seen["clean"]
    offsets: dict[str, Tensor] = {}

    def offset(name: str):
        def write(z: Tensor) -> Tensor:
            offsets[name] = torch.zeros_like(z, requires_grad=True)  # (1, T, H, d_k): dm/d offset = dm/dz
            return z + offsets[name]
        return write

    with torch.enable_grad():
        logits, corrupted = run(model, pair, "corrupted", read=every, write={n: offset(n) for n in every})
        base = Baseline.of(metric, clean_logits, logits.detach())
        grads = torch.autograd.grad(metric(logits).sum(), [offsets[n] for n in every], allow_unused=True)
    grad = dict(zip(every, grads))
    out = {}
    for k in kinds:
        per_position = []
        for name in names[k]:
            g = grad[name] if grad[name] is not None else torch.zeros_like(offsets[name])
            delta = clean[name] - corrupted[name].detach()  # (1, T, H, d_k)
            per_position.append((delta * g)[0].sum(-1).T.detach())  # (H, T)
        effect = torch.stack(per_position).cpu().double()  # (layers, H, T)
        axes = [Axis("layer", [str(i) for i in range(len(names[k]))]),
                Axis("head", [str(h) for h in range(model.config.n_heads)])]
        if by_position:
            axes.append(Axis("position", pair.labels[k.stack]))
        else:
            effect = effect.sum(-1)
        values = (effect / (base.clean - base.corrupted)).float()
        out[str(k)] = Grid(values, tuple(axes),
                           f"each {k}-attention head's output: the gradient estimate of patching it", metric.describe())
    return out


def rank_correlation(a: Tensor, b: Tensor) -> float:
    """Spearman's rank correlation of two equal-size tensors (flattened): the Pearson correlation of their ranks
    (ties take their mean rank). 1 = the same order, -1 = reversed."""
    def ranks(x: Tensor) -> Tensor:
        x = x.flatten().double()
        order = x.argsort()
        r = torch.empty_like(x)
        r[order] = torch.arange(len(x), dtype=torch.float64)
        for value in x.unique():  # ties: the mean of their ranks
            same = x == value
            r[same] = r[same].mean()
        return r

    ra, rb = ranks(a), ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    return float((ra @ rb) / (ra.norm() * rb.norm()))
