"""Marian (Junczys-Dowmunt et al., 2018; the OPUS-MT translators, e.g. Helsinki-NLP/opus-mt-en-es) in the
from-scratch encoder-decoder, from the Hugging Face layout.

Marian is the paper's Transformer, trained on OPUS: 6 encoder and 6 decoder layers, d_model 512, 8 heads, post-norm
LayerNorm(x + Sublayer(x)), fixed sinusoidal positions, one embedding shared by the encoder, the decoder and the
output layer, scaled by sqrt(d_model). Its own choices are plain config fields here: SiLU in the feed-forward
network (`activation="silu"`, its "swish"), the sinusoidal table's sines in the first half of the dimensions and
cosines in the second (`sinusoidal_layout="halves"`), biases on every projection (`attention_bias`), a bias per
vocabulary entry on the logits (`final_logits_bias`), and a decoder that starts from the pad token
(`decoder_start_id`) and never emits it. Tokens come from two SentencePiece models over one vocab.json
(transformer/tokenization_marian.py). Marian's dropout on attention weights and inside the feed-forward network is 0
where ours uses `dropout`: the same model at inference, not in training.
"""
from __future__ import annotations

import re
from pathlib import Path

import torch

from ..checkpoint import CheckpointError
from ..positions.sinusoidal import sinusoidal_table
from ..tokenization_marian import FILES
from .family import register
from .readers import sentencepiece_pair
from .spec import Checked, Family, Layers, Read, Tokenizer, one_row, qkv_rows, same
from .weights import read_json

ACTIVATIONS = {"swish": "silu", "silu": "silu", "gelu": "gelu", "relu": "relu", "gelu_new": "gelu_tanh"}


def attention(theirs: str, ours: str) -> dict:
    """q_proj, k_proj, v_proj stacked row-wise: our in_proj [W^Q; W^K; W^V]; out_proj is W^O."""
    return {f"{ours}.in_proj.{w}": qkv_rows(*(f"{theirs}.{p}_proj.{w}" for p in "qkv")) for w in ("weight", "bias")} \
        | {f"{ours}.out_proj.{w}": same(f"{theirs}.out_proj.{w}") for w in ("weight", "bias")}


def sublayers(*norms: str) -> dict:
    """fc1 = W_1, fc2 = W_2; each post-norm LayerNorm closes our sub-layer of the same rank."""
    return {f"ffn.w_{n}.{w}": same(f"fc{n}.{w}") for n in (1, 2) for w in ("weight", "bias")} \
        | {f"sublayers.{n}.norm.{w}": same(f"{norm}.{w}") for n, norm in enumerate(norms) for w in ("weight", "bias")}


def check_tokenizer(directory: Path) -> None:
    config = directory / "tokenizer_config.json"
    if config.is_file() and read_json(config).get("separate_vocabs"):
        raise CheckpointError(f"{config}: separate source and target vocabularies are not supported")


MARIAN = register(Family(
    model_type="marian", name="Marian", arch="encoder-decoder",
    config={
        "vocab_size": Read("vocab_size"), "d_model": Read("d_model"),
        "n_heads": Read("encoder_attention_heads"), "n_encoder_layers": Read("encoder_layers"),
        "n_decoder_layers": Read("decoder_layers"), "d_ff": Read("encoder_ffn_dim"),
        "dropout": Read("dropout", 0.1, "number"),
        "max_len": Read("max_position_embeddings"),  # the sinusoidal table's length
        "pos_encoding": "sinusoidal", "sinusoidal_layout": "halves",  # sin(pos w_i) in column i, cos in d/2 + i
        "norm_first": False,  # post-norm, the paper's: LayerNorm(x + Sublayer(x)), no final LayerNorm
        "activation": Read("activation_function", "gelu", choices=ACTIVATIONS),  # "swish" is SiLU
        "layer_norm_eps": 1e-5,  # Marian's LayerNorms keep torch's default
        "scale_embeddings": Read("scale_embedding", False, "flag"),  # x sqrt(d_model), as the paper (opus-mt: true)
        "tie_embeddings": True, "attention_bias": True, "final_logits_bias": True,
        # </s> ends a text; Marian has no <s> (bos_token_id null): bos_id = eos_id, so nothing is banned for it.
        # The decoder starts from the pad token, which generation never emits (Marian's bad_words_ids [[pad]]).
        "pad_id": Read("pad_token_id", kind="id"), "eos_id": Read("eos_token_id", kind="id"),
        "bos_id": Read("bos_token_id", None, "id", otherwise=lambda ours: ours["eos_id"]),
        "decoder_start_id": Read("decoder_start_token_id", kind="id"),
    },
    supported={"share_encoder_decoder_embeddings": True, "tie_word_embeddings": True, "is_decoder": False,
               "is_encoder_decoder": True},
    # one n_heads, d_ff and vocabulary for both stacks
    equal_to_ours={"decoder_attention_heads": "n_heads", "decoder_ffn_dim": "d_ff", "decoder_vocab_size": "vocab_size"},
    weights={  # one matrix for the encoder, the decoder and the output layer, stored under any of these names
        "embed.weight": same("model.shared.weight", "model.encoder.embed_tokens.weight",
                             "model.decoder.embed_tokens.weight"),
        "lm_head.weight": same("lm_head.weight"),
        "lm_head.bias": one_row("final_logits_bias", absent=lambda c: torch.zeros(c.vocab_size))},  # absent = 0
    layers=(Layers("encoder.{i}.", "model.encoder.layers.{i}.", "n_encoder_layers",
                   attention("self_attn", "self_attn") | sublayers("self_attn_layer_norm", "final_layer_norm")),
            Layers("decoder.{i}.", "model.decoder.layers.{i}.", "n_decoder_layers",
                   attention("self_attn", "self_attn")
                   | attention("encoder_attn", "cross_attn")  # encoder_attn: attention over the source
                   | sublayers("self_attn_layer_norm", "encoder_attn_layer_norm", "final_layer_norm"))),
    # older files store the position tables: each is checked against the one we compute, then dropped
    checked=(Checked(("model.encoder.embed_positions.weight", "model.decoder.embed_positions.weight"),
                     lambda c: sinusoidal_table(c.max_len, c.d_model, "halves"),
                     "Marian's sinusoidal table (sines, then cosines)"),),
    tokenizer=Tokenizer((FILES,), sentencepiece_pair, check=check_tokenizer),
    agrees_with_tokenizer=("pad_id", "eos_id"),  # vocab.json's <pad> and </s>
))


OPUS_MT_NAME = re.compile(r"opus-mt-([a-z]+)-([a-z]+)(?:\s|$)")  # Helsinki-NLP/opus-mt-{source}-{target}


def marian_languages(directory: str | Path, repo_name: str = "") -> tuple[str, str] | None:
    """(source, target) language codes of a cached Marian: tokenizer_config.json's source_lang and target_lang
    (as transformers writes them), else the opus-mt-{source}-{target} of its name (the repo's, or the list's);
    None when neither says
    (a multilingual model's target is chosen per sentence)."""
    config = Path(directory) / "tokenizer_config.json"
    hf = read_json(config) if config.is_file() else {}
    source, target = hf.get("source_lang"), hf.get("target_lang")
    if isinstance(source, str) and isinstance(target, str):
        return source, target
    named = OPUS_MT_NAME.search(repo_name)
    return named.groups() if named else None

