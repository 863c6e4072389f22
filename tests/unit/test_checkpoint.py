"""Checkpoints: a faithful round trip, atomic saves, and CheckpointError (never code execution) for bad files."""
from __future__ import annotations

import json
import os
import pickle

import pytest
import torch

from transformer import checkpoint as ckpt_module
from transformer.checkpoint import (FORMAT_VERSION, CheckpointError, load_checkpoint, resolve_device,
                                    save_checkpoint)

SRC = torch.tensor([[5, 6, 7, 2, 0], [8, 9, 2, 0, 0]])
TGT = torch.tensor([[1, 10, 11], [1, 12, 0]])


@pytest.fixture
def saved(tmp_path, enc_dec_model, char_tokenizer):
    path = save_checkpoint(tmp_path / "ckpt", enc_dec_model, char_tokenizer, task="reverse",
                           training={"steps": 3}, metrics={"exact_match": 0.5})
    return path, enc_dec_model, char_tokenizer


def test_round_trip_gives_the_same_model_tokenizer_and_info(saved):
    """Invariant: load(save(model)) computes the same logits, keeps tied weights tied, is in eval mode, and the
    info is config.json as written (format_version, model config, task, training, metrics)."""
    path, model, tok = saved
    loaded, loaded_tok, info = load_checkpoint(path, device="cpu")
    assert not loaded.training
    assert loaded.config == model.config
    assert loaded.lm_head.weight is loaded.embed.weight
    with torch.no_grad():
        torch.testing.assert_close(loaded(SRC, TGT).logits, model(SRC, TGT).logits, atol=0, rtol=0)
    assert loaded_tok.encode("cab face") == tok.encode("cab face")
    assert info["format_version"] == FORMAT_VERSION and info["model"] == model.config.to_dict()
    assert (info["task"], info["training"], info["metrics"]) == ("reverse", {"steps": 3}, {"exact_match": 0.5})
    assert info["tokenizer"] == {"kind": "char"}
    assert info == json.loads((path / "config.json").read_text())
    assert "# ckpt" in (path / "README.md").read_text()


def test_round_trip_untied_learned_gqa_decoder_only(tmp_path, make_model, char_tokenizer):
    """Invariant: every parameter survives the round trip bit for bit, for an untied, learned-position GQA
    decoder-only model too (the sinusoidal table is rebuilt, not stored)."""
    model = make_model("decoder-only", tie_embeddings=False, pos_encoding="learned", n_kv_heads=2)
    loaded, _, info = load_checkpoint(save_checkpoint(tmp_path / "lm", model, char_tokenizer), device="cpu")
    assert info["task"] is None
    assert loaded.lm_head.weight is not loaded.embed.weight
    for (name, a), (_, b) in zip(model.state_dict().items(), loaded.state_dict().items()):
        assert torch.equal(a, b), name


def test_round_trip_of_every_config_switch(tmp_path, make_model, char_tokenizer):
    """Invariant: the loader's expected shapes come from the model itself (built on the meta device), so a model
    using the config's other switches (attention-only layers, tanh GELU, unscaled embeddings, its own LayerNorm
    epsilon, pre-norm) round-trips bit for bit too."""
    model = make_model("decoder-only", attention_only=True, activation="gelu_tanh", scale_embeddings=False,
                       layer_norm_eps=1e-6, norm_first=True)
    loaded, _, _ = load_checkpoint(save_checkpoint(tmp_path / "lm", model, char_tokenizer), device="cpu")
    assert loaded.config == model.config
    for name, value in model.state_dict().items():
        assert torch.equal(loaded.state_dict()[name], value), name


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_weights_in_another_floating_dtype_load(saved, dtype):
    """Invariant: the dtype check refuses integers and booleans only: weights stored as float16, bfloat16 or
    float64 load, converted to the model's float32 (oracle: the stored values cast to float32)."""
    from safetensors.torch import load_file, save_file

    path = saved[0]
    tensors = {k: v.to(dtype) for k, v in load_file(str(path / "model.safetensors")).items()}
    save_file(tensors, str(path / "model.safetensors"))
    loaded, _, _ = load_checkpoint(path, device="cpu")
    assert torch.equal(loaded.embed.weight, tensors["embed.weight"].float())


