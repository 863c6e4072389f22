"""A toy family added through its spec alone: GPT-2's model under other names, the way a new family is added.

Its config.json says `width`, `heads`, `depth`, `context`, `vocab`, `eps`, `end_token`; its tensors are nn.Linear
(out, in) with the query, key and value apart (GPT-2 stores Conv1D (in, out) with them fused); its tokenizer is
GPT-2's tokenizer.json. `save_toy(gpt2_dir, directory)` rewrites a tiny GPT-2 (tests/conftest.py) in this layout, so
transformers' GPT-2 on the original files is the oracle. Nothing else in the library knows of this family.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from transformer.pretrained.readers import byte_level_bpe
from transformer.pretrained.spec import Family, Layers, Ours, Read, Tokenizer, qkv_rows, same

TOY = Family(
    model_type="toy-gpt", name="Toy GPT", arch="decoder-only",
    config={"vocab_size": Read("vocab"), "d_model": Read("width"), "n_heads": Read("heads"),
            "n_decoder_layers": Read("depth"), "max_len": Read("context"),
            "d_ff": Read("ffn_width", None, otherwise=lambda ours: 4 * ours["d_model"]),
            "layer_norm_eps": Read("eps", 1e-5, "number"), "dropout": 0.0, "norm_first": True,
            "pos_encoding": "learned", "scale_embeddings": False, "activation": "gelu_tanh", "tie_embeddings": True,
            "attention_bias": True, "eos_id": Read("end_token", kind="id"), "bos_id": Ours("eos_id"),
            "pad_id": Ours("eos_id")},
    weights={"embed.weight": same("tok.weight"), "pos_encoding.table": same("pos.weight"),
             "lm_head.weight": same("head.weight"),
             "decoder_norm.weight": same("final_norm.weight"), "decoder_norm.bias": same("final_norm.bias")},
    layers=(Layers("decoder.{i}.", "blocks.{i}.", "n_decoder_layers", {
        "self_attn.in_proj.weight": qkv_rows("attn.q.weight", "attn.k.weight", "attn.v.weight"),
        "self_attn.in_proj.bias": qkv_rows("attn.q.bias", "attn.k.bias", "attn.v.bias"),
        "self_attn.out_proj.weight": same("attn.o.weight"), "self_attn.out_proj.bias": same("attn.o.bias"),
        "ffn.w_1.weight": same("ff.up.weight"), "ffn.w_1.bias": same("ff.up.bias"),
        "ffn.w_2.weight": same("ff.down.weight"), "ffn.w_2.bias": same("ff.down.bias"),
        "sublayers.0.norm.weight": same("norm1.weight"), "sublayers.0.norm.bias": same("norm1.bias"),
        "sublayers.1.norm.weight": same("norm2.weight"), "sublayers.1.norm.bias": same("norm2.bias")}),),
    tokenizer=Tokenizer((("tokenizer.json",),), byte_level_bpe),
)


def save_toy(gpt2_dir: Path, directory: Path) -> Path:
    """The tiny GPT-2 of `gpt2_dir` rewritten by hand in the toy layout (config.json, model.safetensors,
    tokenizer.json) into `directory`."""
    hf = json.loads((gpt2_dir / "config.json").read_text())
    g = {name.removeprefix("transformer."): t for name, t in load_file(gpt2_dir / "model.safetensors").items()}
    d = hf["n_embd"]
    toy = {"tok.weight": g["wte.weight"], "pos.weight": g["wpe.weight"],
           "final_norm.weight": g["ln_f.weight"], "final_norm.bias": g["ln_f.bias"]}
    for i in range(hf["n_layer"]):
        h, b = f"h.{i}.", f"blocks.{i}."
        for n, part in enumerate("qkv"):  # c_attn's columns [q | k | v], each (in, out): a Linear's (out, in) is .T
            toy[f"{b}attn.{part}.weight"] = g[h + "attn.c_attn.weight"][:, n * d:(n + 1) * d].t()
            toy[f"{b}attn.{part}.bias"] = g[h + "attn.c_attn.bias"][n * d:(n + 1) * d]
        for theirs, ours in (("attn.c_proj", "attn.o"), ("mlp.c_fc", "ff.up"), ("mlp.c_proj", "ff.down")):
            toy[f"{b}{ours}.weight"], toy[f"{b}{ours}.bias"] = g[f"{h}{theirs}.weight"].t(), g[f"{h}{theirs}.bias"]
        for theirs, ours in (("ln_1", "norm1"), ("ln_2", "norm2")):
            toy[f"{b}{ours}.weight"], toy[f"{b}{ours}.bias"] = g[f"{h}{theirs}.weight"], g[f"{h}{theirs}.bias"]
    directory.mkdir(parents=True)
    save_file({name: t.contiguous() for name, t in toy.items()}, directory / "model.safetensors")
    shutil.copy(gpt2_dir / "tokenizer.json", directory / "tokenizer.json")
    config = {"model_type": "toy-gpt", "width": d, "heads": hf["n_head"], "depth": hf["n_layer"],
              "context": hf["n_positions"], "vocab": hf["vocab_size"], "eps": hf["layer_norm_epsilon"],
              "end_token": hf["eos_token_id"]}
    (directory / "config.json").write_text(json.dumps(config))
    return directory
