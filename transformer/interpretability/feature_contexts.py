"""Every feature's top held-out contexts, computed once beside its SAE: a click in the app never pays for them.

A feature's top contexts (feature_page.top_contexts) need the layer's activations on the held-out batches, one pass
of the model over them (2.7-19 s on 2 cores, bench/RESULTS.md): no request may pay that. `python -m
transformer.interpretability.features <ckpt> --train` (and `--contexts`, for SAEs already shipped) computes them for
every feature of every SAE and writes them beside it as `sae-<kind>-<layer>.contexts.json`:

    {"format": 1, "sae_sha256": the SAE file's sha256, "n_features": F, "vocab_size": V,
     "measured_on": the held-out data in words, "positions": N,
     "frequency": [F shares of the held-out positions where each fires],
     "contexts": [F lists of [activation, at, row, position, [token ids]], largest first]}

`--check` computes them again and counts the features whose stored contexts differ. A stored file is data: it is
read only through `load_contexts`, which checks its size, its format, that it belongs to the SAE file beside it
(the hash), and every number's type and range against the SAE and the model's vocabulary; anything else is refused
with a CheckpointError saying what is wrong.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

import torch

from ..checkpoint_checks import CheckpointError, open_regular
from .feature_page import Context, top_contexts
from .features import Activations, AttentionLayer
from .sae import SparseAutoencoder
from .sae_files import sae_file_name

FORMAT = 1
N_CONTEXTS = 5  # contexts stored per feature
BEFORE, AFTER = 10, 2  # tokens kept before and after each context's position
MAX_CONTEXTS_BYTES = 4 * 2**20  # 512 features x 5 contexts is ~0.3 MB
DIGITS = 4  # an activation's decimals in the file
ACTIVATION_TOLERANCE = 2e-3  # --check: a recomputed activation may differ by float noise across machines, no more


@dataclass(frozen=True)
class StoredContexts:
    """What a contexts file holds, checked: per feature its `frequency` and its `contexts` (largest first)."""

    frequency: list[float]
    contexts: list[list[Context]]
    measured_on: str
    positions: int


def contexts_file_name(layer: AttentionLayer) -> str:
    """sae-<kind>-<layer>.contexts.json, beside the SAE's own file."""
    return sae_file_name(layer).removesuffix(".safetensors") + ".contexts.json"


def file_sha256(path: Path) -> str:
    with open_regular(path) as f:
        return hashlib.sha256(f.read()).hexdigest()


@torch.no_grad()
def all_contexts(sae: SparseAutoencoder, held_out: Activations, pad_id: int, measured_on: str = ""
                 ) -> StoredContexts:
    """Every feature's frequency and top N_CONTEXTS contexts on `held_out` (the layer's activations on the SAE's
    held-out batches, described in words by `measured_on`), the held-out positions encoded once."""
    f_all = sae.encode(held_out.x)  # (N, F)
    frequency = (f_all > 0).float().mean(0).tolist()  # (F,)
    contexts = [[Context(c.tokens, c.at, round(c.activation, DIGITS), c.row, c.position)
                 for c in top_contexts(f_all[:, j], held_out, N_CONTEXTS, BEFORE, AFTER, pad_id)]
                for j in range(f_all.size(1))]
    return StoredContexts(frequency, contexts, measured_on, held_out.x.size(0))


def save_contexts(directory: str | Path, layer: AttentionLayer, stored: StoredContexts, vocab_size: int) -> Path:
    """Write `stored` beside `layer`'s SAE file (which must be saved first: the file names its hash)."""
    directory = Path(directory)
    data = {"format": FORMAT, "sae_sha256": file_sha256(directory / sae_file_name(layer)),
            "n_features": len(stored.frequency), "vocab_size": vocab_size, "measured_on": stored.measured_on,
            "positions": stored.positions, "frequency": [round(v, 6) for v in stored.frequency],
            "contexts": [[[c.activation, c.at, c.row, c.position, c.tokens] for c in cs] for cs in stored.contexts]}
    path = directory / contexts_file_name(layer)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    path.chmod(0o644)
    return path


