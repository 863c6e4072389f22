"""The Llama family (Touvron et al. 2023; SmolLM2 is one) in the from-scratch decoder, from the Hugging Face layout.

A Llama is the decoder-only stack with these config choices, each a small module of its own:
pre-norm with RMSNorm (`norm="rms"`, transformer/norms.py) and a final RMSNorm; RoPE on queries and keys in the
pair layout of `transformers` (`rope_layout="halves"`, theta's base `rope_theta`, transformer/positions/rotary.py);
grouped-query attention (`n_kv_heads` key/value heads); the SwiGLU feed-forward (`ffn="swiglu"`,
transformer/gated_feedforward.py); no biases anywhere; embeddings not scaled by sqrt(d_model); the output layer
tied to the embeddings or not (`tie_word_embeddings`). The tokenizer is tokenizer.json (byte-level BPE).
"""
from __future__ import annotations

from pathlib import Path

import torch
from torch import Tensor

from ..checkpoint import CheckpointError
from ..config import TransformerConfig
from ..model import Transformer
from ..tokenization import GPT2BPETokenizer
from .family import Family, register, require_epsilon, require_positive_ints, require_token_id, require_values
from .weights import check_model_size, model_from_state, read_weights


def check_llama_config(hf: dict) -> None:
    """Raise CheckpointError naming the field when a config.json is not a Llama this model can run."""
    if hf.get("model_type") != "llama":
        raise CheckpointError(f"model_type: expected 'llama', got {hf.get('model_type')!r}")
    require_positive_ints(hf, "hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size",
                          "vocab_size", "max_position_embeddings")
    d, heads = hf["hidden_size"], hf["num_attention_heads"]
    kv_heads = hf.get("num_key_value_heads") or heads
    require_positive_ints({"num_key_value_heads": kv_heads}, "num_key_value_heads")
    if d % heads or heads % kv_heads:
        raise CheckpointError(f"num_attention_heads: hidden_size={d}, num_attention_heads={heads}, "
                              f"num_key_value_heads={kv_heads} do not divide evenly")
    if hf.get("head_dim") not in (None, d // heads):
        raise CheckpointError(f"head_dim: only hidden_size / num_attention_heads = {d // heads} is supported, got "
                              f"{hf['head_dim']!r}")
    if (d // heads) % 2:
        raise CheckpointError(f"num_attention_heads: RoPE needs an even head size, got {d // heads}")
    require_epsilon(hf, "rms_norm_eps", 1e-6)
    theta = rope_theta(hf)
    if not isinstance(theta, (int, float)) or isinstance(theta, bool) or not 1 < theta < float("inf"):
        raise CheckpointError(f"rope_theta: must be a finite number > 1, got {theta!r}")
    rope = hf.get("rope_parameters") or {}
    if not isinstance(rope, dict) or rope.get("rope_type", "default") != "default":
        raise CheckpointError(f"rope_parameters: only the default rope_type is supported, got {rope!r}")
    require_values(hf, {"hidden_act": ("silu", "silu"), "rope_scaling": (None, None), "pretraining_tp": (1, 1),
                        "attention_bias": (False, False), "mlp_bias": (False, False)})
    if not isinstance(hf.get("tie_word_embeddings", False), bool):
        raise CheckpointError(f"tie_word_embeddings: must be true or false, got {hf['tie_word_embeddings']!r}")
    for name in ("bos_token_id", "eos_token_id"):
        require_token_id(hf, name, 0)


def rope_theta(hf: dict):
    """RoPE's base: config.json's rope_theta (transformers 4) or rope_parameters.rope_theta (transformers 5)."""
    rope = hf.get("rope_parameters")
    return rope.get("rope_theta", 10000.0) if isinstance(rope, dict) else hf.get("rope_theta", 10000.0)


def convert_llama_config(hf: dict) -> TransformerConfig:
    """A Llama's config.json (passed check_llama_config) -> our TransformerConfig, one rule per comment."""
    return TransformerConfig(
        arch="decoder-only", vocab_size=hf["vocab_size"], d_model=hf["hidden_size"],
        n_heads=hf["num_attention_heads"],
        n_kv_heads=hf.get("num_key_value_heads") or hf["num_attention_heads"],  # GQA: fewer key/value heads
        n_decoder_layers=hf["num_hidden_layers"], d_ff=hf["intermediate_size"],
        max_len=hf["max_position_embeddings"],
        dropout=float(hf.get("attention_dropout", 0.0)),
        norm_first=True, norm="rms",  # x + attn(RMSNorm(x)), x + mlp(RMSNorm(x)), then the final RMSNorm
        layer_norm_eps=float(hf.get("rms_norm_eps", 1e-6)),
        ffn="swiglu", ffn_bias=False,  # mlp: down_proj(silu(gate_proj(x)) * up_proj(x)), no biases
        attention_bias=False,  # q_proj, k_proj, v_proj, o_proj without biases
        pos_encoding="rope", rope_layout="halves",  # transformers' rotate_half: pairs (x_i, x_i+d_k/2)
        rope_theta=float(rope_theta(hf)),
        scale_embeddings=False,  # embed_tokens(ids), no sqrt(d_model) factor
        tie_embeddings=hf.get("tie_word_embeddings", False),  # SmolLM2: lm_head is embed_tokens
        # one end-of-text token that also starts texts (SmolLM2: id 0); pad_id = eos_id: no padding token
        bos_id=hf.get("bos_token_id", 0), eos_id=hf.get("eos_token_id", 0), pad_id=hf.get("eos_token_id", 0),
    )


def llama_shapes(hf: dict) -> dict[str, tuple[int, ...]]:
    """The tensors a Llama with config `hf` stores and their shapes."""
    d, ff, V = hf["hidden_size"], hf["intermediate_size"], hf["vocab_size"]
    d_k = d // hf["num_attention_heads"]
    kv = (hf.get("num_key_value_heads") or hf["num_attention_heads"]) * d_k
    shapes = {"model.embed_tokens.weight": (V, d), "model.norm.weight": (d,)}
    if not hf.get("tie_word_embeddings", False):
        shapes["lm_head.weight"] = (V, d)
    for i in range(hf["num_hidden_layers"]):
        layer = f"model.layers.{i}."
        shapes.update({layer + "self_attn.q_proj.weight": (d, d), layer + "self_attn.k_proj.weight": (kv, d),
                       layer + "self_attn.v_proj.weight": (kv, d), layer + "self_attn.o_proj.weight": (d, d),
                       layer + "mlp.gate_proj.weight": (ff, d), layer + "mlp.up_proj.weight": (ff, d),
                       layer + "mlp.down_proj.weight": (d, ff),
                       layer + "input_layernorm.weight": (d,), layer + "post_attention_layernorm.weight": (d,)})
    return shapes


def convert_llama(hf: dict, tensors: dict[str, Tensor]) -> tuple[TransformerConfig, dict[str, Tensor]]:
    """A Llama's config.json and tensors (names and shapes as llama_shapes says) -> our config and state dict."""
    config = convert_llama_config(hf)
    t = {name: tensor.float() for name, tensor in tensors.items()}
    sd = {"embed.weight": t["model.embed_tokens.weight"], "decoder_norm.weight": t["model.norm.weight"]}
    sd["lm_head.weight"] = sd["embed.weight"] if config.tie_embeddings else t["lm_head.weight"]
    for i in range(config.n_decoder_layers):
        hf_layer, ours = f"model.layers.{i}.", f"decoder.{i}."
        attn = hf_layer + "self_attn."
        # q_proj, k_proj, v_proj are nn.Linear (out, in) like ours: stacked as rows, they are in_proj [W^Q; W^K; W^V]
        sd[ours + "self_attn.in_proj.weight"] = torch.cat([t[attn + p + ".weight"] for p in ("q_proj", "k_proj",
                                                                                              "v_proj")])
        sd[ours + "self_attn.out_proj.weight"] = t[attn + "o_proj.weight"]  # W^O
        for hf_name, our_name in (("gate_proj", "w_gate"), ("up_proj", "w_up"), ("down_proj", "w_down")):
            sd[f"{ours}ffn.{our_name}.weight"] = t[f"{hf_layer}mlp.{hf_name}.weight"]
        sd[ours + "sublayers.0.norm.weight"] = t[hf_layer + "input_layernorm.weight"]  # before attention
        sd[ours + "sublayers.1.norm.weight"] = t[hf_layer + "post_attention_layernorm.weight"]  # before the MLP
    return config, sd


def llama_model(hf: dict, tensors: dict[str, Tensor]) -> Transformer:
    """Our Transformer holding a Llama's weights (CPU, train mode), from its config and tensors (convert_llama)."""
    return model_from_state(*convert_llama(hf, tensors))


def build_llama(directory: Path, hf: dict) -> tuple[Transformer, GPT2BPETokenizer]:
    """(our Transformer holding the Llama of `directory`, its tokenizer); `hf` passed check_llama_config."""
    check_model_size(directory, convert_llama_config(hf))
    tokenizer = llama_tokenizer(directory)
    if tokenizer.vocab_size > hf["vocab_size"]:
        raise CheckpointError(f"{directory}: tokenizer has {tokenizer.vocab_size} tokens, more than config.json's "
                              f"vocab_size={hf['vocab_size']}")
    shapes = llama_shapes(hf)
    tensors = read_weights(directory / "model.safetensors", shapes,
                           optional=lambda name, shape: name == "lm_head.weight"
                           and shape == shapes["model.embed_tokens.weight"])  # a tied head stored twice
    return llama_model(hf, tensors), tokenizer


def llama_tokenizer_files(directory: Path) -> list[Path]:
    if not (directory / "tokenizer.json").is_file():
        raise CheckpointError(f"{directory}: no tokenizer.json")
    return [directory / "tokenizer.json"]


def llama_tokenizer(directory: Path) -> GPT2BPETokenizer:
    """tokenizer.json as a byte-level BPE (SmolLM2's, Llama 3's); a SentencePiece-style one is refused."""
    file = llama_tokenizer_files(directory)[0]
    try:
        return GPT2BPETokenizer.from_file(file)
    except Exception as e:  # tokenizers' parse errors, and our ValueError for a tokenizer that is not byte-level
        raise CheckpointError(f"{file}: not a byte-level BPE tokenizer this loader reads: {e}") from None


LLAMA = register(Family("llama", "Llama", check_llama_config, build_llama, llama_tokenizer_files))
