"""TransformerConfig: every size and switch of a model, in small validated dataclasses.

Read from the top: the paper's model (`PaperModel`), the later variants this lab trains and compares side by side
(`Variants`), then `TransformerConfig`, which joins them with the special tokens (special_tokens.py) and the options
that exist only to load an outside family (family_options.py). Each group checks its own fields in its own
__post_init__; TransformerConfig checks what ties two groups together. The fields stay flat (`cfg.d_model`,
`cfg.rope_theta`, `TransformerConfig(norm="rms")`), and so does config.json (`to_dict`, `from_dict`).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import ClassVar

from .config_checks import check_fields, flag, non_negative_int, one_of, optional, positive_int, probability
from .family_options import FamilyOptions
from .special_tokens import SpecialTokens

ARCHS = ("encoder-decoder", "decoder-only", "encoder-only")  # encoder-only: BERT, a masked-LM head on the encoder
POS_ENCODINGS = ("sinusoidal", "learned", "rope", "alibi")  # rope, alibi: relative, applied inside attention
ATTENTIONS = ("mha", "mla")  # mha: n_kv_heads key/value heads (MHA, GQA, MQA); mla: multi-head latent attention
NORMS = ("layer", "rms")  # LayerNorm (the paper), RMSNorm (Llama): transformer/norms.py
FFNS = ("standard", "swiglu")  # equation 2; SwiGLU's gated feed-forward (Llama): transformer/gated_feedforward.py

STACKS = {"encoder-decoder": ("encoder", "decoder"), "decoder-only": ("decoder",), "encoder-only": ("encoder",)}  # with layers


@dataclass
class PaperModel:
    """The paper's hyper-parameters; the defaults are its base model (Table 3, "base").

    `n_encoder_layers=None` means 6 for "encoder-decoder" and "encoder-only" and 0 for "decoder-only"; an
    "encoder-only" model (BERT) has no decoder: n_decoder_layers=0.
    """

    arch: str = "encoder-decoder"
    vocab_size: int = 1000
    d_model: int = 512
    n_heads: int = 8  # h
    d_ff: int = 2048
    n_encoder_layers: int | None = None  # N
    n_decoder_layers: int = 6  # N
    dropout: float = 0.1  # P_drop
    max_len: int = 512
    pos_encoding: str = "sinusoidal"  # section 3.5; "learned" is Table 3's row (E); "rope", "alibi" came later
    CHECKS: ClassVar[dict] = {"arch": one_of(ARCHS), "vocab_size": positive_int, "d_model": positive_int,
                              "n_heads": positive_int, "d_ff": positive_int,
                              "n_encoder_layers": optional(non_negative_int), "n_decoder_layers": non_negative_int,
                              "dropout": probability, "max_len": positive_int, "pos_encoding": one_of(POS_ENCODINGS)}

    def __post_init__(self):
        check_fields(self, PaperModel.CHECKS)
        if self.n_encoder_layers is None:
            self.n_encoder_layers = 0 if self.arch == "decoder-only" else 6
        for stack, n in (("encoder", self.n_encoder_layers), ("decoder", self.n_decoder_layers)):
            if (n > 0) != (stack in STACKS[self.arch]):
                raise ValueError(f"n_{stack}_layers: an arch={self.arch!r} model has "
                                 f"{'at least one' if stack in STACKS[self.arch] else 'no'} {stack} layer, got {n}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model: {self.d_model} is not divisible by n_heads={self.n_heads}")


@dataclass
class Variants:
    """Later variants of the attention and the blocks, which the Train tab compares with the paper's (each default
    is the paper's): fewer key/value heads (GQA, MQA) or a latent (MLA), pre-norm, RMSNorm, SwiGLU, no FFN."""

    n_kv_heads: int | None = None  # None = n_heads (MHA); 1 = MQA; a divisor of n_heads = GQA
    attention: str = "mha"  # "mla": keys and values rebuilt from a cached latent (transformer/latent_attention.py)
    kv_latent_dim: int | None = None  # MLA's latent size d_c; None = 4 * d_k (DeepSeek-V2's ratio)
    norm_first: bool = False  # False = post-norm, as in the paper; True: x + Sublayer(norm(x)) (GPT-2, Llama)
    norm: str = "layer"  # "rms": RMSNorm (Llama) instead of LayerNorm, in every sub-layer and the final norm
    ffn: str = "standard"  # "swiglu": SiLU(x W_gate) * (x W_up) W_down, Llama's gated feed-forward
    attention_only: bool = False  # True: layers without the feed-forward sub-layer (Olsson et al. 2022)
    CHECKS: ClassVar[dict] = {"n_kv_heads": optional(positive_int), "attention": one_of(ATTENTIONS),
                              "kv_latent_dim": optional(positive_int), "norm_first": flag, "norm": one_of(NORMS),
                              "ffn": one_of(FFNS), "attention_only": flag}

    def __post_init__(self):
        check_fields(self, Variants.CHECKS)
        if self.kv_latent_dim is not None and self.attention != "mla":
            raise ValueError("kv_latent_dim: only MLA has a latent; set attention='mla' or leave it unset")


