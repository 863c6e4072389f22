"""GPT-2 (Radford et al., 2019) in the from-scratch decoder: the spec of its Hugging Face layout.

GPT-2 is this package's decoder-only stack with four choices of its own, all plain config fields: pre-norm layers
with a final LayerNorm (`norm_first`), learned positions, token embeddings not multiplied by sqrt(d_model)
(`scale_embeddings=False`) and GELU's tanh approximation (`activation="gelu_tanh"`). Its linear maps are Conv1D,
stored (in, out): transposed into our nn.Linear's (out, in).

    python -m transformer.pretrained gpt2        # download GPT-2 small into the Hugging Face cache
"""
from __future__ import annotations

from .family import register
from .readers import byte_level_bpe
from .spec import Family, Ignored, Layers, Ours, Read, Tokenizer, same, transposed

ACTIVATIONS = {"gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu": "gelu", "relu": "relu"}

GPT2 = register(Family(
    model_type="gpt2", name="GPT-2", arch="decoder-only",
    config={
        "vocab_size": Read("vocab_size"), "d_model": Read("n_embd"), "n_heads": Read("n_head"),
        "n_decoder_layers": Read("n_layer"), "max_len": Read("n_positions"),
        # n_inner null: the MLP is 4 x wider than the residual stream
        "d_ff": Read("n_inner", None, otherwise=lambda ours: 4 * ours["d_model"]),
        "dropout": Read("resid_pdrop", 0.1, "number"),  # one rate (0.1) for embeddings, residuals and attention
        "norm_first": True,  # pre-norm: x + attn(ln_1(x)), x + mlp(ln_2(x)), then ln_f (our decoder_norm)
        "pos_encoding": "learned",  # wpe: one trained vector per position
        "scale_embeddings": False,  # wte(ids) + wpe(pos), no sqrt(d_model) factor
        "activation": Read("activation_function", "gelu_new", choices=ACTIVATIONS),  # gelu_new: tanh-approximate
        "layer_norm_eps": Read("layer_norm_epsilon", 1e-5, "number"),  # every LayerNorm's eps
        "tie_embeddings": True,  # the output layer is wte itself
        "attention_bias": True,  # c_attn and c_proj have biases
        # <|endoftext|> is GPT-2's only special token: BOS and EOS; pad_id = eos_id means "no padding token"
        "bos_id": Read("bos_token_id", 50256, "id"), "eos_id": Read("eos_token_id", 50256, "id"),
        "pad_id": Ours("eos_id"),
    },
    supported={"scale_attn_weights": True, "scale_attn_by_inverse_layer_idx": False, "add_cross_attention": False,
               "tie_word_embeddings": True},
    rename=((r"^transformer\.", ""),),  # save_pretrained's prefix; the original OpenAI files have none
    weights={"embed.weight": same("wte.weight"), "pos_encoding.table": same("wpe.weight"),
             "lm_head.weight": same("lm_head.weight"),  # tied: when a file stores it, the same matrix as wte
             "decoder_norm.weight": same("ln_f.weight"), "decoder_norm.bias": same("ln_f.bias")},
    layers=(Layers("decoder.{i}.", "h.{i}.", "n_decoder_layers", {
        # c_attn: one (d, 3d) Conv1D whose output columns are [q | k | v]: exactly our in_proj rows [W^Q; W^K; W^V]
        "self_attn.in_proj.weight": transposed("attn.c_attn.weight"),
        "self_attn.in_proj.bias": same("attn.c_attn.bias"),
        "self_attn.out_proj.weight": transposed("attn.c_proj.weight"),  # attention output projection W^O
        "self_attn.out_proj.bias": same("attn.c_proj.bias"),
        # MLP: c_fc = W_1, c_proj = W_2
        "ffn.w_1.weight": transposed("mlp.c_fc.weight"), "ffn.w_1.bias": same("mlp.c_fc.bias"),
        "ffn.w_2.weight": transposed("mlp.c_proj.weight"), "ffn.w_2.bias": same("mlp.c_proj.bias"),
        # ln_1 before attention, ln_2 before the MLP: our pre-norm sub-layers 0 and 1
        "sublayers.0.norm.weight": same("ln_1.weight"), "sublayers.0.norm.bias": same("ln_1.bias"),
        "sublayers.1.norm.weight": same("ln_2.weight"), "sublayers.1.norm.bias": same("ln_2.bias")}),),
    # GPT-2's stored causal-mask buffers: not weights
    ignored=(Ignored(r"^h\.\d+\.attn\.(bias|masked_bias)$", lambda c: {(1, 1, c.max_len, c.max_len), ()}),),
    tokenizer=Tokenizer((("tokenizer.json",), ("vocab.json", "merges.txt")), byte_level_bpe),
))
