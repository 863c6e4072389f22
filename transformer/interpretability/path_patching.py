"""Path patching (Wang et al. 2022; Goldowsky-Dill et al. 2023): does a sender head act through a receiver head's
query, key or value?

Activation patching of a head's output changes everything downstream of it at once. Path patching keeps one path:
the sender head's clean output reaches one receiver head through one of its inputs (W^Q, W^K or W^V), and nothing
else. In the corrupted run:

1. freeze every head's output z and every feed-forward output at their corrupted values, except the sender head,
   whose z takes its clean value; read what each later attention computes from that stream: its q, k and v. In a
   pre-norm model the receiver's input is then exactly  resid_corrupted + (z_clean - z_corrupted)_sender W^O_sender
   (the direct path; TransformerLens's `get_act_patch_direct_path`); in a post-norm model the same freeze carries
   the sender's write through the LayerNorms between the two heads.
2. run the corrupted input again, free, with only the receiver head's q (or k, or v) replaced by the value from 1.

`path_patching` sends from one head to every receiver; `path_patching_into` receives at one head from every
sender (a head's partners, both ways).

The metric of 2, normalised (0 = corrupted run, 1 = clean run, patching_metric), is how much of the clean
behaviour flows along sender -> receiver's query (key, value). Every receiver and input runs as one batch.

Which receivers read the sender's stream after it: a self-attention head of a later layer of the same stack
(query, key, value); from the encoder, every cross-attention head's key and value (they read the encoder's
output); from the decoder, the cross-attention query of the sender's layer (after a self-attention sender) and
of later layers. Other cells are NaN. Keys and values of one query head need a key/value head of its own, so
GQA, MQA and MLA models are refused.
"""
from __future__ import annotations

import torch
from torch import Tensor

from ..model import Transformer
from .activation_patching import rows_per_batch
from .patching_metric import Baseline, Metric
from ..heads import AttentionKind, HeadId
from .patching_runs import Axis, Grid, MinimalPair, PairRun, attention_kind, run, run_pair, stack_layers
from ..points import point_name

INPUTS = {"q": "query", "k": "key", "v": "value"}


def receivers(model: Transformer, kind: AttentionKind | str, layer: int) -> list[tuple[AttentionKind, int, str]]:
    """(receiver kind, layer, input) that read the stream a head of (kind, layer) writes into, after it."""
    kind, cfg = AttentionKind.parse(kind), model.config
    ENC, DEC, CROSS = AttentionKind.ENCODER_SELF, AttentionKind.DECODER_SELF, AttentionKind.CROSS
    if kind is ENC:
        return ([(ENC, i, c) for i in range(layer + 1, cfg.n_encoder_layers) for c in INPUTS]
                + [(CROSS, i, c) for i in range(cfg.n_decoder_layers) for c in ("k", "v")])
    first_cross = layer if kind is DEC else layer + 1
    return ([(DEC, i, c) for i in range(layer + 1, cfg.n_decoder_layers) for c in INPUTS]
            + [(CROSS, i, "q") for i in range(first_cross, CROSS.n_layers(cfg))])


def _frozen(corrupted: Tensor, clean: Tensor | None = None, head: int | None = None):
    """A write function returning the corrupted run's tensor (with head `head`'s output from `clean`, if given)."""

    def write(x: Tensor) -> Tensor:
        out = corrupted.clone()
        if clean is not None:
            out[:, :, head] = clean[:, :, head]  # z is (B, T, H, d_k)
        return out

    return write


def _receiving(rows: list[tuple[int, int, Tensor]]):
    """A write function: copy i takes head h of `source` (a sender-patched q, k or v), for each (i, h, source)."""

    def write(x: Tensor) -> Tensor:
        x = x.clone()
        for i, h, source in rows:
            x[i, h] = source[0, h]  # q (B, H, T, d_k), k and v (B, G, S, d_k) with G = H
        return x

    return write


class _PathRuns:
    """What every path shares: the clean and corrupted heads' outputs and feed-forward outputs and the metric's two
    ends (read off the pair's one run, `run_pair`), and step 1 for any sender."""

    def __init__(self, model: Transformer, pair: MinimalPair | PairRun, metric: Metric):
        cfg = model.config
        if cfg.attention == "mla" or (cfg.n_kv_heads or cfg.n_heads) != cfg.n_heads:
            raise ValueError("path patching into one head's key or value needs a key/value head per query head: "
                             "this model shares them (GQA, MQA or MLA)")
        runs = run_pair(model, pair)
        self.model, self.pair, self.metric = model, runs.pair, metric
        zs = [k.point(i, "z") for k in AttentionKind.of(cfg) for i in range(k.n_layers(cfg))]
        ffns = [point_name(s, i, "ffn.out") for s in ("encoder", "decoder") for i in range(stack_layers(model, s))
                ] if model.decoder[0].ffn is not None else []
        self.clean, self.corrupted = runs.seen["clean"], runs.seen["corrupted"]
        self.base = Baseline.of(metric, runs.logits["clean"], runs.logits["corrupted"])
        self.frozen = zs + ffns

    def sender_reads(self, sender: HeadId, inputs: list[str]) -> dict[str, Tensor]:
        """Step 1: every head and FFN output frozen at its corrupted value, `sender`'s z at its clean value; what
        the attention inputs `inputs` (q, k, v points) then hold."""
        freeze = {name: _frozen(self.corrupted[name]) for name in self.frozen}
        z = sender.kind.point(sender.layer, "z")
        freeze[z] = _frozen(self.corrupted[z], self.clean[z], sender.head)
        return run(self.model, self.pair, "corrupted", read=inputs, write=freeze)[1]

    def recovered(self, cells: list[tuple[str, int, Tensor]]) -> Tensor:
        """Step 2: (len(cells),) the normalised metric of the corrupted run with, per cell (point, head, source),
        that head's slice of the point taken from `source`; one batch of copies."""
        values, size = [], rows_per_batch(self.model, self.pair)
        for start in range(0, len(cells), size):
            chunk, rows = cells[start:start + size], {}
            for n, (name, h, source) in enumerate(chunk):
                rows.setdefault(name, []).append((n, h, source))
            write = {name: _receiving(r) for name, r in rows.items()}
            values.append(self.metric(run(self.model, self.pair, "corrupted", copies=len(chunk), write=write)[0]))
        return self.base.normalise(torch.cat(values).cpu())


