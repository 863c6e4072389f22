"""What a checkpoint is checked for before anything large is allocated (transformer.checkpoint.load_checkpoint): its
files regular and bounded, config.json's sizes bounded, the tokenizer readable, every tensor the safetensors header
declares named, typed and shaped as config.json implies, and the weights finite. CheckpointError says what is wrong.
"""
from __future__ import annotations

import json
import os
import stat
from collections import Counter
from pathlib import Path
from typing import BinaryIO

import torch

from .attention import fuse_legacy_projections
from .config import TransformerConfig
from .model import Transformer
from .safetensors_reader import read_header, read_tensors
from .tokenization import CharTokenizer, tokenizer_from_dict

FILES = ("config.json", "model.safetensors", "tokenizer.json")

MAX_JSON_BYTES = {"config.json": 2**20, "tokenizer.json": 16 * 2**20}  # GPT-2's tokenizer.json is 1.4 MB
MAX_HEADER_BYTES = 16 * 2**20  # a safetensors header holds ~100 bytes per tensor
MAX_MODEL_NUMBERS = 2_000_000_000  # parameters + buffers (8 GB in float32)
MAX_COMPUTED_NUMBERS = 2**25  # buffers computed at load time, not read from the file (the sinusoidal table)
MAX_SIZES = {"vocab_size": 2**22, "d_model": 2**16, "d_ff": 2**18, "n_heads": 2**12, "n_kv_heads": 2**12,
             "n_encoder_layers": 64, "n_decoder_layers": 64, "max_len": 2**20, "kv_latent_dim": 2**16}


class CheckpointError(Exception):
    """A checkpoint directory is missing, incomplete or inconsistent; the message says what is wrong."""


def check_files(path: Path) -> None:
    """No entry of the directory is a symbolic link (not even to another checkpoint's weights), and the three
    files are regular files."""
    for entry in os.scandir(path):
        if entry.is_symlink():
            raise CheckpointError(f"{path}/{entry.name} is a symbolic link; a checkpoint must hold its own files")
    for name in FILES:
        try:
            mode = os.lstat(path / name).st_mode
        except FileNotFoundError:
            raise CheckpointError(f"{path}: missing {name}") from None
        if not stat.S_ISREG(mode):
            raise CheckpointError(f"{path}/{name} is not a regular file")


