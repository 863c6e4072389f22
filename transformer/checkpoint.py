"""Checkpoint directories: config.json + model.safetensors + tokenizer.json + README.md (the model card).

Weights are stored with safetensors, which holds tensors only: loading a checkpoint never runs code from it.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

import torch
from safetensors import SafetensorError
from safetensors.torch import load_model, save_model

from .config import TransformerConfig
from .model import Transformer
from .tokenization import tokenizer_from_dict

FORMAT_VERSION = 1
FILES = ("config.json", "model.safetensors", "tokenizer.json")


class CheckpointError(Exception):
    """A checkpoint directory is missing, incomplete or inconsistent; the message says what is wrong."""


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


def save_checkpoint(path: str | Path, model: Transformer, tokenizer, *, task=None, training: dict | None = None,
                    metrics: dict | None = None, card: str | None = None,
                    extra: Callable[[Path], None] | None = None) -> Path:
    """Write a checkpoint directory atomically: into a temporary sibling, then renamed over `path`.

    `extra(tmp_dir)` may add files (a Trainer adds its optimiser state) before the rename.
    """
    path = Path(path)
    if tokenizer.vocab_size != model.config.vocab_size:
        raise ValueError(f"tokenizer has {tokenizer.vocab_size} tokens but the model's vocab_size is "
                         f"{model.config.vocab_size}")
    info = {"format_version": FORMAT_VERSION, "model": model.config.to_dict(), "tokenizer": {"kind": tokenizer.kind},
            "task": task, "training": training or {}, "metrics": metrics or {}}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    tmp.chmod(0o755)  # mkdtemp makes it private; a checkpoint is meant to be shared
    try:
        (tmp / "config.json").write_text(json.dumps(info, indent=2) + "\n")
        save_model(model, str(tmp / "model.safetensors"))
        tokenizer.save(tmp / "tokenizer.json")
        (tmp / "README.md").write_text(card if card is not None else model_card(path.name, info))
        if extra is not None:
            extra(tmp)
        old = None
        if path.exists():
            old = path.with_name(f".{path.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            os.rename(path, old)
        os.rename(tmp, path)
        if old is not None:
            shutil.rmtree(old)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path


def read_info(path: str | Path) -> dict:
    """Parse and check config.json; raises CheckpointError."""
    path = Path(path)
    if not path.is_dir():
        raise CheckpointError(f"{path}: not a checkpoint directory")
    for name in FILES:
        if not (path / name).is_file():
            raise CheckpointError(f"{path}: missing {name}")
    try:
        info = json.loads((path / "config.json").read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CheckpointError(f"{path}/config.json is not valid JSON: {e}") from None
    if not isinstance(info, dict) or info.get("format_version") != FORMAT_VERSION:
        version = info.get("format_version") if isinstance(info, dict) else None
        raise CheckpointError(f"{path}/config.json: unknown format_version {version!r} (this code reads "
                              f"{FORMAT_VERSION})")
    return info


def load_checkpoint(path: str | Path, device: str | torch.device = "auto"):
    """Load (model in eval mode, tokenizer, info) from a checkpoint directory; raises CheckpointError."""
    path = Path(path)
    info = read_info(path)
    try:
        config = TransformerConfig.from_dict(info["model"])
    except (KeyError, TypeError, ValueError) as e:
        raise CheckpointError(f"{path}/config.json: bad model config: {e}") from None
    try:
        tokenizer = tokenizer_from_dict(json.loads((path / "tokenizer.json").read_text(encoding="utf-8")))
    except Exception as e:  # json, tokenizers and our own errors: all mean the file is bad
        raise CheckpointError(f"{path}/tokenizer.json: {e}") from None
    if tokenizer.vocab_size != config.vocab_size:
        raise CheckpointError(f"{path}: tokenizer has {tokenizer.vocab_size} tokens, config says vocab_size="
                              f"{config.vocab_size}")
    model = Transformer(config)
    try:
        missing, unexpected = load_model(model, str(path / "model.safetensors"), strict=False)
    except (SafetensorError, RuntimeError, OSError, ValueError) as e:
        lines = [line.strip() for line in str(e).splitlines() if line.strip()] or [type(e).__name__]
        if lines[0].startswith("Error(s) in loading state_dict") and len(lines) > 1:  # torch's header line
            raise CheckpointError(f"{path}/model.safetensors does not match config.json: {lines[1]}") from None
        raise CheckpointError(f"{path}/model.safetensors is not a valid safetensors file for this config: "
                              f"{lines[0]}") from None
    if missing or unexpected:
        raise CheckpointError(f"{path}/model.safetensors does not match config.json: missing {sorted(missing)}, "
                              f"unexpected {sorted(unexpected)}")
    return model.to(resolve_device(device)).eval(), tokenizer, info
