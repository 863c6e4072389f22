"""BERT (Devlin et al. 2019) in the from-scratch encoder, from the Hugging Face layout (bert-base-uncased's).

BERT is the paper's encoder alone (`arch="encoder-only"`), every position attending to every other, with these
config choices: post-norm layers as in the paper; learned positions plus a token-type (segment) vector, summed with
the token embedding and normalised by a LayerNorm before dropout (`type_vocab_size`, `embedding_norm`); GELU (erf);
biases everywhere; no sqrt(d_model) scaling; and the masked-LM head (transformer/masked_lm.py): dense + GELU +
LayerNorm, then the tied embedding with a bias over the vocabulary. The tokenizer is WordPiece
(transformer/wordpiece.py), from tokenizer.json or from vocab.txt.
"""
from __future__ import annotations

import re
from pathlib import Path

import torch
from torch import Tensor

from ..checkpoint import CheckpointError
from ..config import TransformerConfig
from ..model import Transformer
from ..tokenization import WordPieceTokenizer
from .family import Family, register, require_epsilon, require_positive_ints, require_values
from .weights import check_model_size, model_from_state, read_json, read_weights

# Stored beside the masked-LM weights and not used by it: the pooler and the next-sentence head (pre-training only)
UNUSED = re.compile(r"^(bert\.pooler\.dense|cls\.seq_relationship)\.(weight|bias)$")


def check_bert_config(hf: dict) -> None:
    """Raise CheckpointError naming the field when a config.json is not a BERT this model can run."""
    if hf.get("model_type") != "bert":
        raise CheckpointError(f"model_type: expected 'bert', got {hf.get('model_type')!r}")
    require_positive_ints(hf, "hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size",
                          "vocab_size", "max_position_embeddings")
    if hf["hidden_size"] % hf["num_attention_heads"]:
        raise CheckpointError(f"hidden_size: {hf['hidden_size']} is not divisible by "
                              f"num_attention_heads={hf['num_attention_heads']}")
    types = hf.get("type_vocab_size", 2)
    if not isinstance(types, int) or isinstance(types, bool) or not 1 <= types <= 16:
        raise CheckpointError(f"type_vocab_size: must be an integer in [1, 16], got {types!r}")
    require_epsilon(hf, "layer_norm_eps", 1e-12)
    require_values(hf, {"hidden_act": ("gelu", "gelu"), "position_embedding_type": ("absolute", "absolute"),
                        "is_decoder": (False, False), "add_cross_attention": (False, False),
                        "tie_word_embeddings": (True, True)})
    pad = hf.get("pad_token_id", 0)
    if not isinstance(pad, int) or isinstance(pad, bool) or not 0 <= pad < hf["vocab_size"]:
        raise CheckpointError(f"pad_token_id: must be a token id below vocab_size={hf['vocab_size']}, got {pad!r}")


def convert_bert_config(hf: dict, tokenizer: WordPieceTokenizer) -> TransformerConfig:
    """A BERT's config.json (passed check_bert_config) -> our TransformerConfig, one rule per comment."""
    return TransformerConfig(
        arch="encoder-only", n_decoder_layers=0,  # the encoder alone, with the masked-LM head
        vocab_size=hf["vocab_size"], d_model=hf["hidden_size"], n_heads=hf["num_attention_heads"],
        n_encoder_layers=hf["num_hidden_layers"], d_ff=hf["intermediate_size"],
        max_len=hf["max_position_embeddings"],
        dropout=float(hf.get("hidden_dropout_prob", 0.1)),
        norm_first=False,  # post-norm, as in the paper: LayerNorm(x + Sublayer(x))
        layer_norm_eps=float(hf.get("layer_norm_eps", 1e-12)),
        activation="gelu",  # "gelu": the exact (erf) GELU
        attention_bias=True, ffn_bias=True,  # query, key, value, dense: all with biases
        pos_encoding="learned",  # position_embeddings: one trained vector per position
        type_vocab_size=hf.get("type_vocab_size", 2), embedding_norm=True,  # + token_type_embeddings[0], LayerNorm
        scale_embeddings=False,  # word_embeddings(ids), no sqrt(d_model) factor
        tie_embeddings=True,  # cls.predictions.decoder is word_embeddings
        # [PAD] keys are masked; [CLS] starts and [SEP] ends an input (our bos_id, eos_id)
        pad_id=hf.get("pad_token_id", 0), bos_id=tokenizer.cls_id, eos_id=tokenizer.sep_id,
    )


def _stored_name(name: str) -> str:
    """A tensor's name in the current layout: BERT's 2018 files call LayerNorm's gain and bias gamma and beta."""
    return re.sub(r"LayerNorm\.gamma$", "LayerNorm.weight", re.sub(r"LayerNorm\.beta$", "LayerNorm.bias", name))


