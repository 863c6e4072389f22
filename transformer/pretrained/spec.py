"""What a pretrained family's spec is made of: a family is data, read by one converter (convert.py) and one loader.

A `Family` says, and only says:
- `config`: each of our TransformerConfig fields, from one config.json field (`Read`), from another of ours (`Ours`)
  or a constant of the family; `supported` config.json values it must have, `equal_to_ours` fields that must equal ours;
- where the hub stores each of our tensors (`Weight`: its names and a named transform: `same`, `transposed`,
  `qkv_rows`, `one_row`), for the whole model and per layer (`Layers`), which stored tensors it ignores and which
  stored tables must equal the ones we compute (`Checked`);
- its tokenizer (`Tokenizer`: the files it reads and the reader).
The shapes the hub's files must have are derived from OUR config (the model built on the `meta` device), never from
config.json: a spec cannot describe one shape and build another.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch
from torch import Tensor

from ..checkpoint import CheckpointError
from ..config import TransformerConfig

REQUIRED = object()  # a Read without a default: config.json must have the field


@dataclass(frozen=True)
class Read:
    """One config.json field read into one of our fields, checked by its kind, naming the field when it is wrong.

    `name` may be dotted ("rope_parameters.rope_theta") and may list places to look in turn (the first present);
    kinds: "size" a positive integer, "id" a non-negative integer (a token id), "number" a finite real, "flag" true
    or false, "name" one of `choices` (config.json's value -> ours). A null or absent value with a None default is
    `otherwise(ours so far)` when given, else None."""

    name: str | tuple[str, ...]
    default: object = REQUIRED
    kind: str = "size"
    choices: dict | None = None
    otherwise: Callable[[dict], object] | None = None
    most: int | None = None  # an upper bound of a size

    def read(self, hf: dict, ours: dict) -> tuple[object, str]:
        """(our value, the config.json field it came from)."""
        names = (self.name,) if isinstance(self.name, str) else self.name
        where = next((n for n in names if lookup(hf, n) is not None), names[-1])
        value = lookup(hf, where)
        what = f"one of {sorted(self.choices)}" if self.choices is not None else KINDS[self.kind]
        if value is None:
            if self.default is REQUIRED:
                raise CheckpointError(f"{where}: config.json must give it ({what})")
            value = self.default
        if value is None:
            return (self.otherwise(ours) if self.otherwise else None), where
        if self.choices is not None:
            if not isinstance(value, str) or value not in self.choices:  # a list or an object is no name either
                raise CheckpointError(f"{where}: must be {what}, got {value!r}")
            return self.choices[value], where
        if not CHECKS[self.kind](value) or (self.most is not None and value > self.most):
            bound = f" at most {self.most}" if self.most is not None else ""
            raise CheckpointError(f"{where}: must be {KINDS[self.kind]}{bound}, got {value!r}")
        return (float(value) if self.kind == "number" else value), where


def _integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


KINDS = {"size": "a positive integer", "id": "a token id (an integer >= 0)", "number": "a finite number",
         "flag": "true or false"}
CHECKS = {"size": lambda v: _integer(v) and v >= 1, "id": lambda v: _integer(v) and v >= 0,
          "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v),
          "flag": lambda v: isinstance(v, bool)}


def lookup(hf: dict, name: str):
    """config.json's value at a dotted `name`, None when absent; CheckpointError when a parent is not an object."""
    value = hf
    for i, part in enumerate(name.split(".")):
        if value is None:
            return None
        if not isinstance(value, dict):
            raise CheckpointError(f"{'.'.join(name.split('.')[:i])}: must be an object, got {value!r}")
        value = value.get(part)
    return value


@dataclass(frozen=True)
class Ours:
    """One of our fields equal to another of ours, already read (GPT-2's pad_id is its eos_id)."""

    name: str


@dataclass(frozen=True)
class Transform:
    """How stored tensors become one of ours: `apply(stored) -> ours`, and the stored shapes `shapes(our shape,
    config)` implies (so the file is checked against our config before a byte of data is read)."""

    name: str
    apply: Callable[[list[Tensor]], Tensor]
    shapes: Callable[[tuple[int, ...], TransformerConfig], list[tuple[int, ...]]]


SAME = Transform("same", lambda t: t[0], lambda shape, c: [shape])
# Conv1D (GPT-2) stores a linear map as (in, out); nn.Linear's weight is (out, in)
TRANSPOSED = Transform("transposed", lambda t: t[0].t().contiguous(), lambda shape, c: [shape[::-1]])
# W^Q, W^K, W^V stored apart, stacked as the rows of our in_proj: H d_k, then G d_k, then G d_k rows
QKV_ROWS = Transform("qkv_rows", lambda t: torch.cat(t), lambda shape, c: [
    (rows, *shape[1:]) for rows in (c.n_heads * c.d_k, c.n_kv_heads * c.d_k, c.n_kv_heads * c.d_k)])
# a vector stored as a (1, n) matrix (Marian's final_logits_bias)
ONE_ROW = Transform("one_row", lambda t: t[0].reshape(-1), lambda shape, c: [(1, *shape)])


@dataclass(frozen=True)
class Weight:
    """Where the hub stores one of our tensors: `stored` names (one per input of `transform`). A single-input
    tensor may be stored under any of `stored + copies` (at least one; every copy present must be equal); with
    `absent`, a file may store none (`absent(config)` is used: Marian's final_logits_bias is zeros)."""

    stored: tuple[str, ...]
    transform: Transform = SAME
    copies: tuple[str, ...] = ()
    absent: Callable[[TransformerConfig], Tensor] | None = None

    def under(self, prefix: str) -> "Weight":
        """The same rule with every stored name under `prefix` (a layer's)."""
        return Weight(tuple(prefix + n for n in self.stored), self.transform, tuple(prefix + n for n in self.copies),
                      self.absent)


def same(name: str, *copies: str) -> Weight:
    return Weight((name,), SAME, copies)


def transposed(name: str) -> Weight:
    return Weight((name,), TRANSPOSED)


def qkv_rows(q: str, k: str, v: str) -> Weight:
    return Weight((q, k, v), QKV_ROWS)


def one_row(name: str, absent: Callable[[TransformerConfig], Tensor] | None = None) -> Weight:
    return Weight((name,), ONE_ROW, absent=absent)


@dataclass(frozen=True)
class Layers:
    """One stack's layers: our `ours.format(i=i)` + key <- the hub's `stored.format(i=i)` + name, for i below our
    config's `count` field ("n_decoder_layers", "n_encoder_layers")."""

    ours: str
    stored: str
    count: str
    weights: dict[str, Weight]


@dataclass(frozen=True)
class Ignored:
    """Stored tensors matching `pattern` that the model does not use (GPT-2's mask buffers, BERT's pooler), with
    the shapes they may have (`shapes(config)`; None: any)."""

    pattern: str
    shapes: Callable[[TransformerConfig], set[tuple[int, ...]]] | None = None


@dataclass(frozen=True)
class Checked:
    """Tables a file may store that we compute instead (Marian's sinusoids): each must equal `value(config)`."""

    names: tuple[str, ...]
    value: Callable[[TransformerConfig], Tensor]
    what: str
    atol: float = 1e-4


@dataclass(frozen=True)
class Tokenizer:
    """The tokenizer: the first of `files` (alternative sets of file names) all present, read by `read(directory,
    paths)`; `check(directory)` refuses a directory this reader cannot serve (listing the cache calls it too)."""

    files: tuple[tuple[str, ...], ...]
    read: Callable[[Path, list[Path]], object]
    check: Callable[[Path], None] = lambda directory: None

    def paths(self, directory: Path) -> list[Path]:
        for names in self.files:
            if all((directory / n).is_file() for n in names):
                self.check(directory)
                return [directory / n for n in names]
        wanted = ", or ".join(" and ".join(names) for names in self.files)
        raise CheckpointError(f"{directory}: no tokenizer ({wanted})")


@dataclass(frozen=True)
class Family:
    """One family of Hugging Face models, as data (see the module's docstring); registered by family.register."""

    model_type: str
    name: str  # "GPT-2", "Llama", ...: how the info and messages call it
    arch: str  # the TransformerConfig arch of its models (our config's `arch`)
    config: dict[str, object]  # every other field of ours it sets -> Read, Ours or a constant
    weights: dict[str, Weight]  # our tensor outside the layers -> where it is stored
    layers: tuple[Layers, ...]
    tokenizer: Tokenizer
    supported: dict[str, object] = field(default_factory=dict)  # config.json field -> the one value it may have
    equal_to_ours: dict[str, str] = field(default_factory=dict)  # config.json field -> our field it equals
    rename: tuple[tuple[str, str], ...] = ()  # (regex, replacement) applied to every stored name first
    ignored: tuple[Ignored, ...] = ()
    checked: tuple[Checked, ...] = ()
    vocab: str = "equal"  # the tokenizer's size against vocab_size: "equal" or "at most"
    from_tokenizer: dict[str, str] = field(default_factory=dict)  # our id field -> the tokenizer's attribute
    agrees_with_tokenizer: tuple[str, ...] = ()  # our id fields the tokenizer's same-named attributes must equal
