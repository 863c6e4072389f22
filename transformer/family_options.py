"""The options that exist to load an outside family (GPT-2, Llama, BERT, Marian: transformer/pretrained/), grouped
by the part of the model they change. Each default is the paper's choice, so a model of the paper never sets one;
each group checks its own fields. TransformerConfig (config.py) is made of these groups and the paper's fields."""
from __future__ import annotations

from dataclasses import dataclass

from .config_checks import finite_above, flag, non_negative_int, one_of

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

    def __post_init__(self):
        flag(self, "scale_embeddings", "tie_embeddings", "embedding_norm", "final_logits_bias")
        non_negative_int(self, "type_vocab_size")


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

    def __post_init__(self):
        one_of(self, "activation", ACTIVATIONS)
        finite_above(self, "layer_norm_eps", 0)
        flag(self, "attention_bias", "ffn_bias")
        one_of(self, "init", INITS)


@dataclass
class PositionOptions:
    """Details of a position scheme (transformer/positions/): Marian orders the paper's sinusoids differently, and
    RoPE's base and pairing differ between RoFormer and the Llama family."""

    sinusoidal_layout: str = "interleaved"  # "halves": Marian's order of the same waves (positions/sinusoidal.py)
    rope_theta: float = 10000.0  # RoPE's base: theta_i = rope_theta^(-2i/d_k) (RoFormer's 10000; SmolLM2 100000)
    rope_layout: str = "interleaved"  # which dimensions RoPE pairs: RoFormer's (2i, 2i+1) or "halves" (i, i+d_k/2)

    def __post_init__(self):
        one_of(self, "sinusoidal_layout", SINUSOIDAL_LAYOUTS)
        one_of(self, "rope_layout", ROPE_LAYOUTS)
        finite_above(self, "rope_theta", 1)


@dataclass
class FamilyOptions(PositionOptions, SublayerOptions, EmbeddingOptions):
    """Every option of an outside family: the groups above, fields in the order embeddings, sub-layers, positions
    (a dataclass takes its bases' fields from the last base to the first)."""

    def __post_init__(self):
        for group in (EmbeddingOptions, SublayerOptions, PositionOptions):
            group.__post_init__(self)
