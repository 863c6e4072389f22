"""Reading a Hugging Face model directory safely: config.json, and model.safetensors checked before allocation.

`read_weights` reads the safetensors header first (transformer/safetensors_reader.py: sizes, dtypes, byte ranges),
compares every tensor's name and shape with the ones the family's config.json implies, and only then reads the
data. `model_from_state` builds our Transformer around converted tensors without allocating random weights first.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable

import torch
from torch import Tensor

from ..checkpoint import MAX_HEADER_BYTES, CheckpointError, expected_tensors
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


def read_weights(file: Path, expected: dict[str, tuple[int, ...]], *, rename: Callable[[str], str] = str,
                 optional: Callable[[str, tuple[int, ...]], bool] = lambda name, shape: False
                 ) -> dict[str, Tensor]:
    """The tensors of `file`, by their `rename`d names, read only once the header has matched `expected`.

    Every expected name must be there with its shape; a name not expected must be `optional(name, shape)` (a tied
    head stored again, a stored mask buffer), else the file is refused. Raises CheckpointError saying what differs.
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
        shapes = {rename(name): tuple(entry["shape"]) for name, entry in header.items()}
        missing = sorted(set(expected) - set(shapes))
        unexpected = sorted(n for n, s in shapes.items() if n not in expected and not optional(n, s))
        if missing or unexpected:
            raise CheckpointError(f"{file} does not match config.json: missing {missing[:8]}, unexpected "
                                  f"{[n[:80] for n in unexpected[:8]]}")
        for name, shape in expected.items():
            if shapes[name] != tuple(shape):
                raise CheckpointError(f"{file} does not match config.json: {name} is {list(shapes[name])}, "
                                      f"config.json implies {list(shape)}")
        try:
            tensors = read_tensors(f, size, header, start)
        except ValueError as e:
            raise CheckpointError(f"{file}: {e}") from None
    # copies, so that no tensor keeps the whole file's buffer alive once the model holds converted weights
    return {rename(name): tensors.pop(name).clone() for name in list(tensors)}


def check_model_size(directory: Path, config: TransformerConfig) -> None:
    """The checkpoint loader's bounds (parameters, buffers computed at load time) on a converted config."""
    expected_tensors(directory, config)


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
