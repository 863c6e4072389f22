"""Hostile checkpoints (issue 7, item 3): each one is refused with a CheckpointError that names the problem, quickly,
before any large allocation, and without running code from the files.

Every case is loaded in one subprocess whose address space is capped (load_corpus.py), so a case that allocated
what its config.json declares would fail with an allocation error instead of a CheckpointError.
"""
from __future__ import annotations

import json
import os
import pickle
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from transformer.checkpoint import save_checkpoint
from transformer.config import TransformerConfig
from transformer.model import Transformer
from transformer.tokenization import CharTokenizer

ROOT = Path(__file__).resolve().parents[2]
MEMORY_CAP = 3 * 2**30  # measured: importing torch and loading a small checkpoint peaks at ~0.7 GB of address space
MAX_SECONDS = 5.0  # per load; measured 0.1-25 ms each once the control load has paid torch's one-time imports
# (~1.5 s for the first model built on the meta device); the limit is generous for a shared CI machine


class Payload:
    """Unpickling this creates `marker`: proof that code from a file ran."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return open, (self.marker, "w")


def edit_json(name, edit):
    def build(path):
        data = json.loads((path / name).read_text())
        edit(data)
        (path / name).write_text(json.dumps(data))
    return build


def model_field(**values):
    return edit_json("config.json", lambda info: info["model"].update(values))


def write(name, content: bytes | str):
    def build(path):
        (path / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    return build


def weights(edit):
    """Rewrite model.safetensors with edit(tensors) applied."""
    def build(path):
        tensors = load_file(str(path / "model.safetensors"))
        edit(tensors)
        save_file(tensors, str(path / "model.safetensors"))
    return build


def raw_weights(transform):
    """Rewrite model.safetensors' bytes: transform(header dict, data bytes) -> (header bytes, data bytes)."""
    def build(path):
        raw = (path / "model.safetensors").read_bytes()
        (n,) = struct.unpack("<Q", raw[:8])
        header, data = transform(json.loads(raw[8: 8 + n]), raw[8 + n:])
        (path / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + data)
    return build


def symlink(name, target):
    def build(path):
        (path / name).unlink(missing_ok=True)
        os.symlink(target(path) if callable(target) else target, path / name)
    return build


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def set_entry(name, **fields):
    def transform(header, data):
        header[name].update(fields)
        return json.dumps(header).encode(), data
    return transform


def char_vocab(vocab):
    return edit_json("tokenizer.json", lambda data: data.update(vocab=vocab))


def replace_dir_with_symlink(path):
    shutil.rmtree(path)
    os.symlink(path.parent / "base", path)


def fifo(name):
    def build(path):
        (path / name).unlink()
        os.mkfifo(path / name)
    return build


def directory(name):
    def build(path):
        (path / name).unlink()
        (path / name).mkdir()
    return build


