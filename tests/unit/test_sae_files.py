"""A saved SAE is data (transformer.interpretability.sae_files): it loads back exactly, and anything else, a NaN, a
wrong shape or dtype, a decoder row off the unit sphere, a cut file, an extra tensor, is refused in words before
it is used."""
from __future__ import annotations

import copy

import pytest
import torch
from safetensors.torch import save_file

from transformer.checkpoint import CheckpointError
from transformer.interpretability.features import AttentionLayer
from transformer.interpretability.sae import SAEConfig, SparseAutoencoder
from transformer.interpretability.sae_files import layers_with_sae, load_sae, sae_file_name, save_sae

LAYER = AttentionLayer("decoder self", 1)
CONFIG = SAEConfig(32, 48, "topk", k=4)
INFO = {"features": [{"file": sae_file_name(LAYER), "kind": "decoder self", "layer": 1, "sae": CONFIG.to_dict()}]}


def saved(tmp_path):
    sae = SparseAutoencoder(CONFIG, torch.Generator().manual_seed(0))
    with torch.no_grad():
        sae.b_enc.normal_()
        sae.scale.fill_(0.7)
    save_sae(tmp_path, LAYER, sae)
    return sae


def test_a_saved_sae_loads_back_exactly(tmp_path):
    sae = saved(tmp_path)
    assert (tmp_path / "sae-decoder-self-1.safetensors").is_file()
    loaded = load_sae(tmp_path, INFO, LAYER, 32)
    x = torch.randn(5, 32)
    assert torch.equal(loaded.encode(x), sae.encode(x)) and torch.equal(loaded.reconstruct(x), sae.reconstruct(x))
    assert layers_with_sae(INFO) == [LAYER]


def tampered(tmp_path, change):
    state = {k: v.clone() for k, v in saved(tmp_path).state_dict().items()}
    change(state)
    save_file(state, str(tmp_path / sae_file_name(LAYER)))


@pytest.mark.parametrize("change, message", [
    (lambda s: s["W_enc"].__setitem__((0, 0), float("nan")), "W_enc holds a NaN"),
    (lambda s: s.__setitem__("W_dec", s["W_dec"] * 2), "unit norm"),
    (lambda s: s.__setitem__("b_dec", torch.zeros(31)), "b_dec is F32 \\[31\\], expected F32 \\[32\\]"),
    (lambda s: s.__setitem__("b_enc", s["b_enc"].double()), "b_enc is F64"),
    (lambda s: s.__setitem__("extra", torch.zeros(2)), "holds tensors"),
    (lambda s: s.__setitem__("scale", torch.tensor(-1.0)), "scale must be positive"),
    (lambda s: s.__setitem__("b_enc", torch.zeros(48, dtype=torch.int32)), "floating point"),
])
def test_a_corrupt_sae_is_refused_in_words(tmp_path, change, message):
    tampered(tmp_path, change)
    with pytest.raises(CheckpointError, match=message):
        load_sae(tmp_path, INFO, LAYER, 32)


def test_a_cut_file_a_missing_entry_a_wrong_width_and_a_link_are_refused(tmp_path):
    saved(tmp_path)
    file = tmp_path / sae_file_name(LAYER)
    with pytest.raises(CheckpointError, match="reads 32 numbers per position; decoder self layer 1 writes 64"):
        load_sae(tmp_path, INFO, LAYER, 64)
    with pytest.raises(CheckpointError, match="ships no SAE for decoder self layer 0"):
        load_sae(tmp_path, INFO, AttentionLayer("decoder self", 0), 32)
    bad = copy.deepcopy(INFO)
    bad["features"][0]["sae"]["k"] = 99
    with pytest.raises(CheckpointError, match="no valid config"):
        load_sae(tmp_path, bad, LAYER, 32)
    file.write_bytes(file.read_bytes()[:-10])
    with pytest.raises(CheckpointError, match="not a valid SAE"):
        load_sae(tmp_path, INFO, LAYER, 32)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    saved(elsewhere)
    file.unlink()
    file.symlink_to(elsewhere / sae_file_name(LAYER))
    with pytest.raises(CheckpointError, match="cannot be opened"):
        load_sae(tmp_path, INFO, LAYER, 32)