@dataclass
class TransformerConfig(FamilyOptions, SpecialTokens, Variants, PaperModel):
    """The hyper-parameters of one model: the paper's (PaperModel) first, then the variants, the special tokens and
    the outside families' options (a dataclass takes its bases' fields from the last base to the first). Every bad
    value raises ValueError naming the field, so a UI can show it as it is."""

    def __post_init__(self):
        for group in (PaperModel, Variants, SpecialTokens, FamilyOptions):
            group.__post_init__(self)
        if self.n_kv_heads is None:
            self.n_kv_heads = self.n_heads
        if self.n_heads % self.n_kv_heads:
            raise ValueError(f"n_kv_heads: {self.n_kv_heads} does not divide n_heads={self.n_heads}")
        if self.attention == "mla":
            if self.n_kv_heads != self.n_heads:
                raise ValueError(f"n_kv_heads: MLA rebuilds a key and a value for every head from its latent; "
                                 f"leave n_kv_heads at n_heads={self.n_heads}, got {self.n_kv_heads}")
            if self.kv_latent_dim is None:
                self.kv_latent_dim = 4 * self.d_k
        if self.pos_encoding == "rope" and self.d_k % (4 if self.attention == "mla" else 2):
            raise ValueError(f"pos_encoding: RoPE rotates pairs of dimensions, so d_k = d_model / n_heads must be "
                             f"even{' and d_k / 2 too (MLA rotates a d_k / 2 part)' if self.attention == 'mla' else ''}"
                             f", got d_k={self.d_k}")
        for name in ("pad_id", "bos_id", "eos_id", "decoder_start_id"):
            value = getattr(self, name)
            if value is not None and value >= self.vocab_size:
                raise ValueError(f"{name}: must be a token id in [0, vocab_size={self.vocab_size}), got {value!r}")

    @property
    def d_k(self) -> int:
        """Size of one head's queries, keys and values: d_k = d_v = d_model / h (section 3.2.2)."""
        return self.d_model // self.n_heads

    @property
    def d_rope(self) -> int:
        """Size d_R of MLA's decoupled rotary query/key part: d_k / 2 as in DeepSeek-V2; 0 without RoPE or MLA."""
        return self.d_k // 2 if self.attention == "mla" and self.pos_encoding == "rope" else 0

    @property
    def is_encoder_decoder(self) -> bool:
        return self.arch == "encoder-decoder"

    @property
    def is_encoder_only(self) -> bool:
        """BERT-style: the encoder alone, bidirectional, with a masked-LM head (no decoder, no generation)."""
        return self.arch == "encoder-only"

    def to_dict(self) -> dict:
        """Every field, flat (config.json's "model"): the paper's first."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "TransformerConfig":
        """A stored config. One written before `attention_bias` existed describes a model with biases on its
        attention projections (every model had them then), so a missing key means True."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown config keys: {', '.join(unknown)}")
        return cls(**{"attention_bias": True, **data})