def bert_shapes(hf: dict) -> dict[str, tuple[int, ...]]:
    """The tensors BertForMaskedLM with config `hf` stores and their shapes."""
    d, ff, V = hf["hidden_size"], hf["intermediate_size"], hf["vocab_size"]
    e = "bert.embeddings."
    shapes = {e + "word_embeddings.weight": (V, d), e + "position_embeddings.weight": (hf["max_position_embeddings"], d),
              e + "token_type_embeddings.weight": (hf.get("type_vocab_size", 2), d),
              e + "LayerNorm.weight": (d,), e + "LayerNorm.bias": (d,),
              "cls.predictions.transform.dense.weight": (d, d), "cls.predictions.transform.dense.bias": (d,),
              "cls.predictions.transform.LayerNorm.weight": (d,), "cls.predictions.transform.LayerNorm.bias": (d,),
              "cls.predictions.bias": (V,)}
    for i in range(hf["num_hidden_layers"]):
        layer = f"bert.encoder.layer.{i}."
        for name in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            shapes.update({f"{layer}{name}.weight": (d, d), f"{layer}{name}.bias": (d,)})
        shapes.update({layer + "intermediate.dense.weight": (ff, d), layer + "intermediate.dense.bias": (ff,),
                       layer + "output.dense.weight": (d, ff), layer + "output.dense.bias": (d,)})
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes.update({f"{layer}{norm}.weight": (d,), f"{layer}{norm}.bias": (d,)})
    return shapes


def convert_bert(config: TransformerConfig, t: dict[str, Tensor]) -> dict[str, Tensor]:
    """BERT's tensors (names as bert_shapes says) -> our state dict, one rule per comment."""
    t = {name: tensor.float() for name, tensor in t.items()}
    e = "bert.embeddings."
    sd = {"embed.weight": t[e + "word_embeddings.weight"], "pos_encoding.table": t[e + "position_embeddings.weight"],
          "token_types": t[e + "token_type_embeddings.weight"],
          "embed_norm.weight": t[e + "LayerNorm.weight"], "embed_norm.bias": t[e + "LayerNorm.bias"]}
    for i in range(config.n_encoder_layers):
        layer, ours = f"bert.encoder.layer.{i}.", f"encoder.{i}."
        qkv = [layer + f"attention.self.{p}" for p in ("query", "key", "value")]
        # query, key, value are nn.Linear (out, in) like ours: stacked as rows they are in_proj [W^Q; W^K; W^V]
        sd[ours + "self_attn.in_proj.weight"] = torch.cat([t[p + ".weight"] for p in qkv])
        sd[ours + "self_attn.in_proj.bias"] = torch.cat([t[p + ".bias"] for p in qkv])
        for hf_name, our_name in (("attention.output.dense", "self_attn.out_proj"),  # W^O
                                  ("intermediate.dense", "ffn.w_1"), ("output.dense", "ffn.w_2"),  # the FFN
                                  ("attention.output.LayerNorm", "sublayers.0.norm"),  # after attention + residual
                                  ("output.LayerNorm", "sublayers.1.norm")):  # after the FFN + residual
            sd[f"{ours}{our_name}.weight"], sd[f"{ours}{our_name}.bias"] = t[f"{layer}{hf_name}.weight"], \
                t[f"{layer}{hf_name}.bias"]
    p = "cls.predictions."
    sd.update({"mlm_head.dense.weight": t[p + "transform.dense.weight"], "mlm_head.dense.bias": t[p + "transform.dense.bias"],
               "mlm_head.norm.weight": t[p + "transform.LayerNorm.weight"],
               "mlm_head.norm.bias": t[p + "transform.LayerNorm.bias"],
               "lm_head.weight": sd["embed.weight"],  # the decoder is the word embedding (tied)
               "lm_head.bias": t[p + "bias"]})  # its bias over the vocabulary
    return sd


def build_bert(directory: Path, hf: dict) -> tuple[Transformer, WordPieceTokenizer]:
    """(our Transformer holding the BERT of `directory`, its tokenizer); `hf` passed check_bert_config."""
    tokenizer = bert_tokenizer(directory)
    if tokenizer.vocab_size > hf["vocab_size"]:
        raise CheckpointError(f"{directory}: tokenizer has {tokenizer.vocab_size} tokens, more than config.json's "
                              f"vocab_size={hf['vocab_size']}")
    config = convert_bert_config(hf, tokenizer)
    check_model_size(directory, config)
    shapes = bert_shapes(hf)
    V, d = hf["vocab_size"], hf["hidden_size"]
    tied = {"cls.predictions.decoder.weight": (V, d), "cls.predictions.decoder.bias": (V,)}  # stored twice, at times
    tensors = read_weights(directory / "model.safetensors", shapes, rename=_stored_name,
                           optional=lambda name, shape: tied.get(name) == shape or UNUSED.match(name) is not None)
    return model_from_state(config, convert_bert(config, tensors)), tokenizer


def bert_tokenizer_files(directory: Path) -> list[Path]:
    for name in ("tokenizer.json", "vocab.txt"):
        if (directory / name).is_file():
            return [directory / name]
    raise CheckpointError(f"{directory}: no tokenizer (tokenizer.json or vocab.txt)")


def bert_tokenizer(directory: Path) -> WordPieceTokenizer:
    """tokenizer.json, else vocab.txt with tokenizer_config.json's do_lower_case (True when absent: uncased)."""
    file = bert_tokenizer_files(directory)[0]
    try:
        if file.name == "tokenizer.json":
            return WordPieceTokenizer.from_file(file)
        settings = directory / "tokenizer_config.json"
        lowercase = read_json(settings).get("do_lower_case", True) if settings.is_file() else True
        return WordPieceTokenizer.from_vocab(file, lowercase=lowercase is not False)
    except Exception as e:  # our ValueError, OSError, tokenizers' parse errors: the files are bad
        raise CheckpointError(f"{file}: not a BERT WordPiece tokenizer this loader reads: {e}") from None


BERT = register(Family("bert", "BERT", check_bert_config, build_bert, bert_tokenizer_files, arch="encoder-only"))
