"""Shipped SAEs: saved beside their checkpoint, listed in its config.json, checked before use.

A checkpoint directory may hold `sae-<kind>-<layer>.safetensors` files (`sae-decoder-self-1.safetensors`), one per
attention layer, each listed in config.json's "features" as an entry:

    {"file": ..., "kind": "decoder self", "layer": 1, "sae": SAEConfig.to_dict(), "training": {...},
     "metrics": FeatureMetrics.to_dict(), "measured_on": "...", "wall_time_s": ...}

A saved SAE is data that may come from anyone: `load_sae` reads it only through the entry (its file name is the one
the kind and layer give, never a path), checks the safetensors header before reading a tensor
(safetensors_reader), then every tensor's name, dtype (float32) and shape against the entry's config, that all
are finite, `scale` positive and the decoder's rows of unit norm; anything else is refused with a CheckpointError
saying what is wrong.
"""
from __future__ import annotations

import os
from pathlib import Path

import torch
from safetensors.torch import save_file

from ..checkpoint_checks import CheckpointError, open_regular
from ..safetensors_reader import read_header, read_tensors
from .features import AttentionLayer
from .sae import SAEConfig, SparseAutoencoder

MAX_SAE_BYTES = 64 * 2**20  # a shipped SAE is KBs to a few MB
MAX_SAE_HEADER_BYTES = 2**16
UNIT_NORM_TOLERANCE = 1e-3


def sae_file_name(layer: AttentionLayer) -> str:
    """The file of `layer`'s SAE in a checkpoint directory: sae-<kind with dashes>-<layer>.safetensors."""
    return f"sae-{str(layer.kind).replace(' ', '-')}-{layer.layer}.safetensors"


def shapes(config: SAEConfig) -> dict[str, tuple[int, ...]]:
    """Every tensor a saved SAE of `config` holds, with its shape."""
    return {"W_enc": (config.d_in, config.n_features), "b_enc": (config.n_features,),
            "W_dec": (config.n_features, config.d_in), "b_dec": (config.d_in,), "scale": ()}


def save_sae(directory: str | Path, layer: AttentionLayer, sae: SparseAutoencoder) -> Path:
    """Write `sae` as `directory`/sae_file_name(layer) (float32, contiguous); returns the file's path."""
    path = Path(directory) / sae_file_name(layer)
    state = {name: t.detach().float().contiguous().cpu() for name, t in sae.state_dict().items()}
    save_file(state, str(path))
    path.chmod(0o644)  # readable like the checkpoint's other files
    return path


def entry_of(info: dict, layer: AttentionLayer) -> dict:
    """config.json's "features" entry of `layer`; CheckpointError if the checkpoint lists none."""
    for entry in info.get("features") or []:
        if isinstance(entry, dict) and (entry.get("kind"), entry.get("layer")) == (str(layer.kind), layer.layer):
            return entry
    raise CheckpointError(f"this checkpoint ships no SAE for {layer}")


def layers_with_sae(info: dict) -> list[AttentionLayer]:
    """The layers config.json lists an SAE for, in its order; CheckpointError for an entry it cannot read."""
    out = []
    for entry in info.get("features") or []:
        try:
            out.append(AttentionLayer(entry["kind"], int(entry["layer"])))
        except (TypeError, KeyError, ValueError):
            raise CheckpointError("config.json: a \"features\" entry does not name a kind and a layer") from None
    return out


def load_sae(directory: str | Path, info: dict, layer: AttentionLayer, d_in: int) -> SparseAutoencoder:
    """The SAE of `layer` the checkpoint in `directory` (its config.json parsed as `info`) ships, checked (the
    module's docstring) against its entry and the model's d_in (H d_k); raises CheckpointError."""
    entry = entry_of(info, layer)
    file = Path(directory) / sae_file_name(layer)
    try:
        config = SAEConfig.from_dict(entry.get("sae"))
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"config.json: the SAE of {layer} has no valid config ({e})") from None
    if config.d_in != d_in:
        raise CheckpointError(f"{file.name}: the SAE reads {config.d_in} numbers per position; {layer} writes {d_in}")
    with open_regular(file) as f:
        size = os.fstat(f.fileno()).st_size
        if size > MAX_SAE_BYTES:
            raise CheckpointError(f"{file.name} is {size:,} bytes, over the {MAX_SAE_BYTES:,} an SAE may have")
        try:
            header, start = read_header(f, size, MAX_SAE_HEADER_BYTES)
            expected = shapes(config)
            _check_header(header, expected)
            tensors = read_tensors(f, size, header, start)
        except ValueError as e:
            raise CheckpointError(f"{file.name} is not a valid SAE: {e}") from None
    _check_values(file.name, tensors)
    sae = SparseAutoencoder(config)
    sae.load_state_dict({name: t.clone() for name, t in tensors.items()})
    return sae.eval()


def _check_header(header: dict, expected: dict[str, tuple[int, ...]]) -> None:
    if set(header) != set(expected):
        raise ValueError(f"it holds tensors {sorted(header)}, an SAE holds {sorted(expected)}")
    for name, shape in expected.items():
        if header[name]["dtype"] != "F32" or tuple(header[name]["shape"]) != shape:
            raise ValueError(f"tensor {name} is {header[name]['dtype']} {header[name]['shape']}, expected F32 "
                             f"{list(shape)}")


def _check_values(name: str, tensors: dict[str, torch.Tensor]) -> None:
    for key, t in tensors.items():
        if not torch.isfinite(t).all():
            raise CheckpointError(f"{name} is not a valid SAE: tensor {key} holds a NaN or an infinity")
    if not float(tensors["scale"]) > 0:
        raise CheckpointError(f"{name} is not a valid SAE: its scale must be positive")
    norms = tensors["W_dec"].norm(dim=1)
    if (norms - 1).abs().max() > UNIT_NORM_TOLERANCE:
        raise CheckpointError(f"{name} is not a valid SAE: its decoder rows must have unit norm (one has "
                              f"{float(norms[(norms - 1).abs().argmax()]):.4f})")
