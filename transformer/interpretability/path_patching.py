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
from .patching_runs import Axis, Grid, MinimalPair, attention_kind, run, stack_layers

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


def _receiving(seen: dict[str, Tensor], rows: list[tuple[int, int]]):
    """A write function: copy i takes head h of the sender-patched value, for each (i, h) in `rows`."""

    def write(x: Tensor) -> Tensor:
        x = x.clone()
        for i, h in rows:
            x[i, h] = seen[0, h]  # q (B, H, T, d_k), k and v (B, G, S, d_k) with G = H
        return x

    return write


@torch.no_grad()
def path_patching(model: Transformer, pair: MinimalPair, metric: Metric, sender: HeadId | tuple[str, int, int]
                  ) -> dict[str, Grid]:
    """{receiver kind: Grid (input, layer, head)}: the normalised metric with the path from `sender` (a HeadId, or
    (kind, layer, head)) into each receiver head's query, key or value patched (NaN where no such path exists)."""
    sender = sender if isinstance(sender, HeadId) else HeadId(*sender)
    kind, layer, head = attention_kind(model, sender.kind), sender.layer, sender.head
    cfg = model.config
    if not 0 <= layer < kind.n_layers(cfg) or not 0 <= head < cfg.n_heads:
        raise ValueError(f"sender: no head {sender} in this model ({kind.n_layers(cfg)} layers x "
                         f"{cfg.n_heads} heads)")
    if cfg.attention == "mla" or (cfg.n_kv_heads or cfg.n_heads) != cfg.n_heads:
        raise ValueError("path patching into one head's key or value needs a key/value head per query head: this "
                         "model shares them (GQA, MQA or MLA)")
    targets = receivers(model, kind, layer)
    if not targets:
        raise ValueError(f"no head reads the head {sender}'s output after it: choose an earlier sender")
    kinds = AttentionKind.of(cfg)
    zs = [k.point(i, "z") for k in kinds for i in range(k.n_layers(cfg))]
    ffns = [f"{s}.{i}.ffn.out" for s in ("encoder", "decoder") for i in range(stack_layers(model, s))
            ] if model.decoder[0].ffn is not None else []
    sender_z = kind.point(layer, "z")
    clean_logits, clean = run(model, pair, "clean", read=[sender_z])
    corrupted_logits, corrupted = run(model, pair, "corrupted", read=zs + ffns)
    base = Baseline.of(metric, clean_logits, corrupted_logits)
    freeze = {name: _frozen(corrupted[name]) for name in zs + ffns}
    freeze[sender_z] = _frozen(corrupted[sender_z], clean[sender_z], head)
    inputs = sorted({k.point(i, c) for k, i, c in targets})
    _, patched = run(model, pair, "corrupted", read=inputs, write=freeze)  # step 1: what each receiver would read
    cells = [(k, i, c, h) for k, i, c in targets for h in range(cfg.n_heads)]
    values, size = [], rows_per_batch(model, pair)
    for start in range(0, len(cells), size):  # step 2: one copy per receiver head and input
        chunk, rows = cells[start:start + size], {}
        for n, (k, i, c, h) in enumerate(chunk):
            rows.setdefault(k.point(i, c), []).append((n, h))
        write = {name: _receiving(patched[name], r) for name, r in rows.items()}
        values.append(metric(run(model, pair, "corrupted", copies=len(chunk), write=write)[0]))
    recovered = base.normalise(torch.cat(values).cpu())
    out = {}
    for k in kinds:
        grid = torch.full((len(INPUTS), k.n_layers(cfg), cfg.n_heads), float("nan"))
        for n, (rk, i, c, h) in enumerate(cells):
            if rk is k:
                grid[list(INPUTS).index(c), i, h] = recovered[n]
        if not grid.isnan().all():
            out[str(k)] = Grid(grid, (Axis("input", list(INPUTS.values())),
                                      Axis("layer", [str(i) for i in range(k.n_layers(cfg))]),
                                      Axis("head", [str(h) for h in range(cfg.n_heads)])),
                               f"the path from {sender} into each {k}-attention head's query, key or value alone",
                               metric.describe())
    return out
