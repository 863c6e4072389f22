"""The Llama blocks as modules: RMSNorm, the SwiGLU feed-forward, RoPE's halves layout, and their config fields."""
from __future__ import annotations

import pytest
import torch

from transformer import Transformer, TransformerConfig
from transformer.gated_feedforward import SwiGLU
from transformer.norms import RMSNorm
from transformer.positions.rotary import RotaryEmbedding, rope_angles, rotate, rotate_halves


def test_rmsnorm_equals_torchs_rmsnorm():
    """Oracle: torch.nn.RMSNorm with the same gain and eps (x / sqrt(mean(x^2) + eps) * g), on vectors of very
    different scales; unlike LayerNorm it keeps the mean (a constant vector is not sent to 0)."""
    x = torch.randn(3, 5, 16) * torch.tensor([0.01, 1.0, 100.0])[:, None, None]
    ours, peer = RMSNorm(16, eps=1e-3), torch.nn.RMSNorm(16, eps=1e-3)
    with torch.no_grad():
        ours.weight.copy_(torch.linspace(0.5, 2.0, 16))
        peer.weight.copy_(ours.weight)
    torch.testing.assert_close(ours(x), peer(x))
    assert ours(torch.full((1, 16), 3.0)).abs().min() > 0.4


def test_swiglu_equals_transformers_llama_mlp():
    """Oracle: transformers' LlamaMLP (down_proj(silu(gate_proj(x)) * up_proj(x))) with the same three matrices."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaMLP

    peer = LlamaMLP(LlamaConfig(hidden_size=16, intermediate_size=40, num_attention_heads=4))
    ours = SwiGLU(16, 40)
    with torch.no_grad():
        ours.w_gate.weight.copy_(peer.gate_proj.weight)
        ours.w_up.weight.copy_(peer.up_proj.weight)
        ours.w_down.weight.copy_(peer.down_proj.weight)
    x = torch.randn(2, 7, 16)
    torch.testing.assert_close(ours(x), peer(x))
    assert ours.w_gate.bias is None


def test_halves_layout_is_the_interleaved_rotation_of_permuted_dimensions():
    """Invariant: pairing (x_i, x_i+d/2) is RoFormer's rotation of (x_2i, x_2i+1) after moving dimension i to 2i and
    i + d/2 to 2i + 1; and scores still depend only on the distance n - m."""
    d_k, T = 8, 6
    x = torch.randn(2, T, d_k)
    angles = rope_angles(torch.arange(T), d_k).float()
    to_pairs = torch.stack([torch.arange(d_k // 2), torch.arange(d_k // 2) + d_k // 2], dim=-1).flatten()
    back = torch.argsort(to_pairs)
    torch.testing.assert_close(rotate_halves(x, angles), rotate(x[..., to_pairs], angles)[..., back])
    rope = RotaryEmbedding(d_k, 64, base=100000.0, layout="halves")
    q, k = torch.randn(d_k), torch.randn(d_k)
    score = lambda m, n: (rope(q.expand(1, 1, 64, d_k))[0, 0, m] @ rope(k.expand(1, 1, 64, d_k))[0, 0, n])  # noqa
    torch.testing.assert_close(score(3, 10), score(20, 27), atol=1e-5, rtol=0)
    assert abs(score(3, 10) - score(3, 11)) > 1e-3


@pytest.mark.parametrize("field, value", [("norm", "batch"), ("ffn", "geglu"), ("rope_layout", "spiral"),
                                          ("rope_theta", 1.0), ("ffn_bias", 1), ("type_vocab_size", -1)])
def test_bad_new_fields_are_refused_by_name(field, value):
    """Invariant: each new config field is validated, the error naming it."""
    with pytest.raises(ValueError, match=rf"^{field}:"):
        TransformerConfig(arch="decoder-only", **{field: value})


def test_a_llama_shaped_model_has_no_biases_and_counts_its_parameters():
    """Invariant: RMSNorm + SwiGLU without biases: every parameter is a matrix or a norm gain, and the count is
    V d + L (4 d^2 (with GQA: 2 d^2 + 2 d d_kv) + 3 d d_ff + 2 d) + d."""
    cfg = TransformerConfig(arch="decoder-only", vocab_size=100, d_model=32, n_heads=4, n_kv_heads=2, d_ff=48,
                            n_decoder_layers=2, norm="rms", ffn="swiglu", ffn_bias=False, pos_encoding="rope",
                            rope_layout="halves", scale_embeddings=False, norm_first=True)
    model = Transformer(cfg)
    assert not [n for n, _ in model.named_parameters() if n.endswith("bias")]
    d, d_kv = 32, 2 * 8
    per_layer = 2 * d * d + 2 * d * d_kv + 3 * d * 48 + 2 * d
    assert sum(p.numel() for p in model.parameters()) == 100 * d + 2 * per_layer + d
