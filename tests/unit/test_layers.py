"""Encoder and decoder layers against torch.nn.TransformerEncoderLayer / TransformerDecoderLayer on the same
weights, and the sub-layer connection and feed-forward network against their equations."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from transformer.layers import DecoderLayer, EncoderLayer, FeedForward, SublayerConnection
from transformer.points import name_points, points
from tests.conftest import copy_mha_from_torch as copy_from_torch, tiny_config

D, H, D_FF = 32, 4, 64


def copy_ffn_and_norms(ours, ref, n_norms: int) -> None:
    with torch.no_grad():
        ours.ffn.w_1.load_state_dict(ref.linear1.state_dict())
        ours.ffn.w_2.load_state_dict(ref.linear2.state_dict())
        for i in range(n_norms):
            ref_norm = getattr(ref, f"norm{i + 1}")
            ref_norm.weight.normal_()  # LayerNorm starts at (1, 0); random values make the check stricter
            ref_norm.bias.normal_()
            ours.sublayers[i].norm.load_state_dict(ref_norm.state_dict())


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer_matches_torch(norm_first, activation):
    """Oracle: torch.nn.TransformerEncoderLayer(batch_first=True) with the same weights, with a padding mask,
    post-norm (the paper) and pre-norm, ReLU and GELU."""
    torch.manual_seed(0)
    ref = nn.TransformerEncoderLayer(D, H, D_FF, dropout=0.0, activation=activation, batch_first=True,
                                     norm_first=norm_first)
    ours = EncoderLayer(tiny_config(d_model=D, n_heads=H, d_ff=D_FF, norm_first=norm_first, activation=activation,
                                    attention_bias=True))  # torch's layers have projection biases
    copy_from_torch(ours.self_attn, ref.self_attn)
    copy_ffn_and_norms(ours, ref, 2)
    x = torch.randn(2, 6, D)
    keep = torch.tensor([[True] * 6, [True] * 4 + [False] * 2])
    expected = ref(x, src_key_padding_mask=~keep)
    name_points(ours)
    with points(read=["self_attn.pattern"]) as seen:  # the explicit path: the weights are read
        got = ours(x, keep[:, None, None, :])
    weights = seen["self_attn.pattern"]
    fused = ours(x, keep[:, None, None, :])
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=0)
    torch.testing.assert_close(fused, expected, atol=1e-5, rtol=0)
    assert torch.all(weights[1, :, :, 4:] == 0)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_matches_torch(norm_first):
    """Oracle: torch.nn.TransformerDecoderLayer(batch_first=True) with the same weights: causal self-attention,
    cross-attention over a padded memory, then the FFN, each in its residual sub-layer."""
    torch.manual_seed(1)
    ref = nn.TransformerDecoderLayer(D, H, D_FF, dropout=0.0, batch_first=True, norm_first=norm_first)
    ours = DecoderLayer(tiny_config(d_model=D, n_heads=H, d_ff=D_FF, norm_first=norm_first, attention_bias=True))
    copy_from_torch(ours.self_attn, ref.self_attn)
    copy_from_torch(ours.cross_attn, ref.multihead_attn)
    copy_ffn_and_norms(ours, ref, 3)
    x, memory = torch.randn(2, 5, D), torch.randn(2, 7, D)
    keep = torch.tensor([[True] * 7, [True] * 3 + [False] * 4])
    causal = nn.Transformer.generate_square_subsequent_mask(5) == float("-inf")  # True = masked (torch)
    expected = ref(x, memory, tgt_mask=causal, memory_key_padding_mask=~keep)
    name_points(ours)
    for read in ([], ["self_attn.pattern", "cross_attn.pattern"]):  # fused, then explicit
        with points(read=read) as seen:
            got = ours(x, None, memory, keep[:, None, None, :])
        torch.testing.assert_close(got, expected, atol=1e-5, rtol=0)
    self_w, cross_w = seen["self_attn.pattern"], seen["cross_attn.pattern"]
    assert torch.all(self_w.triu(1) == 0) and torch.all(cross_w[1, :, :, 3:] == 0)


def test_decoder_only_layer_is_the_decoder_layer_without_cross_attention():
    """Invariant: with cross_attention=False the layer has no cross_attn and two sub-layers, and equals
    torch.nn.TransformerEncoderLayer with a causal mask (self-attention + FFN)."""
    torch.manual_seed(2)
    ref = nn.TransformerEncoderLayer(D, H, D_FF, dropout=0.0, batch_first=True)
    ours = DecoderLayer(tiny_config("decoder-only", d_model=D, n_heads=H, d_ff=D_FF, attention_bias=True),
                        cross_attention=False)
    assert ours.cross_attn is None and len(ours.sublayers) == 2
    copy_from_torch(ours.self_attn, ref.self_attn)
    copy_ffn_and_norms(ours, ref, 2)
    x = torch.randn(2, 5, D)
    causal = nn.Transformer.generate_square_subsequent_mask(5) == float("-inf")
    expected = ref(x, src_mask=causal, is_causal=True)
    got = ours(x, None)
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=0)


def test_feed_forward_is_equation_2():
    """Oracle: FFN(x) = max(0, x W1 + b1) W2 + b2 (equation 2), written out with explicit matrix products."""
    torch.manual_seed(3)
    ffn = FeedForward(D, D_FF)
    x = torch.randn(3, D)
    w1, b1, w2, b2 = ffn.w_1.weight, ffn.w_1.bias, ffn.w_2.weight, ffn.w_2.bias
    torch.testing.assert_close(ffn(x), torch.clamp(x @ w1.T + b1, min=0) @ w2.T + b2)


def test_sublayer_connection_post_norm_and_pre_norm():
    """Oracle: post-norm LayerNorm(x + Sublayer(x)) (section 3.1) and pre-norm x + Sublayer(LayerNorm(x))."""
    x = torch.randn(2, 3, D)
    sub = lambda h: 2 * h + 1  # noqa: E731
    post, pre = SublayerConnection(D, 0.0, norm_first=False), SublayerConnection(D, 0.0, norm_first=True)
    out = post(x, sub)
    torch.testing.assert_close(out, F.layer_norm(x + 2 * x + 1, (D,)))
    out = pre(x, sub)
    torch.testing.assert_close(out, x + 2 * F.layer_norm(x, (D,)) + 1)
