"""Checkpoints written before W^Q, W^K, W^V were fused into `in_proj` (and before `attention_bias` existed) still
load, into the same function; a legacy file that does not fit is refused as clearly as any other."""
from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file, save_file

from transformer.attention import MultiHeadAttention, fuse_legacy_projections
from transformer.checkpoint import CheckpointError, load_checkpoint, save_checkpoint

SRC = torch.tensor([[5, 6, 7, 2, 0], [8, 9, 2, 0, 0]])
TGT = torch.tensor([[1, 10, 11], [1, 12, 0]])


def to_legacy(path, n_kv_heads: int, n_heads: int) -> None:
    """Rewrite a checkpoint as the old code wrote it: every in_proj split into q_proj, k_proj, v_proj (rows H d_k,
    G d_k, G d_k), and config.json without the attention_bias key."""
    weights = load_file(str(path / "model.safetensors"))
    legacy = {}
    for name, tensor in weights.items():
        if ".in_proj." not in name:
            legacy[name] = tensor
            continue
        d_k = tensor.size(0) // (n_heads + 2 * n_kv_heads)
        sizes = (n_heads * d_k, n_kv_heads * d_k, n_kv_heads * d_k)
        for proj, part in zip(("q_proj", "k_proj", "v_proj"), tensor.split(sizes)):
            legacy[name.replace("in_proj", proj)] = part.clone()
    save_file(legacy, str(path / "model.safetensors"))
    info = json.loads((path / "config.json").read_text())
    del info["model"]["attention_bias"]
    (path / "config.json").write_text(json.dumps(info))


@pytest.mark.parametrize("arch,n_kv_heads", [("encoder-decoder", None), ("decoder-only", 2)])
def test_a_legacy_checkpoint_loads_into_the_same_function(tmp_path, make_model, char_tokenizer, arch, n_kv_heads):
    """Oracle: the model before the split and the legacy file loaded compute the same logits bit for bit; the
    config without the key means attention_bias=True (every old model had biases), and the fused in_proj holds
    the old q_proj, k_proj, v_proj rows in that order."""
    model = make_model(arch, attention_bias=True, n_kv_heads=n_kv_heads)
    with torch.no_grad():  # non-zero biases, so a bias in the wrong place would show
        for name, p in model.named_parameters():
            if name.endswith("in_proj.bias"):
                p.normal_()
    path = save_checkpoint(tmp_path / "old", model, char_tokenizer)
    to_legacy(path, model.config.n_kv_heads, model.config.n_heads)
    assert not any(".in_proj." in name for name in load_file(str(path / "model.safetensors")))
    loaded, _, _ = load_checkpoint(path, device="cpu")
    assert loaded.config.attention_bias is True
    inputs = (SRC, TGT) if arch == "encoder-decoder" else (TGT,)
    with torch.no_grad():
        torch.testing.assert_close(loaded(*inputs).logits, model(*inputs).logits, atol=0, rtol=0)


def test_a_legacy_checkpoint_with_a_wrong_key_shape_is_refused(tmp_path, make_model, char_tokenizer):
    """Invariant: a legacy file whose k_proj does not fit the config is a CheckpointError naming the fused tensor,
    raised before the model is built."""
    model = make_model("decoder-only", attention_bias=True)
    path = save_checkpoint(tmp_path / "old", model, char_tokenizer)
    to_legacy(path, model.config.n_kv_heads, model.config.n_heads)
    weights = load_file(str(path / "model.safetensors"))
    weights["decoder.0.self_attn.k_proj.weight"] = weights["decoder.0.self_attn.k_proj.weight"][:-1].clone()
    save_file(weights, str(path / "model.safetensors"))
    with pytest.raises(CheckpointError, match="size mismatch for decoder.0.self_attn.in_proj.weight"):
        load_checkpoint(path, device="cpu")


def test_fusing_leaves_latent_attention_and_other_names_alone():
    """Invariant: only complete q_proj/k_proj/v_proj triples are fused; MLA's lone q_proj and everything else keep
    their names."""
    state = {"a.q_proj.weight": 1, "a.k_proj.weight": 2, "a.v_proj.weight": 3, "b.q_proj.weight": 4,
             "b.kv_down.weight": 5, "c.out_proj.bias": 6}
    fused = fuse_legacy_projections(state, combine=lambda parts: tuple(parts))
    assert fused == {"a.in_proj.weight": (1, 2, 3), "b.q_proj.weight": 4, "b.kv_down.weight": 5, "c.out_proj.bias": 6}


def test_the_papers_matrices_are_views_of_in_proj():
    """Invariant: W_Q, W_K, W_V are the paper's (d_model, ...) matrices, views of in_proj's rows (a write shows
    through), and head i's W_i^Q is columns i d_k .. (i + 1) d_k; with GQA head i reads kv head i // (H / G)."""
    mha = MultiHeadAttention(16, 4, n_kv_heads=2)
    x = torch.randn(3, 16)
    with torch.no_grad():
        q, k, v = mha.project(x[None], x[None], x[None])
        torch.testing.assert_close(q[0], x @ mha.W_Q)
        torch.testing.assert_close(k[0], x @ mha.W_K)
        torch.testing.assert_close(v[0], x @ mha.W_V)
        assert mha.W_Q.shape == (16, 16) and mha.W_K.shape == (16, 8) and mha.W_O.shape == (16, 16)
        head = mha.head_weights(3)
        torch.testing.assert_close(head["W_Q"], mha.W_Q[:, 12:16])
        torch.testing.assert_close(head["W_K"], mha.W_K[:, 4:8])  # query head 3 reads kv head 1
        mha.in_proj.weight[0, 0] = 42.0
        assert mha.W_Q[0, 0] == 42.0
