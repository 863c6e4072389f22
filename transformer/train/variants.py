"""Which variants a comparison trains (transformer.train.compare): each a name and the config fields it sets over
the shared config; MHA / GQA / MQA by their key/value heads, MLA, the position schemes, the blocks, and the named
sets (COMPARISONS)."""
from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

from ..config import TransformerConfig


@dataclass(frozen=True)
class Variant:
    """One model of a comparison: its name and the config fields it sets; everything else is the shared config."""

    name: str  # "MHA", "GQA", "MQA", "MLA", "RoPE", ...
    n_kv_heads: int | None = None  # None: n_heads
    attention: str = "mha"
    pos_encoding: str | None = None  # None: the shared config's
    kv_latent_dim: int | None = None  # MLA only; None: 4 d_k
    norm: str | None = None  # None: the shared config's ("layer", "rms")
    ffn: str | None = None  # None: the shared config's ("standard", "swiglu")
    d_ff: int | None = None  # None: the shared config's

    def config(self, base: TransformerConfig) -> TransformerConfig:
        """The shared config with this variant's fields (validated: a RoPE variant of an odd d_k is refused)."""
        mla = self.attention == "mla"
        return replace(base, attention=self.attention, n_kv_heads=None if mla else self.n_kv_heads,
                       kv_latent_dim=self.kv_latent_dim if mla else None,
                       pos_encoding=self.pos_encoding or base.pos_encoding, norm=self.norm or base.norm,
                       ffn=self.ffn or base.ffn, d_ff=self.d_ff or base.d_ff)



def gqa_choices(n_heads: int) -> list[int]:
    """The n_kv_heads values that make grouped-query attention: divisors of n_heads strictly between 1 and n_heads."""
    return [g for g in range(2, n_heads) if n_heads % g == 0]


def gqa_skip_note(n_heads: int) -> str | None:
    """Why no GQA variant can be trained with n_heads query heads, or None when one can."""
    if gqa_choices(n_heads):
        return None
    if n_heads == 1:
        return ("GQA and MQA skipped: with n_heads=1 there is one key/value head whatever n_kv_heads is, so MHA, GQA "
                "and MQA are the same model. Use 4, 6 or 8 heads to compare three variants.")
    return (f"GQA skipped: n_heads={n_heads} is prime, so no n_kv_heads strictly between 1 and {n_heads} divides it "
            f"(grouped-query attention needs equal groups of query heads). Comparing MHA and MQA only; use 4, 6 or 8 "
            f"heads to compare three variants.")


def kv_head_variants(n_heads: int, gqa_kv_heads: int | None = None) -> list[Variant]:
    """MHA (n_kv_heads = n_heads), GQA (a divisor: `gqa_kv_heads`, else the one nearest sqrt(n_heads), the geometric
    middle, the larger on a tie: 4 heads -> 2, 6 -> 3, 8 -> 4) and MQA (1). GQA is left out when n_heads has no divisor strictly between 1 and n_heads
    (`gqa_skip_note` says so); with n_heads = 1 only MHA remains."""
    if not isinstance(n_heads, int) or n_heads < 1:
        raise ValueError(f"n_heads: must be a positive integer, got {n_heads!r}")
    choices = gqa_choices(n_heads)
    if gqa_kv_heads is not None and gqa_kv_heads not in choices:
        allowed = ", ".join(map(str, choices)) or f"none: n_heads={n_heads} has no divisor between 1 and itself"
        raise ValueError(f"n_kv_heads: GQA needs a divisor of n_heads={n_heads} strictly between 1 and {n_heads} "
                         f"({allowed}), got {gqa_kv_heads}")
    variants = [Variant("MHA", n_heads)]
    if choices:
        middle = gqa_kv_heads or min(choices, key=lambda g: (Fraction(max(g * g, n_heads), min(g * g, n_heads)), -g))
        variants.append(Variant("GQA", middle))
    if n_heads > 1:
        variants.append(Variant("MQA", 1))
    return variants


def attention_variants(n_heads: int, gqa_kv_heads: int | None = None) -> list[Variant]:
    """MHA, GQA, MQA (as kv_head_variants) and MLA with its default latent (4 d_k)."""
    return kv_head_variants(n_heads, gqa_kv_heads) + [Variant("MLA", attention="mla")]


def position_variants(base: TransformerConfig | None = None) -> list[Variant]:
    """Multi-head attention with each position scheme: sinusoidal (the paper), learned, RoPE, ALiBi; with `base`,
    the scheme `base` already has is left out (it is the MHA row of a combined comparison)."""
    names = {"sinusoidal": "sinusoidal", "learned": "learned", "rope": "RoPE", "alibi": "ALiBi"}
    return [Variant(name, pos_encoding=kind) for kind, name in names.items()
            if base is None or kind != base.pos_encoding]


def block_variants(base: TransformerConfig) -> list[Variant]:
    """The paper's blocks (LayerNorm, equation 2's feed-forward), RMSNorm, SwiGLU at 2/3 d_ff (Shazeer 2020 keeps
    the parameter count so), and both (Llama's blocks)."""
    d_ff = max(1, round(2 * base.d_ff / 3))
    return [Variant("LayerNorm", norm="layer", ffn="standard", d_ff=base.d_ff), Variant("RMSNorm", norm="rms"),
            Variant("SwiGLU", norm="layer", ffn="swiglu", d_ff=d_ff),
            Variant("RMSNorm + SwiGLU", norm="rms", ffn="swiglu", d_ff=d_ff)]


def comparison_variants(which: str, base: TransformerConfig, gqa_kv_heads: int | None = None) -> list[Variant]:
    """The variants of a named comparison (COMPARISONS) for models shaped like `base`; one such a model cannot be
    is a ValueError."""
    if which not in COMPARISONS:
        raise ValueError(f"comparison: must be one of {', '.join(COMPARISONS)}, got {which!r}")
    if which == "kv-heads":
        variants = kv_head_variants(base.n_heads, gqa_kv_heads)
    elif which == "attention":
        variants = attention_variants(base.n_heads, gqa_kv_heads)
    elif which == "positions":
        variants = position_variants()
    elif which == "blocks":
        variants = block_variants(base)
    else:
        variants = attention_variants(base.n_heads, gqa_kv_heads) + position_variants(base)
    for variant in variants:
        variant.config(base)  # refuses a variant this model cannot be (RoPE with an odd d_k)
    return variants


COMPARISONS = {"kv-heads": "MHA / GQA / MQA", "attention": "MHA / GQA / MQA / MLA",
               "positions": "sinusoidal / learned / RoPE / ALiBi",
               "blocks": "LayerNorm / RMSNorm / SwiGLU / RMSNorm + SwiGLU",
               "all": "MHA / GQA / MQA / MLA + learned / RoPE / ALiBi"}
