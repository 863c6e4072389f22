"""transformer/pretrained/llama.py: a Llama (SmolLM2's layout) in the from-scratch decoder, against `transformers`.

The oracle is a small random `transformers.LlamaForCausalLM` (GQA, tied embeddings, rope_theta 100000) saved in the
Hugging Face layout with a byte-level BPE tokenizer.json (tests/hf_models.py), reloaded by `transformers` from the
same files our loader reads. Offline.
"""
from __future__ import annotations

import json

import pytest
import torch
import transformers

from tests.hf_models import TEXTS, assert_attention_equal, build_tiny_llama
from transformer import CheckpointError
from transformer.generate import generate
from transformer.norms import RMSNorm
from transformer.pretrained import load_pretrained


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory):
    return build_tiny_llama(tmp_path_factory.mktemp("llama") / "tiny-llama")


def reference(directory):
    return transformers.LlamaForCausalLM.from_pretrained(directory, attn_implementation="eager").eval()


@pytest.fixture(scope="module")
def ref(llama_dir):
    return reference(llama_dir)


@pytest.fixture(scope="module")
def ours(llama_dir):
    return load_pretrained(llama_dir, device="cpu")


def random_ids(vocab_size: int, shape=(3, 40), seed: int = 0) -> torch.Tensor:
    return torch.randint(1, vocab_size, shape, generator=torch.Generator().manual_seed(seed))


def test_logits_equal_the_reference(ours, ref):
    """Oracle: transformers' Llama on the same files: fp32 logits agree to 1e-5 (fused attention path and explicit
    one), so RMSNorm, the halves RoPE layout with rope_theta, GQA, SwiGLU and the tied head are all as theirs."""
    model = ours[0]
    ids = random_ids(model.config.vocab_size)
    with torch.no_grad():
        expected = ref(ids).logits
        torch.testing.assert_close(model(ids).logits, expected, atol=1e-5, rtol=0)
        torch.testing.assert_close(model(ids, return_attention=True).logits, expected, atol=1e-5, rtol=0)


def test_attention_weights_equal_the_reference_per_layer_and_head(ours, ref):
    """Oracle: transformers' output_attentions (eager): every layer's and head's weights to 1e-5, so q_proj, k_proj,
    v_proj went to the right heads and each pair of query heads reads its own key/value head."""
    model = ours[0]
    ids = random_ids(model.config.vocab_size, shape=(2, 32), seed=1)
    with torch.no_grad():
        expected = ref(ids, output_attentions=True).attentions
        got = model(ids, return_attention=True).attention.decoder_self
    assert len(got) == 2
    assert_attention_equal(got, expected, (2, 4, 32, 32))


def test_cached_greedy_generation_gives_the_reference_tokens(ours, ref):
    """Oracle: transformers' greedy generate(): our KV-cached greedy decoding gives the same tokens."""
    model = ours[0]
    prompt = [5, 17, 33, 40]
    out = ref.generate(torch.tensor([prompt]), attention_mask=torch.ones(1, 4, dtype=torch.long), max_new_tokens=30,
                       do_sample=False, num_beams=1, eos_token_id=0, pad_token_id=0)
    expected = out[0, 4:].tolist()
    expected = expected[: expected.index(0)] if 0 in expected else expected
    assert len(expected) >= 10
    assert [s.token_id for s in generate(model, prompt, 30, use_cache=True)] == expected


@pytest.mark.parametrize("text", TEXTS)
def test_tokenizer_gives_the_reference_ids(ours, llama_dir, text):
    """Oracle: transformers' fast tokenizer on the same tokenizer.json: the same ids (special tokens written in the
    text included), and decoding gives the text back."""
    tokenizer = ours[1]
    ref = transformers.AutoTokenizer.from_pretrained(llama_dir)
    assert tokenizer.encode(text) == ref.encode(text, add_special_tokens=False)
    assert tokenizer.decode(tokenizer.encode(text)) == text


def test_untied_head_and_other_sizes_equal_the_reference(tmp_path):
    """Oracle: a Llama with its own lm_head, multi-query attention (one key/value head), rope_theta 10000 and a
    large RMSNorm eps: logits to 1e-5 (on our explicit attention path, the arithmetic of their eager one); the head
    is not the embedding."""
    directory = build_tiny_llama(tmp_path / "untied", seed=1, tie_word_embeddings=False, num_key_value_heads=1,
                                 rope_theta=10000.0, rms_norm_eps=0.1)
    model, _, info = load_pretrained(directory, device="cpu")
    ids = random_ids(model.config.vocab_size, seed=2)
    with torch.no_grad():
        torch.testing.assert_close(model(ids, return_attention=True).logits, reference(directory)(ids).logits,
                                   atol=1e-5, rtol=0)
    assert model.lm_head.weight is not model.embed.weight and model.config.n_kv_heads == 1


def test_loaded_model_is_built_from_the_llama_blocks(ours):
    """Invariant: the structure in our config: RMSNorm pre-norm with a final RMSNorm, halves RoPE with the file's
    theta, GQA, SwiGLU without biases, unscaled tied embeddings, every weight loaded (none left on `meta`)."""
    model, tokenizer, info = ours
    cfg = model.config
    assert (cfg.norm, cfg.norm_first, cfg.ffn, cfg.ffn_bias, cfg.pos_encoding, cfg.rope_layout, cfg.rope_theta) == \
           ("rms", True, "swiglu", False, "rope", "halves", 100000.0)
    assert (cfg.n_heads, cfg.n_kv_heads, cfg.attention_bias, cfg.scale_embeddings) == (4, 2, False, False)
    assert isinstance(model.decoder_norm, RMSNorm) and model.lm_head.weight is model.embed.weight
    assert not [n for n, t in [*model.named_parameters(), *model.named_buffers()] if t.is_meta]
    assert info["training"]["family"] == "Llama" and not model.training


@pytest.mark.parametrize("change, field", [
    ({"rope_scaling": {"rope_type": "llama3", "factor": 8.0}}, "rope_scaling"),
    ({"rope_parameters": {"rope_type": "llama3", "factor": 8.0, "rope_theta": 5e5}}, "rope_parameters"),
    ({"rope_parameters": None, "rope_theta": 0.5}, "rope_theta"),
    ({"hidden_act": "gelu"}, "hidden_act"),
    ({"num_key_value_heads": 3}, "num_key_value_heads"),  # 3 does not divide 4 query heads
    ({"head_dim": 32}, "head_dim"),
    ({"attention_bias": True}, "attention_bias"),
    ({"rms_norm_eps": -1}, "rms_norm_eps"),
    ({"intermediate_size": 0}, "intermediate_size"),
])
def test_a_llama_this_model_cannot_run_is_refused_naming_the_field(llama_dir, tmp_path, change, field):
    """Invariant: a config.json outside what the from-scratch blocks implement raises CheckpointError naming the
    Hugging Face field, before any weight is read."""
    directory = tmp_path / "bad"
    directory.mkdir()
    for f in llama_dir.iterdir():
        (directory / f.name).write_bytes(f.read_bytes())
    hf = {**json.loads((llama_dir / "config.json").read_text()), **change}
    (directory / "config.json").write_text(json.dumps(hf))
    with pytest.raises(CheckpointError, match=rf"^{field}\b"):
        load_pretrained(directory)
