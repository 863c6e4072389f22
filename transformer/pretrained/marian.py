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
from torch import Tensor

from ..checkpoint import CheckpointError
from ..config import TransformerConfig
from ..model import Transformer
from ..positions.sinusoidal import sinusoidal_table
from ..tokenization_marian import FILES, MarianTokenizer
from .family import Family, register
from .weights import check_model_size, model_from_state, read_json, read_weights

MARIAN_ACTIVATIONS = {"swish": "silu", "silu": "silu", "gelu": "gelu", "relu": "relu", "gelu_new": "gelu_tanh"}
EMBEDDINGS = ("model.shared.weight", "model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight",
              "lm_head.weight")  # one matrix, stored under any of these names (the first is save_pretrained's)
POSITIONS = ("model.encoder.embed_positions.weight", "model.decoder.embed_positions.weight")  # older files store them
SIZES = ("d_model", "encoder_layers", "decoder_layers", "encoder_attention_heads", "decoder_attention_heads",
         "encoder_ffn_dim", "decoder_ffn_dim", "max_position_embeddings", "vocab_size")


def _token_id(hf: dict, name: str, default=None) -> int:
    value = hf.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < hf["vocab_size"]:
        raise CheckpointError(f"{name}: must be a token id below vocab_size={hf['vocab_size']}, got {value!r}")
    return value