def _head(model: Transformer, head: HeadId | tuple[str, int, int], what: str) -> HeadId:
    head = head if isinstance(head, HeadId) else HeadId(*head)
    kind, cfg = attention_kind(model, head.kind), model.config
    if not 0 <= head.layer < kind.n_layers(cfg) or not 0 <= head.head < cfg.n_heads:
        raise ValueError(f"{what}: no head {head} in this model ({kind.n_layers(cfg)} layers x "
                         f"{cfg.n_heads} heads)")
    return head


def _grid(model: Transformer, kind: AttentionKind, values: Tensor, title: str, metric: Metric) -> Grid:
    return Grid(values, (Axis("input", list(INPUTS.values())),
                         Axis("layer", [str(i) for i in range(kind.n_layers(model.config))]),
                         Axis("head", [str(h) for h in range(model.config.n_heads)])), title, metric.describe())


@torch.no_grad()
def path_patching(model: Transformer, pair: MinimalPair | PairRun, metric: Metric, sender: HeadId | tuple[str, int, int]
                  ) -> dict[str, Grid]:
    """{receiver kind: Grid (input, layer, head)}: the normalised metric with the path from `sender` (a HeadId, or
    (kind, layer, head)) into each receiver head's query, key or value patched (NaN where no such path exists)."""
    sender = _head(model, sender, "sender")
    targets = receivers(model, sender.kind, sender.layer)
    if not targets:
        raise ValueError(f"no head reads {sender}'s output after it: choose an earlier sender")
    runs = _PathRuns(model, pair, metric)
    patched = runs.sender_reads(sender, sorted({k.point(i, c) for k, i, c in targets}))
    cells = [(k, i, c, h) for k, i, c in targets for h in range(model.config.n_heads)]
    recovered = runs.recovered([(k.point(i, c), h, patched[k.point(i, c)]) for k, i, c, h in cells])
    out = {}
    for k in AttentionKind.of(model.config):
        grid = torch.full((len(INPUTS), k.n_layers(model.config), model.config.n_heads), float("nan"))
        for n, (rk, i, c, h) in enumerate(cells):
            if rk is k:
                grid[list(INPUTS).index(c), i, h] = recovered[n]
        if not grid.isnan().all():
            out[str(k)] = _grid(model, k, grid, f"the path from {sender} into each {k}-attention head's query, key "
                                                "or value alone", metric)
    return out


@torch.no_grad()
def path_patching_into(model: Transformer, pair: MinimalPair | PairRun, metric: Metric, receiver: HeadId | tuple[str, int, int]
                       ) -> dict[str, Grid]:
    """{sender kind: Grid (input, layer, head)}: the other direction, for one receiver: the normalised metric with
    the path from each earlier head into `receiver`'s query, key or value patched (NaN where no path exists).
    One step-1 forward per sender, then one batch for all."""
    receiver = _head(model, receiver, "receiver")
    cfg = model.config
    at = (receiver.kind, receiver.layer)
    senders = [HeadId(k, i, h) for k in AttentionKind.of(cfg) for i in range(k.n_layers(cfg))
               if at in {(rk, ri) for rk, ri, _ in receivers(model, k, i)} for h in range(cfg.n_heads)]
    if not senders:
        raise ValueError(f"no head writes into what {receiver} reads before it: choose a later receiver")
    runs = _PathRuns(model, pair, metric)
    cells = []
    for sender in senders:
        inputs = [c for rk, ri, c in receivers(model, sender.kind, sender.layer)
                  if (rk, ri) == (receiver.kind, receiver.layer)]
        names = [receiver.kind.point(receiver.layer, c) for c in inputs]
        patched = runs.sender_reads(sender, names)
        cells += [(sender, c, (name, receiver.head, patched[name])) for c, name in zip(inputs, names)]
    recovered = runs.recovered([cell for _, _, cell in cells])
    out = {}
    for k in AttentionKind.of(cfg):
        grid = torch.full((len(INPUTS), k.n_layers(cfg), cfg.n_heads), float("nan"))
        for n, (sender, c, _) in enumerate(cells):
            if sender.kind is k:
                grid[list(INPUTS).index(c), sender.layer, sender.head] = recovered[n]
        if not grid.isnan().all():
            out[str(k)] = _grid(model, k, grid, f"the path from each {k}-attention head into {receiver}'s query, key "
                                                "or value alone", metric)
    return out