def load_contexts(directory: str | Path, layer: AttentionLayer, n_features: int, vocab_size: int
                  ) -> StoredContexts:
    """The contexts stored beside `layer`'s SAE in `directory`, checked (the module's docstring); CheckpointError."""
    directory = Path(directory)
    name = contexts_file_name(layer)
    try:
        with open_regular(directory / name) as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_CONTEXTS_BYTES:
                raise CheckpointError(f"{name} is {size:,} bytes, over the {MAX_CONTEXTS_BYTES:,} it may have")
            data = json.loads(f.read().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise CheckpointError(f"{name} is not valid JSON") from None
    try:
        return _checked(data, n_features, vocab_size, file_sha256(directory / sae_file_name(layer)))
    except (ValueError, TypeError, KeyError, IndexError) as e:
        raise CheckpointError(f"{name} is not a valid contexts file: {e}") from None


def _checked(data, n_features: int, vocab_size: int, sha: str) -> StoredContexts:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"its format must be {FORMAT}")
    if data["sae_sha256"] != sha:
        raise ValueError("it was computed for another SAE file than the one beside it (compute it again with "
                         "--contexts)")
    if data["n_features"] != n_features or data["vocab_size"] != vocab_size:
        raise ValueError(f"it is for {data['n_features']} features and {data['vocab_size']} tokens; the SAE has "
                         f"{n_features} and the model {vocab_size}")
    frequency, contexts, positions = data["frequency"], data["contexts"], data["positions"]
    if not (isinstance(frequency, list) and isinstance(contexts, list) and len(frequency) == len(contexts)
            == n_features and _is_int(positions) and positions > 0):
        raise ValueError("it must hold a frequency and a list of contexts for each feature")
    if not all(_is_number(v) and 0 <= v <= 1 for v in frequency):
        raise ValueError("a frequency is not a number in [0, 1]")
    return StoredContexts([float(v) for v in frequency], [_contexts(cs, vocab_size) for cs in contexts],
                          str(data["measured_on"])[:300], positions)


def _contexts(items, vocab_size: int) -> list[Context]:
    if not isinstance(items, list) or len(items) > N_CONTEXTS:
        raise ValueError(f"a feature has at most {N_CONTEXTS} contexts")
    out = []
    for item in items:
        activation, at, row, position, tokens = item
        if not (_is_number(activation) and activation > 0 and isinstance(tokens, list)
                and len(tokens) <= BEFORE + AFTER + 1 and all(_is_int(t) and 0 <= t < vocab_size for t in tokens)
                and _is_int(at) and 0 <= at < len(tokens) and _is_int(row) and _is_int(position)
                and row >= 0 and position >= 0):
            raise ValueError("a context must be [activation > 0, at, row, position, token ids of the vocabulary]")
        out.append(Context(list(tokens), at, float(activation), row, position))
    if any(a.activation < b.activation for a, b in zip(out, out[1:])):
        raise ValueError("a feature's contexts must come largest first")
    return out


def _is_int(v) -> bool:
    return type(v) is int


def _is_number(v) -> bool:
    return type(v) in (int, float) and math.isfinite(v)


def differing_features(stored: StoredContexts, fresh: StoredContexts) -> int:
    """How many features' stored contexts differ from a fresh computation: other tokens or places, or an activation
    off by more than ACTIVATION_TOLERANCE (what --check reports)."""
    def same(a: Context, b: Context) -> bool:
        return ((a.tokens, a.at, a.row, a.position) == (b.tokens, b.at, b.row, b.position)
                and abs(a.activation - b.activation) <= ACTIVATION_TOLERANCE)

    return sum(len(s) != len(f) or not all(same(a, b) for a, b in zip(s, f))
               for s, f in zip(stored.contexts, fresh.contexts)) + abs(len(stored.contexts) - len(fresh.contexts))
