"""The two runs every patching method compares: a clean input and a corrupted input of the same shape.

A decoder-only model reads one sequence of ids; an encoder-decoder model reads a source (with its </s>) and a
target (its decoder reads <s> + target, `transformer.encoding.decoder_ids`). A `MinimalPair` holds both inputs of
both runs, `run` runs the model on copies of one of them inside a `transformer.points.points` block (the one
mechanism that reads and writes the model's insides), and a `Grid` is what every method returns: plain values
with a label for each axis, so every cell can say what it is.

A `PairRun` (`run_pair`) is the pair's two inputs run once each, unpatched, with every point a method reads from
them: every grid, metric and path of one question takes it in place of the pair, so a click that draws several
of them runs each input once (each method then runs only its own patched forwards).

Attention kinds are `transformer.heads.AttentionKind` ("encoder self", "decoder self", "cross"; their text is
accepted too). A stream is "encoder" (the source positions) or "decoder" (the decoder's input positions).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor

from ..encoding import decoder_ids
from ..heads import AttentionKind
from ..model import Transformer
from ..points import Read, Write, point_name, points


def attention_kind(model: Transformer, kind: AttentionKind | str) -> AttentionKind:
    """`kind` as an AttentionKind of this model; raises ValueError naming the kinds it has."""
    kinds = AttentionKind.of(model.config)
    parsed = AttentionKind.parse(kind)
    if parsed not in kinds:
        raise ValueError(f"kind: this model has {', '.join(map(str, kinds))} attention, not {kind!r}")
    return parsed


def stack_layers(model: Transformer, stack: str) -> int:
    """Layers of a stack: "encoder" or "decoder"."""
    return model.config.n_encoder_layers if stack == "encoder" else model.config.n_decoder_layers


@dataclass(frozen=True)
class MinimalPair:
    """A clean and a corrupted input of one shape (build one with `minimal_pair`, which checks them).

    Per run ("clean", "corrupted"): `decoder` the ids the decoder reads (the whole input of a decoder-only model;
    <s> + target of an encoder-decoder one), `encoder` the sources with their </s> (None for decoder-only).
    `next_ids`: what each decoder position of the clean run should predict (the clean target's loss reads it).
    `labels`: per stream ("encoder", "decoder"), one label per position: its index and token, with both tokens
    where the two runs differ ("3 'a'/'x'")."""

    decoder: dict[str, tuple[int, ...]]
    encoder: dict[str, tuple[int, ...]] | None
    next_ids: tuple[int, ...]
    labels: dict[str, list[str]] = field(default_factory=dict)

    def inputs(self, which: str, copies: int, device) -> tuple[Tensor, ...]:
        """The model's arguments for `copies` copies of run `which`: (tokens,) or (source, decoder input)."""
        if which not in self.decoder:
            raise ValueError(f"which: 'clean' or 'corrupted', got {which!r}")
        rows = [self.decoder[which]] if self.encoder is None else [self.encoder[which], self.decoder[which]]
        return tuple(torch.tensor([list(r)] * copies, device=device) for r in rows)  # (copies, L) each

    def length(self, stream: str) -> int:
        """Positions of a stream: "decoder", or "encoder" (the source)."""
        return len((self.decoder if stream == "decoder" else self.encoder)["clean"])


def token_name(tokenizer, token: int) -> str:
    """A token as a label says it: its text quoted, or "#id" without a tokenizer."""
    return repr(tokenizer.id_to_token(token)) if tokenizer is not None else f"#{token}"


def _position_labels(clean, corrupted, tokenizer) -> list[str]:
    """'3 'a'' where both runs read the same token at position 3, '3 'a'/'x'' where they differ."""
    name = lambda i: token_name(tokenizer, i)  # noqa: E731
    return [f"{t} {name(a)}" if a == b else f"{t} {name(a)}/{name(b)}"
            for t, (a, b) in enumerate(zip(clean, corrupted))]


def minimal_pair(model: Transformer, clean: list[int], corrupted: list[int], clean_target: list[int] | None = None,
                 corrupted_target: list[int] | None = None, tokenizer=None) -> MinimalPair:
    """Check and hold a clean/corrupted pair for `model`; raises ValueError saying what is wrong.

    Decoder-only: `clean` and `corrupted` are the ids the model reads. Encoder-decoder: they are the sources (with
    their </s>, as `transformer.encoding.source_ids` gives them) and `clean_target` the target the decoder reads
    after <s> (the corrupted run reads `corrupted_target`, by default the same target). The two runs must have the
    same lengths: patching puts an activation of one run at the same position of the other. `tokenizer`, if given,
    names the tokens in the position labels."""
    cfg = model.config
    if not clean:
        raise ValueError("the clean input is empty")
    texts = [("input", clean, corrupted)]
    if cfg.is_encoder_decoder:
        if clean_target is None:
            raise ValueError("an encoder-decoder model needs a target: its decoder reads <s> + target")
        corrupted_target = clean_target if corrupted_target is None else corrupted_target
        texts.append(("target", clean_target, corrupted_target))
    elif clean_target is not None or corrupted_target is not None:
        raise ValueError("a decoder-only model reads one sequence: give no target")
    for what, a, b in texts:
        if len(a) != len(b):
            raise ValueError(f"the clean and corrupted {what}s must have the same number of tokens to patch one into "
                             f"the other: {len(a)} and {len(b)}")
        if any(not 0 <= int(i) < cfg.vocab_size for i in list(a) + list(b)):
            raise ValueError(f"the {what} has ids outside this model's vocabulary of {cfg.vocab_size}")
    if cfg.is_encoder_decoder:
        (dec_clean, next_ids), (dec_corrupted, _) = decoder_ids(clean_target, cfg), decoder_ids(corrupted_target, cfg)
        encoder = {"clean": tuple(clean), "corrupted": tuple(corrupted)}
    else:
        dec_clean, dec_corrupted, next_ids, encoder = list(clean), list(corrupted), list(clean[1:]), None
    longest = max(len(clean), len(dec_clean))
    if longest > cfg.max_len:
        raise ValueError(f"the input has {longest} tokens; this model reads at most max_len={cfg.max_len}")
    labels = {"decoder": _position_labels(dec_clean, dec_corrupted, tokenizer)}
    if encoder is not None:
        labels["encoder"] = _position_labels(clean, corrupted, tokenizer)
    return MinimalPair({"clean": tuple(dec_clean), "corrupted": tuple(dec_corrupted)}, encoder,
                       tuple(int(i) for i in next_ids), labels)


def run(model: Transformer, pair: MinimalPair, which: str, copies: int = 1, read: Read = (),
        write: Write | None = None) -> tuple[Tensor, dict[str, Tensor]]:
    """Run the model on `copies` copies of run `which`, reading and writing named points:
    (logits (copies, T, vocab_size), {name: tensor read}). Gradients flow when the caller enables them."""
    with points(read=read, write=write) as seen:
        logits = model(*pair.inputs(which, copies, model.device)).logits  # (copies, T, vocab_size)
    return logits, seen


def patching_points(model: Transformer, patterns: bool = False) -> list[str]:
    """Every point a patching method reads from the unpatched runs: each layer's residual stream entering it and
    its feed-forward output (both stacks), every attention's z (and, with `patterns`, its pattern: reading one
    makes attention build its weights explicitly instead of PyTorch's fused kernel, which differs in the last
    float bits, so only pattern patching, whose patched runs write patterns, asks for them), and the decoder's last
    layer's output (what the final norm reads)."""
    cfg, names = model.config, []
    for stack in ("encoder", "decoder"):
        layers = range(stack_layers(model, stack))
        names += [point_name(stack, i, "resid_pre") for i in layers]
        names += [point_name(stack, i, "ffn.out") for i in layers if getattr(model, stack)[i].ffn is not None]
    names += [k.point(i, name) for k in AttentionKind.of(cfg) for i in range(k.n_layers(cfg))
              for name in (("z", "pattern") if patterns else ("z",))]
    return names + [point_name("decoder", cfg.n_decoder_layers - 1, "resid_post")]


@dataclass(frozen=True)
class PairRun:
    """A pair's two inputs run once each, unpatched (`run_pair`): `logits[which]` (1, T, vocab_size) and
    `seen[which][name]` every point of `patching_points`, for which in ("clean", "corrupted")."""

    pair: MinimalPair
    logits: dict[str, Tensor]
    seen: dict[str, dict[str, Tensor]]
    patterns: bool = False


@torch.no_grad()
def run_pair(model: Transformer, pair: MinimalPair | PairRun, patterns: bool = False) -> PairRun:
    """`pair` run once per input, reading every point a patching method needs; a PairRun that has them (its
    patterns too, if asked) is returned as it is."""
    if isinstance(pair, PairRun):
        if pair.patterns or not patterns:
            return pair
        pair = pair.pair
    names, logits, seen = patching_points(model, patterns), {}, {}
    for which in ("clean", "corrupted"):
        logits[which], seen[which] = run(model, pair, which, read=names)
    return PairRun(pair, logits, seen, patterns)


@dataclass(frozen=True)
class Axis:
    """One axis of a Grid: its name ("layer", "head", "position", "input") and a label per index."""

    name: str
    labels: list[str]


@dataclass(frozen=True)
class Grid:
    """What a patching method returns: `values` with one axis per entry of `axes`, and in words what was done
    (`title`) and measured (`metric`). NaN marks a cell with nothing to measure (a path that does not exist)."""

    values: Tensor
    axes: tuple[Axis, ...]
    title: str
    metric: str

    def cell(self, *index: int) -> str:
        """What the cell at `index` is, in words: "layer 1, head 0: 0.93"."""
        where = ", ".join(f"{axis.name} {axis.labels[i]}" for axis, i in zip(self.axes, index))
        return f"{where}: {float(self.values[index]):.3g}"
