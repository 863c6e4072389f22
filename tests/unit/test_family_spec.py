"""transformer/pretrained/spec.py, convert.py, family.py: a family is one declarative spec, read by one converter and
one loader. The toy family of tests/toy_family.py (GPT-2's model under other names, query/key/value apart, nn.Linear
layout) is added through its spec alone and checked against transformers' GPT-2 on the original files. Offline.
"""
from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest
import torch
import transformers

from tests.toy_family import TOY, save_toy
from transformer import CheckpointError
from transformer.pretrained import FAMILIES, load_pretrained, read_config


@pytest.fixture
def toy(monkeypatch):
    """The toy family registered for one test (the registry is the module's; nothing else changes)."""
    monkeypatch.setitem(FAMILIES, TOY.model_type, TOY)
    return TOY


@pytest.fixture(scope="module")
def toy_dir(tiny_gpt2_dir, tmp_path_factory):
    return save_toy(tiny_gpt2_dir, tmp_path_factory.mktemp("toy") / "toy-gpt")


def test_a_family_added_through_its_spec_alone_equals_the_reference(toy, toy_dir, tiny_gpt2_dir):
    """Oracle: transformers' GPT-2 on the original files. The toy spec's model, loaded by load_pretrained from the
    renamed, split and untransposed tensors, gives its logits to 1e-5 on random ids (fused and explicit attention);
    the tokenizer is the same; the info names the toy family."""
    model, tokenizer, info = load_pretrained(toy_dir, device="cpu")
    reference = transformers.GPT2LMHeadModel.from_pretrained(tiny_gpt2_dir, attn_implementation="eager").eval()
    ids = torch.randint(0, model.config.vocab_size, (3, 40), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        expected = reference(ids).logits
        torch.testing.assert_close(model(ids).logits, expected, atol=1e-5, rtol=0)
        torch.testing.assert_close(model(ids, return_attention=True).logits, expected, atol=1e-5, rtol=0)
        assert (expected - expected.mean()).abs().max() > 1.0  # far from a constant: a wrong rule would show
    text = "Hello, world! The quick brown fox."
    assert tokenizer.encode(text) == transformers.GPT2TokenizerFast.from_pretrained(tiny_gpt2_dir).encode(text)
    assert info["training"]["family"] == "Toy GPT" and model.lm_head.weight is model.embed.weight


def test_without_its_spec_registered_the_toy_is_refused_naming_the_model_type(toy_dir):
    """Invariant: the registry is the only place that knows the family: unregistered, its model_type is refused."""
    with pytest.raises(CheckpointError, match=r"model_type 'toy-gpt' is not supported"):
        load_pretrained(toy_dir)


def test_stored_shapes_are_checked_against_our_config_before_any_data_is_read(toy, toy_dir, tmp_path, monkeypatch):
    """Invariant: the shapes a file must have come from our config (our model built on the meta device): a
    config.json promising a longer context than pos.weight holds is refused naming the tensor and both shapes, and
    no tensor data is read."""
    from transformer.pretrained import weights

    directory = tmp_path / "long"
    directory.mkdir()
    for f in toy_dir.iterdir():
        (directory / f.name).write_bytes(f.read_bytes())
    (directory / "config.json").write_text(json.dumps({**json.loads((toy_dir / "config.json").read_text()),
                                                       "context": 128}))
    monkeypatch.setattr(weights, "read_tensors", lambda *a, **k: pytest.fail("tensor data read"))
    with pytest.raises(CheckpointError, match=r"pos\.weight is \[64, 64\], config\.json implies \[128, 64\]"):
        load_pretrained(directory)


@pytest.mark.parametrize("change, message", [
    ({"heads": 5}, r"^width \(our d_model\): 64 is not divisible by n_heads=5"),  # TransformerConfig's own check
    ({"depth": "2"}, r"^depth: must be a positive integer, got '2'"),
    ({"eps": float("nan")}, r"^eps: must be a finite number"),
    ({"end_token": 10 ** 6}, r"^end_token \(our (pad|eos)_id\): must be a token id"),
    ({"vocab": None}, r"^vocab: config\.json must give it"),
])
def test_a_bad_config_is_refused_naming_the_config_json_field(toy, toy_dir, change, message):
    """Invariant: every refusal names the family's own config.json field, also when the check is TransformerConfig's
    (its field translated back to the one it was read from)."""
    hf = {**json.loads((toy_dir / "config.json").read_text()), **change}
    with pytest.raises(CheckpointError, match=message):
        read_config(TOY, hf)


def test_a_spec_that_does_not_cover_our_model_is_a_clear_error(toy, toy_dir):
    """Invariant: a spec must say where each of our tensors is stored, and only ours: one that forgets the final
    norm's bias, or maps a tensor our model does not have, raises ValueError naming it (a spec's mistake, before
    the file is read)."""
    weights = dict(TOY.weights)
    del weights["decoder_norm.bias"]
    FAMILIES[TOY.model_type] = replace(TOY, weights=weights)
    with pytest.raises(ValueError, match=r"Toy GPT spec says nothing of decoder_norm\.bias"):
        load_pretrained(toy_dir)
    FAMILIES[TOY.model_type] = replace(TOY, weights={**TOY.weights, "embed_norm.weight": TOY.weights["embed.weight"]})
    with pytest.raises(ValueError, match=r"maps tensors our model does not have: \['embed_norm\.weight'\]"):
        load_pretrained(toy_dir)


ODD_VALUES = (None, "x", [1], {"a": 1}, -1, 0, 10 ** 9, 1e300, float("nan"), True)


@pytest.fixture(scope="module")
def family_configs(tiny_gpt2_dir, tmp_path_factory) -> dict[str, dict]:
    """The config.json of a small model of each registered family, as transformers writes it."""
    from tests.hf_models import build_tiny_bert, build_tiny_llama
    from tests.tiny_marian import build_tiny_marian

    root = tmp_path_factory.mktemp("families")
    directories = {"gpt2": tiny_gpt2_dir, "llama": build_tiny_llama(root / "llama"),
                   "bert": build_tiny_bert(root / "bert"), "marian": build_tiny_marian(root / "marian")}
    return {model_type: json.loads((d / "config.json").read_text()) for model_type, d in directories.items()}


@pytest.mark.parametrize("model_type", ["gpt2", "llama", "bert", "marian"])
def test_any_value_of_any_field_is_read_or_refused_with_a_checkpoint_error(family_configs, model_type):
    """Invariant: config.json is data. Each field of each family's real config.json, set in turn to a null, a
    string, a list, an object, a negative, a zero, a huge or a non-finite number or a boolean, gives a config or a
    CheckpointError (never a TypeError, KeyError or another exception), and a refusal starts with the name of a
    field of that config.json (or says config.json: and our field)."""
    family, hf = FAMILIES[model_type], family_configs[model_type]
    read_config(family, hf)  # the unchanged config is read
    refused = 0
    for field in hf:
        for value in ODD_VALUES:
            try:
                read_config(family, {**hf, field: value})
            except CheckpointError as e:
                refused += 1
                named = re.match(r"^(config\.json: \w+|(\w+)[.:( ])", str(e))
                assert named and (named.group(2) is None or named.group(2) in hf), str(e)
    assert refused >= 20  # the fields the family reads do refuse odd values


def test_a_model_too_large_is_refused_before_its_tokenizer_or_weights_are_read(toy, toy_dir, tmp_path, monkeypatch):
    """Invariant: a checkpoint is data, bounded before it is read: a config.json describing a model larger than a
    checkpoint may hold (width 2^15: about 26 billion numbers) is refused from our config on the meta device, before
    the tokenizer files or any tensor data are read."""
    from transformer.pretrained import weights
    from transformer.pretrained.spec import Tokenizer

    directory = tmp_path / "huge"
    directory.mkdir()
    for f in toy_dir.iterdir():
        (directory / f.name).write_bytes(f.read_bytes())
    (directory / "config.json").write_text(json.dumps({**json.loads((toy_dir / "config.json").read_text()),
                                                       "width": 2 ** 15}))
    FAMILIES[TOY.model_type] = replace(TOY, tokenizer=Tokenizer(TOY.tokenizer.files,
                                                                lambda *a: pytest.fail("tokenizer read")))
    monkeypatch.setattr(weights, "read_tensors", lambda *a, **k: pytest.fail("tensor data read"))
    with pytest.raises(CheckpointError, match=r"describes a model of [\d,]+ parameters and buffers, more than"):
        load_pretrained(directory)
