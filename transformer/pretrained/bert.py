"""BERT (Devlin et al. 2019) in the from-scratch encoder: the spec of its Hugging Face layout (bert-base-uncased's).

BERT is the paper's encoder alone (`arch="encoder-only"`), every position attending to every other, with these
config choices: post-norm layers as in the paper; learned positions plus a token-type (segment) vector, summed with
the token embedding and normalised by a LayerNorm before dropout (`type_vocab_size`, `embedding_norm`); GELU (erf);
biases everywhere; no sqrt(d_model) scaling; and the masked-LM head (transformer/masked_lm.py): dense + GELU +
LayerNorm, then the tied embedding with a bias over the vocabulary. The tokenizer is WordPiece
(transformer/wordpiece.py), from tokenizer.json or from vocab.txt.
"""
from __future__ import annotations

from .family import register
from .readers import wordpiece
from .spec import Family, Ignored, Layers, Read, Tokenizer, qkv_rows, same

E, P = "bert.embeddings.", "cls.predictions."
BERT = register(Family(
    model_type="bert", name="BERT", arch="encoder-only",
    config={
        "n_decoder_layers": 0,  # the encoder alone, with the masked-LM head
        "vocab_size": Read("vocab_size"), "d_model": Read("hidden_size"), "n_heads": Read("num_attention_heads"),
        "n_encoder_layers": Read("num_hidden_layers"), "d_ff": Read("intermediate_size"),
        "max_len": Read("max_position_embeddings"),
        "dropout": Read("hidden_dropout_prob", 0.1, "number"),
        "norm_first": False,  # post-norm, as in the paper: LayerNorm(x + Sublayer(x))
        "layer_norm_eps": Read("layer_norm_eps", 1e-12, "number"),
        "activation": "gelu",  # hidden_act "gelu": the exact (erf) GELU
        "attention_bias": True, "ffn_bias": True,  # query, key, value, dense: all with biases
        "pos_encoding": "learned",  # position_embeddings: one trained vector per position
        # + token_type_embeddings[0] (every token is segment A), then a LayerNorm on the sum
        "type_vocab_size": Read("type_vocab_size", 2, most=16), "embedding_norm": True,
        "scale_embeddings": False,  # word_embeddings(ids), no sqrt(d_model) factor
        "tie_embeddings": True,  # cls.predictions.decoder is word_embeddings
        "pad_id": Read("pad_token_id", 0, "id"),  # [PAD] keys are masked
    },
    from_tokenizer={"bos_id": "cls_id", "eos_id": "sep_id"},  # [CLS] starts and [SEP] ends an input
    supported={"hidden_act": "gelu", "position_embedding_type": "absolute", "is_decoder": False,
               "add_cross_attention": False, "tie_word_embeddings": True},
    # BERT's 2018 files call LayerNorm's gain and bias gamma and beta
    rename=((r"LayerNorm\.gamma$", "LayerNorm.weight"), (r"LayerNorm\.beta$", "LayerNorm.bias")),
    weights={"embed.weight": same(E + "word_embeddings.weight"),
             "pos_encoding.table": same(E + "position_embeddings.weight"),
             "token_types.weight": same(E + "token_type_embeddings.weight"),
             "embed_norm.weight": same(E + "LayerNorm.weight"), "embed_norm.bias": same(E + "LayerNorm.bias"),
             "mlm_head.dense.weight": same(P + "transform.dense.weight"),
             "mlm_head.dense.bias": same(P + "transform.dense.bias"),
             "mlm_head.norm.weight": same(P + "transform.LayerNorm.weight"),
             "mlm_head.norm.bias": same(P + "transform.LayerNorm.bias"),
             "lm_head.weight": same(P + "decoder.weight"),  # the word embedding (tied), when a file stores it again
             "lm_head.bias": same(P + "bias", P + "decoder.bias")},  # its bias over the vocabulary (at times twice)
    layers=(Layers("encoder.{i}.", "bert.encoder.layer.{i}.", "n_encoder_layers", {
        # query, key, value are nn.Linear (out, in) like ours: stacked as rows they are in_proj [W^Q; W^K; W^V]
        "self_attn.in_proj.weight": qkv_rows(*(f"attention.self.{p}.weight" for p in ("query", "key", "value"))),
        "self_attn.in_proj.bias": qkv_rows(*(f"attention.self.{p}.bias" for p in ("query", "key", "value"))),
        "self_attn.out_proj.weight": same("attention.output.dense.weight"),  # W^O
        "self_attn.out_proj.bias": same("attention.output.dense.bias"),
        "ffn.w_1.weight": same("intermediate.dense.weight"), "ffn.w_1.bias": same("intermediate.dense.bias"),
        "ffn.w_2.weight": same("output.dense.weight"), "ffn.w_2.bias": same("output.dense.bias"),
        # after attention + residual, after the FFN + residual
        "sublayers.0.norm.weight": same("attention.output.LayerNorm.weight"),
        "sublayers.0.norm.bias": same("attention.output.LayerNorm.bias"),
        "sublayers.1.norm.weight": same("output.LayerNorm.weight"),
        "sublayers.1.norm.bias": same("output.LayerNorm.bias"),
    }),),
    # stored beside the masked-LM weights and not used by it: the pooler and the next-sentence head (pre-training)
    ignored=(Ignored(r"^(bert\.pooler\.dense|cls\.seq_relationship)\.(weight|bias)$"),),
    tokenizer=Tokenizer((("tokenizer.json",), ("vocab.txt",)), wordpiece),
    vocab="at most",
))
