"""Attention kinds and head ids (transformer/heads.py) against the model they describe: each kind's modules, layer
count, point names and mask rule, and the one text form of a head."""
from __future__ import annotations

import pytest
import torch

from transformer.attention import causal_mask
from transformer.heads import AttentionKind, HeadId
from transformer.model import AttentionMaps, HeadMask
from tests.conftest import seeded_model, tiny_config


@pytest.mark.parametrize("arch", ["encoder-decoder", "decoder-only"])
def test_each_kind_names_the_modules_and_points_the_model_has(arch):
    """Invariant: a kind's modules are the model's attention modules of that kind in layer order (by identity), its
    layer count is theirs, each of its point names is in model.point_names(), and its field is a field of both
    AttentionMaps and HeadMask. A decoder-only model has only decoder self-attention."""
    model = seeded_model(tiny_config(arch, n_decoder_layers=3))
    kinds = AttentionKind.of(model.config)
    assert kinds == (list(AttentionKind) if arch == "encoder-decoder" else [AttentionKind.DECODER_SELF])
    expected = {AttentionKind.ENCODER_SELF: [layer.self_attn for layer in model.encoder],
                AttentionKind.DECODER_SELF: [layer.self_attn for layer in model.decoder],
                AttentionKind.CROSS: [layer.cross_attn for layer in model.decoder if layer.cross_attn is not None]}
    names = set(model.point_names())
    for kind in AttentionKind:
        modules = kind.modules(model)
        assert [id(m) for m in modules] == [id(m) for m in expected[kind]]
        assert kind.n_layers(model.config) == len(modules) == (len(modules) if kind in kinds else 0)
        for i, module in enumerate(modules):
            assert kind.point(i, "z") in names and module.z.name == kind.point(i, "z")
        assert hasattr(AttentionMaps(), kind.field) and hasattr(HeadMask(), kind.field)


def test_the_mask_rule_is_the_one_attention_applies():
    """Oracle: the attention module's causal mask (transformer.attention.causal_mask) for decoder self-attention,
    nothing hidden for the other two; a kind equals its text, and an unknown text is refused by name."""
    assert torch.equal(AttentionKind.DECODER_SELF.mask(4, 4), causal_mask(4)[0, 0])
    assert AttentionKind.CROSS.mask(3, 5).all() and AttentionKind.ENCODER_SELF.mask(5, 5).all()
    assert AttentionKind("encoder self") is AttentionKind.ENCODER_SELF and AttentionKind.CROSS == "cross"
    assert f"{AttentionKind.CROSS}" == str(AttentionKind.CROSS) == "cross"
    with pytest.raises(ValueError, match="'self'"):
        AttentionKind.parse("self")


def test_a_head_has_one_text_form_and_reads_it_back():
    """Invariant: parse(str(head)) is the head, and parse(head.label, kind) too, for every head of a model; the
    forms are "decoder self 1.0" and "1.0"; anything else is refused with the form it should have."""
    for kind in AttentionKind:
        for layer, head in ((0, 0), (1, 3), (11, 10)):
            h = HeadId(kind, layer, head)
            assert HeadId.parse(str(h)) == h == HeadId.parse(h.label, kind)
    assert str(HeadId("decoder self", 1, 0)) == "decoder self 1.0" and HeadId("cross", 1, 0).label == "1.0"
    for bad in ("L1H0", "1", "1.x", "decoder self 1.0 2", "self 1.0"):
        with pytest.raises(ValueError):
            HeadId.parse(bad)
    with pytest.raises(ValueError, match="'layer.head'"):
        HeadId.parse("cross 1.0", "cross")  # with the kind given, only the label
