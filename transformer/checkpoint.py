"""Checkpoint directories: config.json + model.safetensors + tokenizer.json + README.md (the model card).

Weights are stored with safetensors, which holds tensors only: loading a checkpoint never runs code from it.
A checkpoint is data that may come from anyone, so `load_checkpoint` checks it before allocating anything large:
no symbolic links, bounded file sizes and nesting, every tensor the safetensors header declares has the name,
floating dtype and shape that config.json implies, the model stays under MAX_MODEL_NUMBERS, and the weights are
finite (the checks: transformer.checkpoint_checks). These limits bound checkpoints only; `Transformer(config)`
builds a model of any size on purpose.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

import torch
from safetensors.torch import save_model

from .checkpoint_checks import (FILES, MAX_COMPUTED_NUMBERS, MAX_HEADER_BYTES, MAX_JSON_BYTES,  # noqa: F401
                                MAX_MODEL_NUMBERS, MAX_SIZES, CheckpointError, check_files, check_finite,
                                expected_tensors, model_config, read_json, read_tokenizer, read_weights)
from .model import Transformer

FORMAT_VERSION = 1
def resolve_device(device: str | torch.device = "auto") -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def model_card(name: str, info: dict) -> str:
    """A plain model card from config.json's contents; training CLIs pass a richer one."""
    lines = [f"# {name}", "", f"Architecture: `{json.dumps(info['model'])}`", ""]
    for key in ("task", "training", "metrics"):
        if info.get(key):
            lines += [f"## {key.capitalize()}", "", "```json", json.dumps(info[key], indent=2), "```", ""]
    return "\n".join(lines)


# --- saving ---------------------------------------------------------------------------------------------------


def _old_copy(path: Path) -> Path:
    return path.with_name(f".{path.name}.old")


def _temp_prefix(path: Path) -> str:
    return f".{path.name}.tmp-"


def save_checkpoint(path: str | Path, model: Transformer, tokenizer, *, task=None, training: dict | None = None,
                    metrics: dict | None = None, card: str | None = None,
                    extra: Callable[[Path], None] | None = None) -> Path:
    """Write a checkpoint directory so that a crash at any moment leaves a complete checkpoint to load.

    The new checkpoint is written (and synced) into a temporary sibling `.<name>.tmp-*`; then `<name>` is renamed
    to `.<name>.old`, the temporary directory renamed to `<name>`, and `.<name>.old` deleted. A rename is atomic,
    and `.<name>.old` is only deleted while `<name>` exists, so at every moment either `<name>` is a complete
    checkpoint, or `<name>` is absent and `.<name>.old` is the complete previous one. `load_checkpoint` reads
    `.<name>.old` in that case; the next save or resume (`recover_checkpoint`) renames it back and deletes the
    leftovers of killed saves. One process writes a given path at a time.

    `extra(tmp_dir)` may add files (a Trainer adds its optimiser state) before the rename.
    """
    path = Path(path)
    if tokenizer.vocab_size != model.config.vocab_size:
        raise ValueError(f"tokenizer has {tokenizer.vocab_size} tokens but the model's vocab_size is "
                         f"{model.config.vocab_size}")
    info = {"format_version": FORMAT_VERSION, "model": model.config.to_dict(), "tokenizer": {"kind": tokenizer.kind},
            "task": task, "training": training or {}, "metrics": metrics or {}}
    path.parent.mkdir(parents=True, exist_ok=True)
    recover_checkpoint(path)
    tmp = Path(tempfile.mkdtemp(prefix=_temp_prefix(path), dir=path.parent))
    tmp.chmod(0o755)  # mkdtemp makes it private; a checkpoint is meant to be shared
    try:
        (tmp / "config.json").write_text(json.dumps(info, indent=2) + "\n")
        save_model(model, str(tmp / "model.safetensors"))
        tokenizer.save(tmp / "tokenizer.json")
        (tmp / "README.md").write_text(card if card is not None else model_card(path.name, info))
        if extra is not None:
            extra(tmp)
        _sync_directory(tmp)
        if path.exists():
            os.rename(path, _old_copy(path))
        os.rename(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        recover_checkpoint(path)
        raise
    _sync_directory(path.parent, files=False)
    shutil.rmtree(_old_copy(path), ignore_errors=True)
    return path


def _sync_directory(directory: Path, files: bool = True) -> None:
    """fsync the files of `directory` and the directory itself, so a rename never publishes unwritten data."""
    names = sorted(os.listdir(directory)) if files else []
    for name in names:
        fd = os.open(directory / name, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def recover_checkpoint(path: str | Path) -> None:
    """Finish what a killed save left behind: put `.<name>.old` back when `<name>` is missing, then delete the
    temporary directories of unfinished saves and a `.<name>.old` whose `<name>` exists (see save_checkpoint)."""
    path = Path(path)
    old = _old_copy(path)
    if not os.path.lexists(path) and old.is_dir() and not old.is_symlink():
        os.rename(old, path)
    if not path.parent.is_dir():
        return
    for name in os.listdir(path.parent):
        if name.startswith(_temp_prefix(path)):
            shutil.rmtree(path.parent / name, ignore_errors=True)
    if os.path.lexists(path) and os.path.lexists(old):
        shutil.rmtree(old, ignore_errors=True)


# --- loading --------------------------------------------------------------------------------------------------


def load_checkpoint(path: str | Path, device: str | torch.device = "auto"):
    """Load (model in eval mode, tokenizer, info) from a checkpoint directory; raises CheckpointError.

    Every check that can refuse the checkpoint runs before the model and its weights are allocated.
    """
    path = _checkpoint_dir(Path(path))
    info = read_info(path)
    config = model_config(path, info)
    tokenizer = read_tokenizer(path, config)
    weights = read_weights(path, config)
    model = Transformer(config)
    model.load_state_dict(weights, strict=False)  # read_weights checked the names: only tied copies are absent
    check_finite(path, model)
    return model.to(resolve_device(device)).eval(), tokenizer, info


def read_info(path: str | Path) -> dict:
    """Parse and check config.json (after the directory checks); raises CheckpointError."""
    path = _checkpoint_dir(Path(path))
    check_files(path)
    info = read_json(path / "config.json")
    if not isinstance(info, dict) or info.get("format_version") != FORMAT_VERSION:
        version = info.get("format_version") if isinstance(info, dict) else None
        raise CheckpointError(f"{path}/config.json: unknown format_version {version!r} (this code reads "
                              f"{FORMAT_VERSION})")
    return info


def _checkpoint_dir(path: Path) -> Path:
    """The directory to read: `path`, or the complete previous checkpoint `.<name>.old` when a save was killed
    between its two renames. A symbolic link is refused: a checkpoint must not point at files elsewhere."""
    if not os.path.lexists(path) and os.path.lexists(_old_copy(path)):
        path = _old_copy(path)
    if path.is_symlink():
        raise CheckpointError(f"{path} is a symbolic link; a checkpoint directory must be a real directory")
    if not path.is_dir():
        raise CheckpointError(f"{path}: not a checkpoint directory")
    return path
