"""Attention kinds and head ids: the one owner of "which attention" and "which head".

`AttentionKind` is a str enum, so a kind equals its text ("encoder self", "decoder self", "cross") and records keyed
by the text still find it. Each kind carries where its modules are (`stack`, `module`), its field in AttentionMaps
and HeadMask (`field`), its mask rule (`causal`: only decoder self-attention hides later keys) and its named points
(`point`). `HeadId` is one head of one kind, written one way ("decoder self 1.0": kind, layer.head).
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import torch
from torch import Tensor

from .attention import causal_mask
from .points import point_name


class AttentionKind(str, Enum):
    ENCODER_SELF = "encoder self"
    DECODER_SELF = "decoder self"
    CROSS = "cross"

    def __str__(self) -> str:
        return self.value

    @property
    def stack(self) -> str:
        """The model's ModuleList of layers this kind lives in: "encoder" or "decoder"."""
        return "encoder" if self is AttentionKind.ENCODER_SELF else "decoder"

    @property
    def module(self) -> str:
        """The attention module's attribute in its layer: "self_attn" or "cross_attn"."""
        return "cross_attn" if self is AttentionKind.CROSS else "self_attn"

    @property
    def field(self) -> str:
        """Its field in AttentionMaps and HeadMask: "encoder_self", "decoder_self", "cross"."""
        return self.name.lower()

    @property
    def causal(self) -> bool:
        """The mask rule: only decoder self-attention hides later keys (the others see every real token)."""
        return self is AttentionKind.DECODER_SELF

    def mask(self, T: int, S: int) -> Tensor:
        """(T, S) bool, True where a query may attend to a key by this kind's mask rule (padding aside)."""
        return causal_mask(T, S)[0, 0] if self.causal else torch.ones(T, S, dtype=torch.bool)

    def point(self, layer: int, name: str) -> str:
        """The named point `name` (q, k, v, pattern, z, ...) of this kind's attention in `layer`."""
        return point_name(self.stack, layer, f"{self.module}.{name}")

    def n_layers(self, config) -> int:
        """How many layers of this kind a model of `config` has (0 when it has none)."""
        if self is AttentionKind.ENCODER_SELF:
            return config.n_encoder_layers
        return config.n_decoder_layers if self is AttentionKind.DECODER_SELF or config.is_encoder_decoder else 0

    def modules(self, model) -> list:
        """This kind's attention module of every layer of `model`, in layer order."""
        return [getattr(layer, self.module) for layer in getattr(model, self.stack)[:self.n_layers(model.config)]]

    @classmethod
    def of(cls, config) -> list[AttentionKind]:
        """The kinds a model of `config` has, in order: all three for an encoder-decoder, decoder self otherwise."""
        return [kind for kind in cls if kind.n_layers(config)]

    @classmethod
    def parse(cls, text: str) -> AttentionKind:
        try:
            return cls(text)
        except ValueError:
            raise ValueError(f"kind: must be one of {', '.join(repr(k.value) for k in cls)}, got {text!r}") from None


@dataclass(frozen=True, order=True)
class HeadId:
    """One attention head: its kind, layer and head index. Text form: "decoder self 1.0" (kind, then layer.head),
    `label` the short "1.0" where the kind is known from the context."""

    kind: AttentionKind
    layer: int
    head: int

    def __post_init__(self):
        object.__setattr__(self, "kind", AttentionKind.parse(self.kind))

    @property
    def label(self) -> str:
        return f"{self.layer}.{self.head}"

    def __str__(self) -> str:
        return f"{self.kind} {self.label}"

    @classmethod
    def parse(cls, text: str, kind: AttentionKind | str | None = None) -> HeadId:
        """The head `str(head)` wrote, or, with `kind` given, the head its `label` wrote."""
        kind_text, _, label = text.strip().rpartition(" ")
        place = layer_and_head(label)
        if place is None or (kind is None) == (not kind_text):
            form = "'layer.head'" if kind is not None else "'<kind> layer.head'"
            raise ValueError(f"head: must be written {form}, e.g. '1.0', got {text!r}")
        return cls(kind if kind is not None else kind_text, *place)


def layer_and_head(label: str) -> tuple[int, int] | None:
    """The (layer, head) a `HeadId.label` wrote ("1.0" -> (1, 0)), None for any other text."""
    layer, dot, head = str(label).strip().partition(".")
    return (int(layer), int(head)) if dot and layer.isdigit() and head.isdigit() else None
