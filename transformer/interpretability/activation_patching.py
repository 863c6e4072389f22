"""Activation patching (Meng et al. 2022; Wang et al. 2022): which activations carry the difference between two inputs.

Run the model on the corrupted input, but with one activation (a residual stream vector at one position, one
head's output, one head's attention pattern) replaced by its value on the clean input, and score the result
with a metric (patching_metric): normalised, 0 is the corrupted run and 1 the clean run,

    recovery(a) = (m(corrupted run with a := a_clean) - m(corrupted)) / (m(clean) - m(corrupted)).

This is the "denoising" direction (clean into corrupted): a cell near 1 is an activation that is enough, alone,
to bring the clean behaviour back. Each cell is one patched forward; the cells of a grid run as one batch of
copies of the corrupted input, each copy with its own cell patched (`patch_cells`).

Grids (a Grid each, every axis labelled):
- `residual_patching`: the residual stream entering each layer (`{stack}.{i}.resid_pre`), per position;
- `head_patching`: each head's output z (before W^O) at every position at once, or per position;
- `pattern_patching`: each head's attention pattern (every query's row at once).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from ..model import Transformer
from .patching_metric import Baseline, Metric
from ..heads import AttentionKind
from .patching_runs import Axis, Grid, MinimalPair, PairRun, attention_kind, run, run_pair, stack_layers
from ..points import point_name

BATCH_ELEMENTS = 2 ** 23  # floats of logits and activations one patched batch may hold (~32 MB each)


@dataclass(frozen=True)
class Cell:
    """One patch: at point `point`, the part `index` of one run's tensor (its batch axis left out) takes the clean
    run's value, e.g. ("decoder.0.resid_pre", (5,)) is position 5, ("decoder.1.self_attn.z", (slice(None), 2))
    head 2 at every position."""

    point: str
    index: tuple


def rows_per_batch(model: Transformer, pair: MinimalPair) -> int:
    """How many patched copies of the corrupted input run in one forward within BATCH_ELEMENTS."""
    cfg = model.config
    T, S = pair.length("decoder"), pair.length("encoder") if pair.encoder is not None else 0
    L = max(T, S)
    per_row = L * (cfg.vocab_size + cfg.d_ff + cfg.n_heads * L + 4 * cfg.d_model)
    return max(1, BATCH_ELEMENTS // per_row)


def _writer(clean: Tensor, rows: list[tuple[int, tuple]]):
    """A write function: copy i of the batch gets the clean value at its index, for each (i, index) in `rows`."""

    def write(x: Tensor) -> Tensor:
        x = x.clone()
        for i, index in rows:
            x[(i, *index)] = clean[(0, *index)]
        return x

    return write


@torch.no_grad()
def patch_cells(model: Transformer, pair: MinimalPair | PairRun, metric: Metric, cells: list[Cell]
                ) -> tuple[Tensor, Baseline]:
    """(len(cells),): the metric of the corrupted run with each cell patched from the clean run (not normalised),
    and the metric on both runs unpatched (read off the pair's one run, `run_pair`). A cell whose clean value
    equals the corrupted one (a position both inputs share, before anything differs) would patch nothing: it takes
    the corrupted run's metric without a run."""
    runs = run_pair(model, pair)
    pair, clean, corrupted = runs.pair, runs.seen["clean"], runs.seen["corrupted"]
    base = Baseline(float(metric(runs.logits["clean"])[0]), float(metric(runs.logits["corrupted"])[0]))
    values = torch.full((len(cells),), base.corrupted)
    todo = [n for n, c in enumerate(cells) if not torch.equal(clean[c.point][(0, *c.index)],
                                                              corrupted[c.point][(0, *c.index)])]
    size = rows_per_batch(model, pair)
    for start in range(0, len(todo), size):
        chunk, rows = todo[start:start + size], {}
        for i, n in enumerate(chunk):
            rows.setdefault(cells[n].point, []).append((i, cells[n].index))
        write = {point: _writer(clean[point], r) for point, r in rows.items()}
        logits, _ = run(model, pair, "corrupted", copies=len(chunk), write=write)
        values[chunk] = metric(logits).cpu()
    return values, base  # (len(cells),)


def _grid(model, pair, metric, cells, shape, axes, title) -> Grid:
    values, base = patch_cells(model, pair, metric, cells)
    return Grid(base.normalise(values).view(shape), tuple(axes), title, metric.describe())


def _layers(n: int) -> Axis:
    return Axis("layer", [str(i) for i in range(n)])


def _heads(model: Transformer) -> Axis:
    return Axis("head", [str(h) for h in range(model.config.n_heads)])


def residual_patching(model: Transformer, pair: MinimalPair | PairRun, metric: Metric, stack: str = "decoder"
                      ) -> Grid:
    """(layers, positions): the residual stream entering layer i (`{stack}.{i}.resid_pre`; layer 0's is the
    embedding) at one position, patched from the clean run. `stack` is "decoder" or "encoder" (the source)."""
    runs = run_pair(model, pair)
    pair = runs.pair
    if stack not in ("decoder", "encoder") or (stack == "encoder" and pair.encoder is None):
        raise ValueError(f"stack: {'decoder or encoder' if pair.encoder is not None else 'decoder'}, got {stack!r}")
    L, T = stack_layers(model, stack), pair.length(stack)
    cells = [Cell(point_name(stack, i, "resid_pre"), (t,)) for i in range(L) for t in range(T)]
    return _grid(model, runs, metric, cells, (L, T), [_layers(L), Axis("position", pair.labels[stack])],
                 f"the {stack}'s residual stream entering each layer, one position at a time")


def head_patching(model: Transformer, pair: MinimalPair | PairRun, metric: Metric,
                  kind: AttentionKind | str = AttentionKind.DECODER_SELF, by_position: bool = False) -> Grid:
    """(layers, heads): each head's output z (before W^O) patched at every position at once; with `by_position`,
    (layers, heads, positions): at one query position at a time."""
    kind = attention_kind(model, kind)
    runs = run_pair(model, pair)
    L, H = kind.n_layers(model.config), model.config.n_heads
    axes = [_layers(L), _heads(model)]
    if by_position:
        T = runs.pair.length(kind.stack)
        cells = [Cell(kind.point(i, "z"), (t, h)) for i in range(L) for h in range(H) for t in range(T)]
        axes.append(Axis("position", runs.pair.labels[kind.stack]))
        return _grid(model, runs, metric, cells, (L, H, T), axes,
                     f"each {kind}-attention head's output (z, before W^O) at one position")
    cells = [Cell(kind.point(i, "z"), (slice(None), h)) for i in range(L) for h in range(H)]
    return _grid(model, runs, metric, cells, (L, H), axes,
                 f"each {kind}-attention head's output (z, before W^O) at every position")


def pattern_patching(model: Transformer, pair: MinimalPair | PairRun, metric: Metric,
                     kind: AttentionKind | str = AttentionKind.DECODER_SELF) -> Grid:
    """(layers, heads): each head's attention pattern (every query's weights) patched from the clean run, its
    values (what the weights average) left those of the corrupted run: whether where a head looks matters."""
    kind = attention_kind(model, kind)
    pair = run_pair(model, pair, patterns=True)  # its own run of the pair when it was run without them
    L, H = kind.n_layers(model.config), model.config.n_heads
    cells = [Cell(kind.point(i, "pattern"), (h,)) for i in range(L) for h in range(H)]
    return _grid(model, pair, metric, cells, (L, H), [_layers(L), _heads(model)],
                 f"each {kind}-attention head's pattern (where it looks), its values kept")