LETTERS = list("abcdefghijklm")
CASES = {  # name: (how to spoil a copy of a valid checkpoint, what the message must say)
    "d_model 10**9": (model_field(d_model=10**9), "d_model=1000000000 is larger than a checkpoint may declare"),
    "d_ff 10**9": (model_field(d_ff=10**9), "d_ff=1000000000 is larger"),
    "max_len 10**9": (model_field(max_len=10**9), "max_len=1000000000 is larger"),
    "vocab_size 10**9": (model_field(vocab_size=10**9), "vocab_size=1000000000 is larger"),
    "n_heads 8192": (model_field(d_model=8192, n_heads=8192), "n_heads=8192 is larger"),
    "n_decoder_layers 10**9": (model_field(n_decoder_layers=10**9), "n_decoder_layers=1000000000 is larger"),
    "n_encoder_layers 10**9": (model_field(n_encoder_layers=10**9), "n_encoder_layers=1000000000 is larger"),
    "47 billion numbers": (model_field(d_model=2**15, d_ff=2**18), "more than a checkpoint may hold"),
    "4 billion in the sinusoidal table": (model_field(d_model=2**12, max_len=2**20), "more than a checkpoint may hold"),
    "a 1-billion sinusoidal table beside small weights": (model_field(d_model=2**10, max_len=2**20),
                                                          "1,073,741,824 numbers computed at load time"),
    "config nested 200,000 deep": (write("config.json", nested(200_000)), "config.json is nested too deeply"),
    "config of 2 MB": (edit_json("config.json", lambda info: info.update(metrics={"x": "y" * 2**21})),
                       "config.json is larger than 1,048,576 bytes"),
    "a 5,000-digit integer": (write("config.json", '{"format_version": ' + "9" * 5000 + "}"),
                              "config.json is not valid JSON"),
    "a __reduce__ key": (model_field(__reduce__=["os.system", "touch marker"]), "unknown config keys: __reduce__"),
    "int64 weights": (weights(lambda t: t.update({"embed.weight": t["embed.weight"].long()})),
                      "'embed.weight' has dtype 'I64'; weights must be floating point"),
    "int32 weights": (weights(lambda t: t.update({"embed.weight": t["embed.weight"].int()})), "dtype 'I32'"),
    "bool weights": (weights(lambda t: t.update({"embed.weight": t["embed.weight"] > 0})), "dtype 'BOOL'"),
    "NaN weight": (weights(lambda t: t["embed.weight"].view(-1).__setitem__(5, float("nan"))),
                   "embed.weight holds NaN or infinite values"),
    "inf weight": (weights(lambda t: t[sorted(t)[0]].view(-1).__setitem__(0, float("-inf"))),
                   "holds NaN or infinite values"),
    "float64 1e300": (weights(lambda t: t.update({"embed.weight": t["embed.weight"].double().fill_(1e300)})),
                      "embed.weight holds NaN or infinite values"),
    "a missing tensor": (weights(lambda t: t.pop(sorted(t)[-1])), "does not match config.json: missing"),
    "an extra tensor": (weights(lambda t: t.update({"backdoor": torch.zeros(3)})), "unexpected ['backdoor']"),
    "a shape that differs from the config": (
        raw_weights(lambda h, d: (json.dumps({**h, "embed.weight": {**h["embed.weight"], "shape": [32, 17]}}).encode(),
                                  d)), "size mismatch for embed.weight"),
    "header length 2**62": (write("model.safetensors", struct.pack("<Q", 2**62) + b"{}"), "its header would be"),
    "header nested 200,000 deep": (raw_weights(lambda h, d: (nested(200_000).encode(), d)),
                                   "header is nested too deeply"),
    "a shape of 10**12 rows": (raw_weights(set_entry("embed.weight", shape=[10**12, 32])), "do not fit its shape"),
    "truncated weights": (lambda path: (path / "model.safetensors").write_bytes(
        (path / "model.safetensors").read_bytes()[:-1000]), "but the file holds"),
    "bytes after the data": (lambda path: (path / "model.safetensors").write_bytes(
        (path / "model.safetensors").read_bytes() + b"\0" * 64), "but the file holds"),
    "a pickle named model.safetensors": (None, "model.safetensors is not a valid safetensors file"),
    "a torch.save zip named model.safetensors": (None, "model.safetensors is not a valid safetensors file"),
    "a multi-character vocab entry": (char_vocab(["ab"] + LETTERS[1:]), "vocab entry 'ab' is not a single character"),
    "a duplicate vocab entry": (char_vocab(LETTERS[:-1] + ["a"]), "vocab entries ['a'] appear more than once"),
    "a vocab out of order": (char_vocab(LETTERS[::-1]), "vocab is not in the order"),
    "a non-string vocab entry": (char_vocab([7] + LETTERS[1:]), "vocab entry 7 is not a single character"),
    "tokenizer nested 200,000 deep": (write("tokenizer.json", nested(200_000)), "tokenizer.json is nested too deeply"),
    "tokenizer of 17 MB": (write("tokenizer.json", " " * (17 * 2**20) + "{}"), "tokenizer.json is larger than"),
    "the directory is a symlink": (replace_dir_with_symlink, "is a symbolic link"),
    "weights symlinked to another checkpoint's": (symlink("model.safetensors",
                                                          lambda p: p.parent / "other" / "model.safetensors"),
                                                  "model.safetensors is a symbolic link"),
    "config.json symlinked": (symlink("config.json", lambda p: p.parent / "other" / "config.json"),
                              "config.json is a symbolic link"),
    "tokenizer.json symlinked": (symlink("tokenizer.json", lambda p: p.parent / "other" / "tokenizer.json"),
                                 "tokenizer.json is a symbolic link"),
    "weights symlinked to /dev/zero": (symlink("model.safetensors", "/dev/zero"), "is a symbolic link"),
    "README.md symlinked to /etc/passwd": (symlink("README.md", "/etc/passwd"), "README.md is a symbolic link"),
    "config.json is a FIFO": (fifo("config.json"), "config.json is not a regular file"),
    "model.safetensors is a directory": (directory("model.safetensors"), "model.safetensors is not a regular file"),
}


