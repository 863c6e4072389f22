"""TransformerConfig: validation names the bad field, defaults are the paper's, dict round-trips."""
from __future__ import annotations

import json

import pytest

from transformer.config import TransformerConfig


@pytest.mark.parametrize("kwargs, field", [
    (dict(d_model=30, n_heads=4), "d_model"),
    (dict(d_model=32, n_heads=4, n_kv_heads=3), "n_kv_heads"),
    (dict(n_kv_heads=0), "n_kv_heads"),
    (dict(vocab_size=-5), "vocab_size"),
    (dict(d_model=-512), "d_model"),
    (dict(n_heads=0), "n_heads"),
    (dict(d_ff=-1), "d_ff"),
    (dict(max_len=0), "max_len"),
    (dict(n_decoder_layers=-2), "n_decoder_layers"),
    (dict(n_encoder_layers=-1), "n_encoder_layers"),
    (dict(n_encoder_layers=0), "n_encoder_layers"),  # an encoder-decoder needs an encoder
    (dict(arch="decoder-only", n_encoder_layers=3), "n_encoder_layers"),
    (dict(arch="encoder-ish"), "arch"),
    (dict(arch="encoder-only"), "n_decoder_layers"),  # an encoder-only model has no decoder layers
    (dict(arch="encoder-only", n_decoder_layers=0, n_encoder_layers=0), "n_encoder_layers"),
    (dict(dropout=1.5), "dropout"),
    (dict(dropout=-0.1), "dropout"),
    (dict(dropout=1.0), "dropout"),
    (dict(pos_encoding="rotary"), "pos_encoding"),
    (dict(activation="swish"), "activation"),
    (dict(vocab_size=10, pad_id=10), "pad_id"),
    (dict(pad_id=-1), "pad_id"),
    (dict(bos_id=1000), "bos_id"),
    (dict(eos_id=2.0), "eos_id"),
    (dict(vocab_size=True), "vocab_size"),  # a bool is not a size
    (dict(dropout="0.1"), "dropout"),  # a string from a form is refused by name, not with a TypeError
    (dict(n_encoder_layers=True), "n_encoder_layers"),
    (dict(pad_id=False), "pad_id"),
    (dict(activation="gelu_new"), "activation"),  # Hugging Face's name; ours is "gelu_tanh"
    (dict(attention_only="yes"), "attention_only"),  # a truthy string is not a switch
    (dict(attention_only=1), "attention_only"),
    (dict(layer_norm_eps=0.0), "layer_norm_eps"),
    (dict(layer_norm_eps=-1e-5), "layer_norm_eps"),
    (dict(layer_norm_eps=float("nan")), "layer_norm_eps"),
    (dict(layer_norm_eps=float("inf")), "layer_norm_eps"),
    (dict(layer_norm_eps="1e-5"), "layer_norm_eps"),
    (dict(layer_norm_eps=True), "layer_norm_eps"),
    (dict(scale_embeddings="no"), "scale_embeddings"),
    (dict(scale_embeddings=0), "scale_embeddings"),
])
def test_invalid_value_raises_value_error_naming_the_field(kwargs, field):
    """Invariant: every bad value raises ValueError whose message starts with the field's name (the app shows it)."""
    with pytest.raises(ValueError, match=rf"^{field}\b"):
        TransformerConfig(**kwargs)


def test_defaults_are_the_papers_base_model():
    """Oracle: Table 3 of the paper, row "base": N=6, d_model=512, d_ff=2048, h=8, d_k=d_v=64, P_drop=0.1."""
    cfg = TransformerConfig()
    assert (cfg.arch, cfg.d_model, cfg.d_ff, cfg.n_heads, cfg.d_k, cfg.dropout) == (
        "encoder-decoder", 512, 2048, 8, 64, 0.1)
    assert (cfg.n_encoder_layers, cfg.n_decoder_layers) == (6, 6)
    assert cfg.n_kv_heads == 8  # None means plain multi-head attention
    assert cfg.norm_first is False and cfg.pos_encoding == "sinusoidal" and cfg.tie_embeddings is True


def test_decoder_only_defaults_to_no_encoder_layers():
    """Invariant: n_encoder_layers=None resolves to 0 for a decoder-only model (and to 6 for encoder-decoder)."""
    assert TransformerConfig(arch="decoder-only").n_encoder_layers == 0
    assert TransformerConfig(arch="encoder-decoder").n_encoder_layers == 6


@pytest.mark.parametrize("kwargs", [
    {},
    dict(arch="decoder-only", vocab_size=65, d_model=64, n_heads=4, n_kv_heads=1, n_decoder_layers=3,
         pos_encoding="learned", norm_first=True, activation="gelu", tie_embeddings=False, max_len=128),
    dict(arch="decoder-only", activation="gelu_tanh", layer_norm_eps=1e-2, scale_embeddings=False),
    dict(d_model=96, n_heads=6, n_kv_heads=2, dropout=0.0, pad_id=3, bos_id=4, eos_id=5),
])
def test_to_dict_from_dict_round_trip_through_json(kwargs):
    """Invariant: from_dict(json(to_dict(cfg))) == cfg, so a checkpoint's config.json rebuilds the same model."""
    cfg = TransformerConfig(**kwargs)
    again = TransformerConfig.from_dict(json.loads(json.dumps(cfg.to_dict())))
    assert again == cfg
    assert again.to_dict() == cfg.to_dict()


def test_from_dict_reads_an_older_config_without_the_gpt2_fields():
    """Invariant: a config.json written before activation "gelu_tanh", layer_norm_eps and scale_embeddings existed
    loads with the behaviour it was trained with: torch's LayerNorm eps 1e-5 and embeddings x sqrt(d_model)."""
    old = {k: v for k, v in TransformerConfig(d_model=64, n_heads=4).to_dict().items()
           if k not in ("layer_norm_eps", "scale_embeddings")}
    cfg = TransformerConfig.from_dict(old)
    assert cfg.layer_norm_eps == 1e-5 and cfg.scale_embeddings is True


def test_gpt2_style_special_ids_mean_no_padding_token():
    """Invariant: pad_id equal to bos_id or eos_id (GPT-2's single <|endoftext|>) means no padding token; distinct
    ids (our tokenizers' <pad>, <s>, </s>) mean padding."""
    assert TransformerConfig().has_padding
    assert not TransformerConfig(vocab_size=50257, pad_id=50256, bos_id=50256, eos_id=50256).has_padding
    assert not TransformerConfig(pad_id=2, bos_id=1, eos_id=2).has_padding


def test_from_dict_refuses_unknown_keys_by_name():
    """Invariant: a key that is not a field (a typo, or a newer format) is refused, and the message names it."""
    data = {**TransformerConfig().to_dict(), "n_layers": 4, "d_embd": 8}
    with pytest.raises(ValueError, match="unknown config keys: d_embd, n_layers"):
        TransformerConfig.from_dict(data)


def test_from_dict_validates_like_the_constructor():
    """Invariant: a dict with a bad value is refused with the same field-naming ValueError as the constructor."""
    with pytest.raises(ValueError, match=r"^d_model\b"):
        TransformerConfig.from_dict({**TransformerConfig().to_dict(), "d_model": 100})
