"""Reading a Hugging Face model directory safely: config.json, and model.safetensors checked before allocation.

`read_weights` reads the safetensors header first (transformer/safetensors_reader.py: sizes, dtypes, byte ranges),
compares every tensor's name and shape with the family's `Layout` (derived from our config by convert.plan), and
only then reads the data. `model_from_state` builds our Transformer around converted tensors without allocating
random weights first.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch
from torch import Tensor

from ..checkpoint import MAX_HEADER_BYTES, CheckpointError
from ..config import TransformerConfig
from ..model import Transformer
from ..positions import position_scheme
from ..safetensors_reader import read_header, read_tensors
from .hub import refuse_without_safetensors

MAX_CONFIG_BYTES = 2**20


def weights_file(directory: Path) -> Path:
    """directory/model.safetensors, or CheckpointError (a directory with pickled weights only is refused)."""
    if not (directory / "config.json").is_file():
        raise CheckpointError(f"{directory}: missing config.json")
    refuse_without_safetensors(str(directory), {p.name for p in directory.iterdir() if p.is_file()})
    return directory / "model.safetensors"


def read_json(path: Path, max_bytes: int = MAX_CONFIG_BYTES) -> dict:
    """A JSON object from `path` (at most `max_bytes`), or CheckpointError."""
    try:
        if path.stat().st_size > max_bytes:
            raise CheckpointError(f"{path}: larger than {max_bytes:,} bytes")
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise CheckpointError(f"{path}: not valid JSON: {e}") from None
    if not isinstance(data, dict):
        raise CheckpointError(f"{path}: expected a JSON object")
    return data


@dataclass(frozen=True)
class Layout:
    """What a family's model.safetensors must hold, from our config (convert.layout): every stored name it may use
    with its shape; `needed` groups of names, each of which must have one present; `ignored(name, shape)` for
    tensors it holds and does not use; `rename` applied to every stored name first."""

    shapes: dict[str, tuple[int, ...]]
    needed: list[tuple[str, ...]]
    ignored: Callable[[str, tuple[int, ...]], bool]
    rename: Callable[[str], str] = str


def check_names(file, shapes: dict[str, tuple[int, ...]], layout: Layout) -> None:
    """CheckpointError unless the stored (renamed) names and shapes are what `layout` asks."""
    missing = [names[0] if len(names) == 1 else f"one of {list(names)}" for names in layout.needed
               if not any(n in shapes for n in names)]
    unexpected = sorted(n for n, s in shapes.items() if n not in layout.shapes and not layout.ignored(n, s))
    if missing or unexpected:
        raise CheckpointError(f"{file} does not match config.json: missing {missing[:8]}, unexpected "
                              f"{[n[:80] for n in unexpected[:8]]}")
    for name, shape in shapes.items():
        if name in layout.shapes and shape != tuple(layout.shapes[name]):
            raise CheckpointError(f"{file} does not match config.json: {name} is {list(shape)}, config.json "
                                  f"implies {list(layout.shapes[name])}")


def read_weights(file: Path, layout: Layout) -> dict[str, Tensor]:
    """The tensors of `file`, by their renamed names, read only once the header has matched `layout`.

    Raises CheckpointError saying what differs (a missing, unexpected or misshapen tensor) before any data is read.
    """
    try:
        f = open(file, "rb")
    except OSError as e:
        raise CheckpointError(f"{file}: cannot be read: {e}") from None
    with f:
        size = os.fstat(f.fileno()).st_size
        try:
            header, start = read_header(f, size, MAX_HEADER_BYTES)
        except ValueError as e:
            raise CheckpointError(f"{file} is not a valid safetensors file: {e}") from None
        check_names(file, {layout.rename(name): tuple(entry["shape"]) for name, entry in header.items()}, layout)
        try:
            tensors = read_tensors(f, size, header, start)
        except ValueError as e:
            raise CheckpointError(f"{file}: {e}") from None
    # copies, so that no tensor keeps the whole file's buffer alive once the model holds converted weights
    return {layout.rename(name): tensors.pop(name).clone() for name in list(tensors)}


def model_from_state(config: TransformerConfig, state: dict[str, Tensor]) -> Transformer:
    """Our Transformer (CPU, float32, train mode) holding `state`, built on the meta device: no memory and no
    random initialisation for weights that are replaced at once. Every weight must be finite."""
    for name, tensor in state.items():
        if not torch.isfinite(tensor).all():
            raise CheckpointError(f"model.safetensors: {name} holds NaN or infinite values")
    with torch.device("meta"):
        model = Transformer(config)
    model.load_state_dict(state, strict=True, assign=True)
    if config.tie_embeddings:
        model.lm_head.weight = model.embed.weight  # assign=True gave the tied pair two Parameters: one again
    positions = position_scheme(config)  # computed, not stored: RoPE's angles, the sinusoidal table, on the CPU
    if config.pos_encoding == "sinusoidal":
        model.pos_encoding = positions.absolute
    for module in model.modules():
        if getattr(module, "position", None) is not None:
            module.position = positions.relative
    return model