def valid_checkpoint(path: Path, seed: int) -> Path:
    """A tiny encoder-decoder (tied embeddings) with a 17-token char tokenizer."""
    torch.manual_seed(seed)
    cfg = TransformerConfig(vocab_size=17, d_model=32, n_heads=4, n_encoder_layers=1, n_decoder_layers=1, d_ff=64,
                            max_len=24)
    return save_checkpoint(path, Transformer(cfg), CharTokenizer("".join(LETTERS)))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Build every case from a copy of a valid checkpoint, load them all in one memory-capped subprocess, and
    return (results by case name, the marker a payload would create, the cap check line)."""
    root = tmp_path_factory.mktemp("hostile")
    base, other = valid_checkpoint(root / "base", 0), valid_checkpoint(root / "other", 1)
    marker = root / "marker"
    paths = {}
    for i, (name, (build, _)) in enumerate(CASES.items()):
        path = shutil.copytree(base, root / f"case-{i}")
        if name == "a pickle named model.safetensors":
            (path / "model.safetensors").write_bytes(pickle.dumps({"embed.weight": Payload(marker)}))
        elif name == "a torch.save zip named model.safetensors":
            torch.save({"embed.weight": Payload(marker)}, path / "model.safetensors")
        else:
            build(path)
        paths[name] = str(path)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("load_corpus.py")), str(MEMORY_CAP),
                           str(other), *paths.values()], capture_output=True, text=True, timeout=300, env=env,
                          cwd=root)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    by_path = {line["path"]: line for line in lines}
    control, cap = lines[0], lines[-1]
    return {name: by_path[p] for name, p in paths.items()}, control, cap, marker


def test_the_memory_cap_bites_and_leaves_room_for_a_real_load(corpus):
    """Precondition of the corpus test: under the cap a valid checkpoint loads, and a 4 GB allocation fails (so a
    case that allocated its declared size would fail with an allocation error, not pass)."""
    _, control, cap, _ = corpus
    assert control["outcome"] == "loaded", control
    assert cap["capped"], "the address-space cap did not stop a 4 GB allocation"


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_checkpoint_is_refused_quickly_with_a_clear_message(corpus, name):
    """Invariant: each hostile checkpoint raises CheckpointError whose message names the problem, in under
    MAX_SECONDS (measured inside the capped subprocess: no large allocation happened), and nothing from the files
    ran (a pickle payload would have created the marker file)."""
    results, _, _, marker = corpus
    result = results[name]
    print(f"{name}: {result['seconds'] * 1000:.1f} ms: {result['message']}")
    assert result["outcome"] == "CheckpointError", result
    assert CASES[name][1] in result["message"], result["message"]
    assert result["seconds"] < MAX_SECONDS
    assert not marker.exists()
