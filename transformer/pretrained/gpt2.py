"""Real pretrained weights in the from-scratch decoder: GPT-2 (Radford et al., 2019) from the Hugging Face layout.

GPT-2 is this package's decoder-only stack with four choices of its own, all plain config fields: pre-norm
layers with a final LayerNorm (`norm_first`), learned positions, token embeddings not multiplied by sqrt(d_model)
(`scale_embeddings=False`) and GELU's tanh approximation (`activation="gelu_tanh"`). `load_gpt2` reads
config.json + model.safetensors + the tokenizer from a local directory or a Hub repo, checks that the config is
GPT-2's, renames and reshapes the tensors (`convert_gpt2`) and returns (model, tokenizer, info) as
`load_checkpoint` does. Only safetensors are read: a pickled pytorch_model.bin is refused, never opened.

    python -m transformer.pretrained gpt2        # download GPT-2 small into the Hugging Face cache
"""
from __future__ import annotations

import re
from pathlib import Path

from torch import Tensor

from ..checkpoint import CheckpointError
from ..config import TransformerConfig
from ..model import Transformer
from ..tokenization import GPT2BPETokenizer
from .family import Family, register, require_epsilon, require_positive_ints, require_token_id, require_values
from .weights import check_model_size, model_from_state, read_weights

GPT2_ACTIVATIONS = {"gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu": "gelu", "relu": "relu"}
BUFFERS = re.compile(r"^h\.\d+\.attn\.(bias|masked_bias)$")  # GPT-2's stored causal-mask buffers: not weights


def check_gpt2_config(hf: dict) -> None:
    """Raise CheckpointError naming the field when a Hugging Face config.json is not a GPT-2 this model can run."""
    if hf.get("model_type", "gpt2") != "gpt2":
        raise CheckpointError(f"model_type: expected 'gpt2', got {hf.get('model_type')!r}")
    require_positive_ints(hf, "n_embd", "n_head", "n_layer", "n_positions", "vocab_size")
    if hf["n_embd"] % hf["n_head"]:
        raise CheckpointError(f"n_embd: {hf['n_embd']} is not divisible by n_head={hf['n_head']}")
    n_inner = hf.get("n_inner")
    if n_inner is not None and (not isinstance(n_inner, int) or isinstance(n_inner, bool) or n_inner < 1):
        raise CheckpointError(f"n_inner: must be null or a positive integer, got {n_inner!r}")
    activation = hf.get("activation_function", "gelu_new")
    if activation not in GPT2_ACTIVATIONS:
        raise CheckpointError(f"activation_function: must be one of {sorted(GPT2_ACTIVATIONS)}, got {activation!r}")
    require_epsilon(hf, "layer_norm_epsilon", 1e-5)
    require_values(hf, {"scale_attn_weights": (True, True), "scale_attn_by_inverse_layer_idx": (False, False),
                        "add_cross_attention": (False, False), "tie_word_embeddings": (True, True)})
    for name in ("bos_token_id", "eos_token_id"):
        require_token_id(hf, name, 50256)


def convert_gpt2_config(hf: dict) -> TransformerConfig:
    """GPT-2's config.json (passed check_gpt2_config) -> our TransformerConfig, one rule per comment."""
    return TransformerConfig(
        arch="decoder-only", vocab_size=hf["vocab_size"], d_model=hf["n_embd"], n_heads=hf["n_head"],
        n_decoder_layers=hf["n_layer"], max_len=hf["n_positions"],
        d_ff=hf.get("n_inner") or 4 * hf["n_embd"],  # n_inner null: the MLP is 4 x wider than the residual stream
        dropout=hf.get("resid_pdrop", 0.1),  # GPT-2 uses one rate (0.1) for embeddings, residuals and attention
        norm_first=True,  # pre-norm: x + attn(ln_1(x)), x + mlp(ln_2(x)), then ln_f (our decoder_norm)
        pos_encoding="learned",  # wpe: one trained vector per position
        scale_embeddings=False,  # wte(ids) + wpe(pos), no sqrt(d_model) factor
        activation=GPT2_ACTIVATIONS[hf.get("activation_function", "gelu_new")],  # "gelu_new" = tanh-approximate GELU
        layer_norm_eps=float(hf.get("layer_norm_epsilon", 1e-5)),  # every LayerNorm's eps, from the config
        tie_embeddings=True,  # the output layer is wte itself
        attention_bias=True,  # c_attn and c_proj have biases
        # <|endoftext|> is GPT-2's only special token: BOS and EOS; pad_id = eos_id means "no padding token"
        bos_id=hf.get("bos_token_id", 50256), eos_id=hf.get("eos_token_id", 50256),
        pad_id=hf.get("eos_token_id", 50256),
    )