def test_a_checkpoint_set_aside_by_a_killed_save_loads_and_is_put_back(saved, make_model):
    """Invariant (crash-safe save): when a save died between its two renames, `<name>` is absent and the previous
    checkpoint is `.<name>.old`; load_checkpoint reads it, and recover_checkpoint (run by the next save or resume)
    renames it back and removes the unfinished save's temporary folder."""
    from transformer.checkpoint import recover_checkpoint

    path, model, tok = saved
    os.rename(path, path.with_name(".ckpt.old"))
    (path.parent / ".ckpt.tmp-unfinished").mkdir()
    loaded, _, info = load_checkpoint(path, device="cpu")
    assert info["task"] == "reverse" and torch.equal(loaded.embed.weight, model.embed.weight)
    recover_checkpoint(path)
    assert os.listdir(path.parent) == ["ckpt"]
    assert torch.equal(load_checkpoint(path, device="cpu")[0].embed.weight, model.embed.weight)


def test_device_auto_is_cuda_when_present_else_cpu(saved):
    """Oracle: torch.cuda.is_available() decides what "auto" means; the loaded model lives there."""
    expected = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    assert resolve_device("auto") == expected
    assert load_checkpoint(saved[0])[0].device.type == expected.type


def test_saving_over_a_checkpoint_replaces_it_and_leaves_no_temp_dirs(saved, make_model):
    """Invariant: a second save to the same path replaces the checkpoint, and only that directory remains."""
    path, _, tok = saved
    other = make_model(seed=99)
    save_checkpoint(path, other, tok, task="copy")
    loaded, _, info = load_checkpoint(path, device="cpu")
    assert info["task"] == "copy"
    assert torch.equal(loaded.embed.weight, other.embed.weight)
    assert os.listdir(path.parent) == ["ckpt"]


