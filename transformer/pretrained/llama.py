"""The Llama family (Touvron et al. 2023; SmolLM2 is one) in the from-scratch decoder: the spec of its Hugging Face
layout.

A Llama is the decoder-only stack with these config choices, each a small module of its own:
pre-norm with RMSNorm (`norm="rms"`, transformer/norms.py) and a final RMSNorm; RoPE on queries and keys in the
pair layout of `transformers` (`rope_layout="halves"`, theta's base `rope_theta`, transformer/positions/rotary.py);
grouped-query attention (`n_kv_heads` key/value heads); the SwiGLU feed-forward (`ffn="swiglu"`,
transformer/gated_feedforward.py); no biases anywhere; embeddings not scaled by sqrt(d_model); the output layer
tied to the embeddings or not (`tie_word_embeddings`). The tokenizer is tokenizer.json (byte-level BPE).
"""
from __future__ import annotations

from .family import register
from .readers import byte_level_bpe
from .spec import Family, Layers, Ours, Read, Tokenizer, qkv_rows, same

LLAMA = register(Family(
    model_type="llama", name="Llama", arch="decoder-only",
    config={
        "vocab_size": Read("vocab_size"), "d_model": Read("hidden_size"), "n_heads": Read("num_attention_heads"),
        "n_kv_heads": Read("num_key_value_heads", None),  # GQA: fewer key/value heads; null: as many as queries
        "n_decoder_layers": Read("num_hidden_layers"), "d_ff": Read("intermediate_size"),
        "max_len": Read("max_position_embeddings"),
        "dropout": Read("attention_dropout", 0.0, "number"),
        "norm_first": True, "norm": "rms",  # x + attn(RMSNorm(x)), x + mlp(RMSNorm(x)), then the final RMSNorm
        "layer_norm_eps": Read("rms_norm_eps", 1e-6, "number"),
        "ffn": "swiglu", "ffn_bias": False,  # mlp: down_proj(silu(gate_proj(x)) * up_proj(x)), no biases
        "attention_bias": False,  # q_proj, k_proj, v_proj, o_proj without biases
        "pos_encoding": "rope", "rope_layout": "halves",  # transformers' rotate_half: pairs (x_i, x_i+d_k/2)
        # RoPE's base: rope_parameters.rope_theta (transformers 5) or rope_theta (transformers 4)
        "rope_theta": Read(("rope_parameters.rope_theta", "rope_theta"), 10000.0, "number"),
        "scale_embeddings": False,  # embed_tokens(ids), no sqrt(d_model) factor
        "tie_embeddings": Read("tie_word_embeddings", False, "flag"),  # SmolLM2: lm_head is embed_tokens
        # one end-of-text token that also starts texts (SmolLM2: id 0); pad_id = eos_id: no padding token
        "bos_id": Read("bos_token_id", 0, "id"), "eos_id": Read("eos_token_id", 0, "id"), "pad_id": Ours("eos_id"),
    },
    supported={"hidden_act": "silu", "rope_scaling": None, "rope_parameters.rope_type": "default",
               "pretraining_tp": 1, "attention_bias": False, "mlp_bias": False},
    equal_to_ours={"head_dim": "d_k"},  # only hidden_size / num_attention_heads
    weights={"embed.weight": same("model.embed_tokens.weight"), "lm_head.weight": same("lm_head.weight"),
             "decoder_norm.weight": same("model.norm.weight")},
    layers=(Layers("decoder.{i}.", "model.layers.{i}.", "n_decoder_layers", {
        # q_proj, k_proj, v_proj are nn.Linear (out, in) like ours: stacked as rows, they are in_proj [W^Q; W^K; W^V]
        "self_attn.in_proj.weight": qkv_rows("self_attn.q_proj.weight", "self_attn.k_proj.weight",
                                             "self_attn.v_proj.weight"),
        "self_attn.out_proj.weight": same("self_attn.o_proj.weight"),  # W^O
        "ffn.w_gate.weight": same("mlp.gate_proj.weight"), "ffn.w_up.weight": same("mlp.up_proj.weight"),
        "ffn.w_down.weight": same("mlp.down_proj.weight"),
        "sublayers.0.norm.weight": same("input_layernorm.weight"),  # before attention
        "sublayers.1.norm.weight": same("post_attention_layernorm.weight")}),),  # before the MLP
    tokenizer=Tokenizer((("tokenizer.json",),), byte_level_bpe),
    vocab="at most",  # SmolLM2's embedding has rows no token uses
))
