"""The options that exist to load an outside family (GPT-2, Llama, BERT, Marian: transformer/pretrained/), grouped
by the part of the model they change. Each default is the paper's choice, so a model of the paper never sets one;
each group checks its own fields. TransformerConfig (config.py) is made of these groups and the paper's fields."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .config_checks import check_fields, finite_above, flag, non_negative_int, one_of

ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "silu")  # gelu_tanh: GPT-2's GELU; silu: x sigmoid(x), Marian's swish
SINUSOIDAL_LAYOUTS = ("interleaved", "halves")  # the paper's sin, cos, sin, ...; Marian's sines | cosines
ROPE_LAYOUTS = ("interleaved", "halves")  # RoFormer's pairs (x_2i, x_2i+1); transformers' (x_i, x_i+d/2)
INITS = ("xavier", "gpt2")  # "xavier": uniform on every matrix; "gpt2": N(0, 0.02), residual projections / sqrt(N)


@dataclass
class EmbeddingOptions:
    """What goes in and out of the layers: the paper scales the token embedding by sqrt(d_model) (section 3.4) and
    shares it with the output layer; GPT-2, Llama and BERT do not scale, Llama may not tie, BERT adds a token-type
    (segment) vector and a norm on the sum, Marian a bias per vocabulary entry on the logits."""

    scale_embeddings: bool = True  # x sqrt(d_model) on the token embedding; GPT-2, Llama and BERT do not scale
    tie_embeddings: bool = True  # the output layer is the token embedding (section 3.4)
    type_vocab_size: int = 0  # BERT's token-type (segment) embeddings; 0 = none
    embedding_norm: bool = False  # a norm on the embedding sum before dropout (BERT)
    final_logits_bias: bool = False  # logits = x W^T + b: a bias per vocabulary entry (Marian's); none in the paper
    CHECKS: ClassVar[dict] = {"scale_embeddings": flag, "tie_embeddings": flag, "type_vocab_size": non_negative_int,
                              "embedding_norm": flag, "final_logits_bias": flag}

    def __post_init__(self):
        check_fields(self, EmbeddingOptions.CHECKS)


@dataclass
class SublayerOptions:
    """Inside each sub-layer: the FFN's activation (the paper's ReLU), every norm's epsilon, which projections have
    biases (the paper's attention has none; GPT-2, BERT and Marian have them; Llama has none anywhere) and how the
    weights are drawn before training."""

    activation: str = "relu"
    layer_norm_eps: float = 1e-5  # epsilon of every LayerNorm / RMSNorm (torch's default; each family states its own)
    attention_bias: bool = False  # biases on W^Q, W^K, W^V, W^O
    ffn_bias: bool = True  # biases b_1, b_2 of the feed-forward (equation 2)
    init: str = "xavier"
    CHECKS: ClassVar[dict] = {"activation": one_of(ACTIVATIONS), "layer_norm_eps": finite_above(0),
                              "attention_bias": flag, "ffn_bias": flag, "init": one_of(INITS)}

    def __post_init__(self):
        check_fields(self, SublayerOptions.CHECKS)


@dataclass
class PositionOptions:
    """Details of a position scheme (transformer/positions/): Marian orders the paper's sinusoids differently, and
    RoPE's base and pairing differ between RoFormer and the Llama family."""

    sinusoidal_layout: str = "interleaved"  # "halves": Marian's order of the same waves (positions/sinusoidal.py)
    rope_theta: float = 10000.0  # RoPE's base: theta_i = rope_theta^(-2i/d_k) (RoFormer's 10000; SmolLM2 100000)
    rope_layout: str = "interleaved"  # which dimensions RoPE pairs: RoFormer's (2i, 2i+1) or "halves" (i, i+d_k/2)
    CHECKS: ClassVar[dict] = {"sinusoidal_layout": one_of(SINUSOIDAL_LAYOUTS), "rope_theta": finite_above(1),
                              "rope_layout": one_of(ROPE_LAYOUTS)}

    def __post_init__(self):
        check_fields(self, PositionOptions.CHECKS)


@dataclass
class FamilyOptions(PositionOptions, SublayerOptions, EmbeddingOptions):
    """Every option of an outside family: the groups above, fields in the order embeddings, sub-layers, positions
    (a dataclass takes its bases' fields from the last base to the first)."""

    def __post_init__(self):
        for group in (EmbeddingOptions, SublayerOptions, PositionOptions):
            group.__post_init__(self)