def convert_gpt2(hf: dict, tensors: dict[str, Tensor]) -> tuple[TransformerConfig, dict[str, Tensor]]:
    """GPT-2's config.json and tensors -> our TransformerConfig and state dict, one rule per comment.

    `hf` must have passed check_gpt2_config. Raises CheckpointError on a missing or unexpected tensor.
    """
    config = convert_gpt2_config(hf)
    # save_pretrained names tensors "transformer.h.0..."; the original OpenAI files have no "transformer." prefix
    g = {name.removeprefix("transformer."): t.float() for name, t in tensors.items()}
    g.pop("lm_head.weight", None)  # the tied head, when a file stores it: the same matrix as wte
    for name in [n for n in g if BUFFERS.match(n)]:
        del g[name]

    def take(name: str) -> Tensor:
        if name not in g:
            raise CheckpointError(f"model.safetensors: missing tensor {name!r}")
        return g.pop(name)

    def conv1d(name: str) -> Tensor:
        return take(name).t().contiguous()  # Conv1D stores (in, out); nn.Linear wants (out, in): transpose

    sd = {"embed.weight": take("wte.weight"),  # token embedding (wte)
          "pos_encoding.table": take("wpe.weight")}  # learned positions (wpe)
    sd["lm_head.weight"] = sd["embed.weight"]  # tied head: logits = x wte^T
    for i in range(config.n_decoder_layers):
        h, ours = f"h.{i}.", f"decoder.{i}."
        # c_attn: one (d, 3d) Conv1D whose output columns are [q | k | v]: exactly our in_proj rows [W^Q; W^K; W^V]
        sd[ours + "self_attn.in_proj.weight"] = conv1d(h + "attn.c_attn.weight")
        sd[ours + "self_attn.in_proj.bias"] = take(h + "attn.c_attn.bias")
        sd[ours + "self_attn.out_proj.weight"] = conv1d(h + "attn.c_proj.weight")  # attention output projection
        sd[ours + "self_attn.out_proj.bias"] = take(h + "attn.c_proj.bias")
        sd[ours + "ffn.w_1.weight"] = conv1d(h + "mlp.c_fc.weight")  # MLP: c_fc = W_1, c_proj = W_2
        sd[ours + "ffn.w_1.bias"] = take(h + "mlp.c_fc.bias")
        sd[ours + "ffn.w_2.weight"] = conv1d(h + "mlp.c_proj.weight")
        sd[ours + "ffn.w_2.bias"] = take(h + "mlp.c_proj.bias")
        for n, ln in enumerate(("ln_1", "ln_2")):  # ln_1 before attention, ln_2 before the MLP: our pre-norm sub-layers
            sd[f"{ours}sublayers.{n}.norm.weight"] = take(f"{h}{ln}.weight")
            sd[f"{ours}sublayers.{n}.norm.bias"] = take(f"{h}{ln}.bias")
    sd["decoder_norm.weight"], sd["decoder_norm.bias"] = take("ln_f.weight"), take("ln_f.bias")  # final ln_f
    if g:
        raise CheckpointError(f"model.safetensors: unexpected tensors for a {config.n_decoder_layers}-layer GPT-2: "
                              f"{sorted(g)[:5]}")
    return config, sd


def gpt2_model(hf: dict, tensors: dict[str, Tensor]) -> Transformer:
    """Our Transformer holding GPT-2's weights (CPU, train mode), from its config and tensors (convert_gpt2)."""
    return model_from_state(*convert_gpt2(hf, tensors))


def gpt2_shapes(hf: dict) -> dict[str, tuple[int, ...]]:
    """The tensors a GPT-2 with config `hf` stores (names without the "transformer." prefix) and their shapes."""
    d, ff, V = hf["n_embd"], hf.get("n_inner") or 4 * hf["n_embd"], hf["vocab_size"]
    shapes = {"wte.weight": (V, d), "wpe.weight": (hf["n_positions"], d), "ln_f.weight": (d,), "ln_f.bias": (d,)}
    for i in range(hf["n_layer"]):
        h = f"h.{i}."
        shapes.update({h + "attn.c_attn.weight": (d, 3 * d), h + "attn.c_attn.bias": (3 * d,),
                       h + "attn.c_proj.weight": (d, d), h + "attn.c_proj.bias": (d,),
                       h + "mlp.c_fc.weight": (d, ff), h + "mlp.c_fc.bias": (ff,),
                       h + "mlp.c_proj.weight": (ff, d), h + "mlp.c_proj.bias": (d,)})
        for ln in ("ln_1", "ln_2"):
            shapes.update({f"{h}{ln}.weight": (d,), f"{h}{ln}.bias": (d,)})
    return shapes


def build_gpt2(directory: Path, hf: dict) -> tuple[Transformer, GPT2BPETokenizer]:
    """(our Transformer holding the GPT-2 of `directory`, its tokenizer); `hf` passed check_gpt2_config."""
    shapes = gpt2_shapes(hf)
    n = hf["n_positions"]
    check_model_size(directory, convert_gpt2_config(hf))
    tensors = read_weights(directory / "model.safetensors", shapes, rename=lambda name: name.removeprefix("transformer."),
                           optional=lambda name, shape: (name == "lm_head.weight" and shape == shapes["wte.weight"])
                           or (BUFFERS.match(name) is not None and shape in {(1, 1, n, n), ()}))
    model = gpt2_model(hf, tensors)
    tokenizer = gpt2_tokenizer(directory)
    if tokenizer.vocab_size != model.config.vocab_size:
        raise CheckpointError(f"{directory}: tokenizer has {tokenizer.vocab_size} tokens, config.json says "
                              f"vocab_size={model.config.vocab_size}")
    return model, tokenizer


def gpt2_tokenizer_files(directory: Path) -> list[Path]:
    if (directory / "tokenizer.json").is_file():
        return [directory / "tokenizer.json"]
    if (directory / "vocab.json").is_file() and (directory / "merges.txt").is_file():
        return [directory / "vocab.json", directory / "merges.txt"]
    raise CheckpointError(f"{directory}: no tokenizer (tokenizer.json, or vocab.json and merges.txt)")


def gpt2_tokenizer(directory: Path) -> GPT2BPETokenizer:
    files = gpt2_tokenizer_files(directory)
    try:
        return GPT2BPETokenizer.from_file(files[0]) if len(files) == 1 else GPT2BPETokenizer.from_vocab_merges(*files)
    except Exception as e:  # tokenizers' parse errors and our own ValueError: the files are bad
        raise CheckpointError(f"{directory}: bad tokenizer files: {e}") from None


GPT2 = register(Family("gpt2", "GPT-2", check_gpt2_config, build_gpt2, gpt2_tokenizer_files))