def check_marian_config(hf: dict) -> None:
    """Raise CheckpointError naming the field when a config.json is not a Marian this model can run."""
    if hf.get("model_type") != "marian":
        raise CheckpointError(f"model_type: expected 'marian', got {hf.get('model_type')!r}")
    for name in SIZES:
        value = hf.get(name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise CheckpointError(f"{name}: must be a positive integer, got {value!r}")
    for ours, (a, b) in {"n_heads": ("encoder_attention_heads", "decoder_attention_heads"),
                         "d_ff": ("encoder_ffn_dim", "decoder_ffn_dim")}.items():
        if hf[a] != hf[b]:
            raise CheckpointError(f"{b}: {hf[b]} differs from {a}={hf[a]}; this model has one {ours} for both stacks")
    if hf["d_model"] % hf["encoder_attention_heads"]:
        raise CheckpointError(f"d_model: {hf['d_model']} is not divisible by "
                              f"encoder_attention_heads={hf['encoder_attention_heads']}")
    activation = hf.get("activation_function", "gelu")
    if activation not in MARIAN_ACTIVATIONS:
        raise CheckpointError(f"activation_function: must be one of {sorted(MARIAN_ACTIVATIONS)}, got {activation!r}")
    for name, supported in (("share_encoder_decoder_embeddings", True), ("tie_word_embeddings", True),
                            ("is_decoder", False), ("is_encoder_decoder", True)):
        if hf.get(name, supported) != supported:
            raise CheckpointError(f"{name}: only {str(supported).lower()} is supported, got {hf[name]!r}")
    if hf.get("decoder_vocab_size") not in (None, hf["vocab_size"]):
        raise CheckpointError(f"decoder_vocab_size: must equal vocab_size={hf['vocab_size']} (one shared vocabulary), "
                              f"got {hf['decoder_vocab_size']!r}")
    if not isinstance(hf.get("scale_embedding", False), bool):
        raise CheckpointError(f"scale_embedding: must be true or false, got {hf['scale_embedding']!r}")
    for name in ("pad_token_id", "eos_token_id", "decoder_start_token_id"):
        _token_id(hf, name)


def convert_marian_config(hf: dict) -> TransformerConfig:
    """Our TransformerConfig for a Marian config.json that passed check_marian_config."""
    eos = hf["eos_token_id"]
    bos = hf.get("bos_token_id")
    return TransformerConfig(
        arch="encoder-decoder", vocab_size=hf["vocab_size"], d_model=hf["d_model"],
        n_heads=hf["encoder_attention_heads"], n_encoder_layers=hf["encoder_layers"],
        n_decoder_layers=hf["decoder_layers"], d_ff=hf["encoder_ffn_dim"], dropout=float(hf.get("dropout", 0.1)),
        max_len=hf["max_position_embeddings"],  # the sinusoidal table's length
        pos_encoding="sinusoidal", sinusoidal_layout="halves",  # sin(pos w_i) in column i, cos(pos w_i) in d/2 + i
        norm_first=False,  # post-norm, the paper's: LayerNorm(x + Sublayer(x)), no final LayerNorm
        activation=MARIAN_ACTIVATIONS[hf.get("activation_function", "gelu")],  # "swish" is SiLU
        layer_norm_eps=1e-5,  # Marian's LayerNorms keep torch's default
        scale_embeddings=hf.get("scale_embedding", False),  # x sqrt(d_model), as the paper (opus-mt: true)
        tie_embeddings=True, attention_bias=True, final_logits_bias=True,
        # </s> ends a text; Marian has no <s> (bos_token_id null): bos_id = eos_id, so nothing is banned for it.
        # The decoder starts from the pad token, which generation never emits (Marian's bad_words_ids [[pad]]).
        pad_id=hf["pad_token_id"], eos_id=eos, bos_id=bos if isinstance(bos, int) and 0 <= bos < hf["vocab_size"]
        else eos, decoder_start_id=hf["decoder_start_token_id"],
    )


def marian_shapes(hf: dict) -> dict[str, tuple[int, ...]]:
    """The tensors every Marian with config `hf` stores, besides its embedding (any of EMBEDDINGS) and the
    optional final_logits_bias and position tables, and their shapes."""
    d, ff = hf["d_model"], hf["encoder_ffn_dim"]

    def attention(prefix: str) -> dict[str, tuple[int, ...]]:
        return {f"{prefix}.{p}_proj.{w}": ((d, d) if w == "weight" else (d,))
                for p in ("q", "k", "v", "out") for w in ("weight", "bias")}

    def norm(prefix: str) -> dict[str, tuple[int, ...]]:
        return {f"{prefix}.weight": (d,), f"{prefix}.bias": (d,)}

    def ffn(prefix: str) -> dict[str, tuple[int, ...]]:
        return {f"{prefix}.fc1.weight": (ff, d), f"{prefix}.fc1.bias": (ff,), f"{prefix}.fc2.weight": (d, ff),
                f"{prefix}.fc2.bias": (d,)}

    shapes = {}
    for i in range(hf["encoder_layers"]):
        p = f"model.encoder.layers.{i}"
        shapes |= attention(p + ".self_attn") | norm(p + ".self_attn_layer_norm") | ffn(p) | norm(p + ".final_layer_norm")
    for i in range(hf["decoder_layers"]):
        p = f"model.decoder.layers.{i}"
        shapes |= attention(p + ".self_attn") | norm(p + ".self_attn_layer_norm") | attention(p + ".encoder_attn") \
            | norm(p + ".encoder_attn_layer_norm") | ffn(p) | norm(p + ".final_layer_norm")
    return shapes


def convert_marian(hf: dict, tensors: dict[str, Tensor]) -> tuple[TransformerConfig, dict[str, Tensor]]:
    """Marian's config.json and tensors -> our TransformerConfig and state dict, one rule per comment."""
    config = convert_marian_config(hf)
    g = {name: t.float() for name, t in tensors.items()}
    stored = [g.pop(name) for name in EMBEDDINGS if name in g]
    if not stored:
        raise CheckpointError(f"model.safetensors: no embedding (one of {', '.join(EMBEDDINGS)})")
    if any(not torch.equal(stored[0], t) for t in stored[1:]):
        raise CheckpointError("model.safetensors: the encoder, decoder and output embeddings differ; this model "
                              "shares one (share_encoder_decoder_embeddings, tie_word_embeddings)")
    table = sinusoidal_table(config.max_len, config.d_model, "halves")
    for name in POSITIONS:  # a stored table is checked against the one we compute, then dropped
        if name in g and not torch.allclose(g.pop(name), table, atol=1e-4):
            raise CheckpointError(f"model.safetensors: {name} is not Marian's sinusoidal table (sines, then cosines)")

    def take(name: str) -> Tensor:
        if name not in g:
            raise CheckpointError(f"model.safetensors: missing tensor {name!r}")
        return g.pop(name)

    def attention(theirs: str, ours: str) -> dict[str, Tensor]:
        # q_proj, k_proj, v_proj stacked row-wise: our in_proj [W^Q; W^K; W^V]; out_proj is W^O
        return {f"{ours}.in_proj.{w}": torch.cat([take(f"{theirs}.{p}_proj.{w}") for p in "qkv"])
                for w in ("weight", "bias")} | {f"{ours}.out_proj.{w}": take(f"{theirs}.out_proj.{w}")
                                               for w in ("weight", "bias")}

    def sublayers(theirs: str, ours: str, norms: tuple[str, ...]) -> dict[str, Tensor]:
        # fc1 = W_1, fc2 = W_2; each post-norm LayerNorm closes our sub-layer of the same rank
        out = {f"{ours}.ffn.w_{n}.{w}": take(f"{theirs}.fc{n}.{w}") for n in (1, 2) for w in ("weight", "bias")}
        for n, norm in enumerate(norms):
            out |= {f"{ours}.sublayers.{n}.norm.{w}": take(f"{theirs}.{norm}.{w}") for w in ("weight", "bias")}
        return out

    sd = {"embed.weight": stored[0], "lm_head.weight": stored[0]}  # one matrix: encoder, decoder, output layer
    sd["lm_head.bias"] = g.pop("final_logits_bias", torch.zeros(1, config.vocab_size)).reshape(-1)  # absent = 0
    for i in range(config.n_encoder_layers):
        theirs, ours = f"model.encoder.layers.{i}", f"encoder.{i}"
        sd |= attention(theirs + ".self_attn", ours + ".self_attn")
        sd |= sublayers(theirs, ours, ("self_attn_layer_norm", "final_layer_norm"))
    for i in range(config.n_decoder_layers):
        theirs, ours = f"model.decoder.layers.{i}", f"decoder.{i}"
        sd |= attention(theirs + ".self_attn", ours + ".self_attn")
        sd |= attention(theirs + ".encoder_attn", ours + ".cross_attn")  # encoder_attn: attention over the source
        sd |= sublayers(theirs, ours, ("self_attn_layer_norm", "encoder_attn_layer_norm", "final_layer_norm"))
    if g:
        raise CheckpointError(f"model.safetensors: unexpected tensors for this Marian: {sorted(g)[:5]}")
    return config, sd


def marian_model(hf: dict, tensors: dict[str, Tensor]) -> Transformer:
    """Our Transformer holding a Marian's weights (CPU, train mode), from its config and tensors."""
    return model_from_state(*convert_marian(hf, tensors))


def marian_tokenizer_files(directory: Path) -> list[Path]:
    missing = [name for name in FILES if not (directory / name).is_file()]
    if missing:
        raise CheckpointError(f"{directory}: no Marian tokenizer (missing {', '.join(missing)})")
    config = directory / "tokenizer_config.json"
    if config.is_file() and read_json(config).get("separate_vocabs"):
        raise CheckpointError(f"{config}: separate source and target vocabularies are not supported")
    return [directory / name for name in FILES]


def marian_tokenizer(directory: Path) -> MarianTokenizer:
    marian_tokenizer_files(directory)
    try:
        return MarianTokenizer.from_directory(directory)
    except Exception as e:  # sentencepiece's parse errors, bad JSON, our own ValueError: the files are bad
        raise CheckpointError(f"{directory}: bad Marian tokenizer files: {e}") from None


def build_marian(directory: Path, hf: dict) -> tuple[Transformer, MarianTokenizer]:
    """(our Transformer holding the Marian of `directory`, its tokenizer); `hf` passed check_marian_config."""
    config = convert_marian_config(hf)
    check_model_size(directory, config)
    V, d = config.vocab_size, config.d_model
    optional = {name: (V, d) for name in EMBEDDINGS} | {name: (config.max_len, d) for name in POSITIONS} \
        | {"final_logits_bias": (1, V)}
    tensors = read_weights(directory / "model.safetensors", marian_shapes(hf),
                           optional=lambda name, shape: optional.get(name) == shape)
    model = marian_model(hf, tensors)
    tokenizer = marian_tokenizer(directory)
    if tokenizer.vocab_size != V:
        raise CheckpointError(f"{directory}: vocab.json has {tokenizer.vocab_size} tokens, config.json says "
                              f"vocab_size={V}")
    if (tokenizer.pad_id, tokenizer.eos_id) != (config.pad_id, config.eos_id):
        raise CheckpointError(f"{directory}: vocab.json's <pad> and </s> are {tokenizer.pad_id} and "
                              f"{tokenizer.eos_id}, config.json says {config.pad_id} and {config.eos_id}")
    return model, tokenizer


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


MARIAN = register(Family("marian", "Marian", check_marian_config, build_marian, marian_tokenizer_files,
                          arch="encoder-decoder"))