def open_regular(file: Path) -> BinaryIO:
    """Open a file for reading without following a symbolic link (even one made after the checks) and without
    blocking on a FIFO; anything but a regular file is refused."""
    try:
        fd = os.open(file, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        raise CheckpointError(f"{file}: cannot be opened ({e.strerror})") from None
    f = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        f.close()
        raise CheckpointError(f"{file} is not a regular file")
    return f


def read_json(file: Path):
    """Parse a JSON file of at most MAX_JSON_BYTES[its name]; too big, too deeply nested or invalid is refused."""
    limit = MAX_JSON_BYTES[file.name]
    with open_regular(file) as f:
        raw = f.read(limit + 1)
    if len(raw) > limit:
        raise CheckpointError(f"{file} is larger than {limit:,} bytes, the limit for a checkpoint's {file.name}")
    try:
        return json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise CheckpointError(f"{file} is nested too deeply to be a checkpoint's {file.name}") from None
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError, an integer of thousands of digits
        raise CheckpointError(f"{file} is not valid JSON: {e}") from None


def model_config(path: Path, info: dict) -> TransformerConfig:
    """config.json's model config, valid (TransformerConfig's checks) and within MAX_SIZES."""
    try:
        config = TransformerConfig.from_dict(info["model"])
    except (KeyError, TypeError, ValueError) as e:
        raise CheckpointError(f"{path}/config.json: bad model config: {e}") from None
    for name, limit in MAX_SIZES.items():
        if (getattr(config, name) or 0) > limit:  # kv_latent_dim is None without MLA
            raise CheckpointError(f"{path}/config.json: {name}={getattr(config, name)} is larger than a checkpoint "
                                  f"may declare ({limit:,})")
    return config


def read_tokenizer(path: Path, config: TransformerConfig):
    """tokenizer.json, rebuilt, with as many tokens as config.json's vocab_size."""
    data = read_json(path / "tokenizer.json")
    if isinstance(data, dict) and data.get("kind") == "char" and isinstance(data.get("vocab"), list):
        check_char_vocab(path, data["vocab"])
    try:
        tokenizer = tokenizer_from_dict(data)
    except Exception as e:  # json, tokenizers and our own errors: all mean the file is bad
        raise CheckpointError(f"{path}/tokenizer.json: {e}") from None
    if tokenizer.vocab_size != config.vocab_size:
        raise CheckpointError(f"{path}: tokenizer has {tokenizer.vocab_size} tokens, config says vocab_size="
                              f"{config.vocab_size}")
    return tokenizer


def check_char_vocab(path: Path, vocab: list) -> None:
    """A char vocabulary is distinct single characters in the order CharTokenizer keeps them (sorted), so that
    every id means what it meant in training."""
    for entry in vocab:
        if not isinstance(entry, str) or len(entry) != 1:
            raise CheckpointError(f"{path}/tokenizer.json: vocab entry {entry!r:.40} is not a single character")
    twice = sorted(c for c, n in Counter(vocab).items() if n > 1)
    if twice:
        raise CheckpointError(f"{path}/tokenizer.json: vocab entries {twice[:20]} appear more than once")
    if CharTokenizer(vocab).to_dict()["vocab"] != vocab:
        raise CheckpointError(f"{path}/tokenizer.json: vocab is not in the order the char tokenizer keeps "
                              f"(sorted), so its ids would not be the ones the model was trained with")


def read_weights(path: Path, config: TransformerConfig) -> dict[str, torch.Tensor]:
    """model.safetensors as tensors, read only after its header has been checked against the file's size
    (safetensors_reader) and against config.json."""
    file = path / "model.safetensors"
    with open_regular(file) as f:
        size = os.fstat(f.fileno()).st_size
        try:
            header, start = read_header(f, size, MAX_HEADER_BYTES)
        except ValueError as e:
            raise CheckpointError(f"{file} is not a valid safetensors file: {e}") from None
        match_config(file, fuse_legacy_projections(header, fused_entry), *expected_tensors(path, config))
        try:
            return read_tensors(f, size, header, start)
        except ValueError as e:
            raise CheckpointError(f"{file}: {e}") from None


def fused_entry(entries: list[dict]) -> dict:
    """The header entry one in_proj tensor would have: an old file's q_proj, k_proj, v_proj entries stacked."""
    shapes = [e.get("shape") if isinstance(e, dict) else None for e in entries]
    if not all(isinstance(s, list) and s for s in shapes) or len({tuple(s[1:]) for s in shapes}) != 1:
        return {"shape": ["q_proj, k_proj, v_proj of different shapes: " + repr(shapes)[:80]]}
    return {"shape": [sum(s[0] for s in shapes), *shapes[0][1:]]}


def expected_tensors(path: Path, config: TransformerConfig) -> tuple[dict[str, tuple[int, ...]], list[set[str]]]:
    """The state dict config.json implies (name -> shape) and the groups of names sharing one tensor (tied
    embeddings), read off the model built on the `meta` device: shapes without memory. A model of more than
    MAX_MODEL_NUMBERS parameters and buffers is refused, and so is one whose buffers computed at load time (not
    stored, so not bounded by the file's size) exceed MAX_COMPUTED_NUMBERS."""
    with torch.device("meta"):
        model = Transformer(config)
    numbers = sum(p.numel() for p in model.parameters()) + sum(b.numel() for b in model.buffers())
    if numbers > MAX_MODEL_NUMBERS:
        raise CheckpointError(f"{path}/config.json describes a model of {numbers:,} parameters and buffers, more "
                              f"than a checkpoint may hold ({MAX_MODEL_NUMBERS:,})")
    state = model.state_dict(keep_vars=True)
    shapes = {name: tuple(t.shape) for name, t in state.items()}
    computed = sum(b.numel() for name, b in model.named_buffers() if name not in shapes)
    if computed > MAX_COMPUTED_NUMBERS:
        raise CheckpointError(f"{path}/config.json implies {computed:,} numbers computed at load time (such as the "
                              f"positional table), more than a checkpoint may ask for ({MAX_COMPUTED_NUMBERS:,})")
    groups: dict[int, set[str]] = {}
    for name, tensor in state.items():
        groups.setdefault(id(tensor), set()).add(name)
    return shapes, list(groups.values())


def match_config(file: Path, header: dict, shapes: dict[str, tuple[int, ...]], groups: list[set[str]]) -> None:
    """Every tensor of the file is one config.json implies, with its shape; every tensor (or a tied copy) is there."""
    unexpected = sorted(set(header) - set(shapes))
    missing = sorted(name for group in groups if not group & set(header) for name in group)
    if missing or unexpected:
        raise CheckpointError(f"{file} does not match config.json: missing {missing[:8]}, unexpected "
                              f"{[name[:80] for name in unexpected[:8]]}")
    for name, shape in shapes.items():
        if name in header and tuple(header[name]["shape"]) != shape:
            raise CheckpointError(f"{file} does not match config.json: size mismatch for {name}: the file has "
                                  f"{header[name]['shape']}, config.json implies {list(shape)}")


def check_finite(path: Path, model: Transformer) -> None:
    """Every weight is a finite number (after conversion to the model's dtype, where a float64 1e300 overflows)."""
    for name, tensor in model.state_dict().items():
        if tensor.is_floating_point() and not torch.isfinite(tensor).all():
            raise CheckpointError(f"{path}/model.safetensors: {name} holds NaN or infinite values")