@pytest.mark.parametrize("fail_in", ["save_model", "tokenizer.save"])
def test_a_save_interrupted_mid_write_leaves_the_old_checkpoint(saved, make_model, monkeypatch, fail_in):
    """Invariant (atomic save): if writing crashes half-way (the weights file partly written, or the tokenizer
    failing), the previous checkpoint still loads unchanged and no temporary directory is left behind."""
    path, model, tok = saved
    real_save_model = ckpt_module.save_model

    def crash_after_partial_write(m, filename, *a, **k):
        real_save_model(m, filename, *a, **k)
        with open(filename, "r+b") as f:
            f.truncate(100)
        raise OSError("disk full")

    if fail_in == "save_model":
        monkeypatch.setattr(ckpt_module, "save_model", crash_after_partial_write)
    else:
        monkeypatch.setattr(type(tok), "save", lambda self, p: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(path, make_model(seed=5), tok, task="copy")
    monkeypatch.undo()
    loaded, _, info = load_checkpoint(path, device="cpu")
    assert info["task"] == "reverse"
    assert torch.equal(loaded.embed.weight, model.embed.weight)
    assert os.listdir(path.parent) == ["ckpt"]


def test_save_refuses_a_tokenizer_that_does_not_fit_the_model(tmp_path, enc_dec_model):
    """Invariant: a checkpoint's tokenizer.vocab_size equals config.vocab_size, so a mismatch is refused."""
    from transformer.tokenization import CharTokenizer

    with pytest.raises(ValueError, match="vocab_size"):
        save_checkpoint(tmp_path / "x", enc_dec_model, CharTokenizer("ab"))
    assert not (tmp_path / "x").exists()


# --- bad checkpoints ------------------------------------------------------------------------------------------


def load_error(path) -> str:
    with pytest.raises(CheckpointError) as e:
        load_checkpoint(path, device="cpu")
    return str(e.value)


def test_missing_directory(tmp_path):
    """Invariant: a path that is not a directory is a CheckpointError saying so."""
    assert "not a checkpoint directory" in load_error(tmp_path / "nothing-here")


@pytest.mark.parametrize("name", ["config.json", "model.safetensors", "tokenizer.json"])
def test_missing_file_is_named(saved, name):
    """Invariant: each missing file is a CheckpointError naming that file."""
    path = saved[0]
    (path / name).unlink()
    assert f"missing {name}" in load_error(path)


def test_truncated_weights(saved):
    """Invariant: a weights file cut short is a CheckpointError naming model.safetensors."""
    path = saved[0]
    data = (path / "model.safetensors").read_bytes()
    (path / "model.safetensors").write_bytes(data[: len(data) // 2])
    assert "model.safetensors is not a valid safetensors file" in load_error(path)


def edit_config(path, edit):
    info = json.loads((path / "config.json").read_text())
    edit(info)
    (path / "config.json").write_text(json.dumps(info))


def test_config_with_a_wrong_shape(saved):
    """Invariant: a config.json whose d_model (48, still valid) does not match the stored weights (32) is a
    CheckpointError saying the weights do not fit, not a model with random weights."""
    path = saved[0]
    edit_config(path, lambda info: info["model"].update(d_model=48))
    message = load_error(path)
    assert "model.safetensors does not match config.json" in message
    assert "size mismatch for embed.weight" in message and "[17, 48]" in message


def test_config_with_fewer_layers_than_the_weights(saved):
    """Invariant: weights for layers the config does not have are refused (unexpected keys), not ignored."""
    path = saved[0]
    edit_config(path, lambda info: info["model"].update(n_decoder_layers=1))
    assert "unexpected" in load_error(path)


def test_unknown_format_version(saved):
    """Invariant: a format_version this code does not read is refused and named."""
    path = saved[0]
    edit_config(path, lambda info: info.update(format_version=2))
    assert "unknown format_version 2" in load_error(path)


def test_invalid_json_and_bad_model_config(saved):
    """Invariant: config.json that is not JSON, or whose model config is invalid, is a CheckpointError naming it."""
    path = saved[0]
    edit_config(path, lambda info: info["model"].update(n_heads=5))
    assert "bad model config" in load_error(path) and "d_model" in load_error(path)
    (path / "config.json").write_text("{not json")
    assert "config.json is not valid JSON" in load_error(path)


def test_tokenizer_that_does_not_match_the_config(saved):
    """Invariant: a tokenizer.json with a different vocabulary size than config.json is refused."""
    path = saved[0]
    data = json.loads((path / "tokenizer.json").read_text())
    data["vocab"] = data["vocab"][:-1]
    (path / "tokenizer.json").write_text(json.dumps(data))
    assert "tokenizer has 16 tokens, config says vocab_size=17" in load_error(path)


class Payload:
    """Unpickling this creates `marker` on disk: proof that code from the file ran."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return open, (self.marker, "w")


def test_pickle_renamed_to_safetensors_is_refused_and_never_run(saved, tmp_path):
    """Invariant: loading never executes code from the checkpoint. A pickle whose __reduce__ would create a
    marker file, renamed to model.safetensors, is a CheckpointError and the marker is never created. (The payload
    is live: unpickling a copy of it does create its marker.)"""
    path = saved[0]
    probe, marker = tmp_path / "probe-marker", tmp_path / "marker"
    pickle.loads(pickle.dumps({"w": Payload(probe)}))
    assert probe.exists(), "precondition: the payload runs when unpickled"
    with open(path / "model.safetensors", "wb") as f:
        pickle.dump({"embed.weight": Payload(marker)}, f)
    assert "model.safetensors is not a valid safetensors file" in load_error(path)
    assert not marker.exists()
    torch.save({"embed.weight": Payload(marker)}, path / "model.safetensors")  # torch's zip pickle format too
    assert "model.safetensors is not a valid safetensors file" in load_error(path)
    assert not marker.exists()
