"""RoPE and ALiBi: relative positions inside attention (transformer/positions/rotary.py, transformer/positions/alibi.py)."""
from __future__ import annotations

import math

import pytest
import torch

from tests.conftest import seeded_model, tiny_config, with_weights
from transformer.positions.alibi import ALiBi, alibi_bias, alibi_slopes
from transformer.attention import KVCache, MultiHeadAttention
from transformer.positions.rotary import RotaryEmbedding, rope_angles, rope_frequencies, rotate, rotated_dot_products

D, H = 32, 4


def test_rope_frequencies_are_the_sinusoidal_tables():
    """Oracle: theta_i = 10000^(-2i/d_k), the frequencies of the paper's sinusoidal table."""
    d_k = 8
    expected = torch.tensor([10000 ** (-2 * i / d_k) for i in range(d_k // 2)], dtype=torch.float64)
    torch.testing.assert_close(rope_frequencies(d_k), expected)
    torch.testing.assert_close(rope_angles(torch.tensor([0, 3]), d_k), torch.stack([0 * expected, 3 * expected]))


def test_rotate_turns_each_pair_by_its_angle_and_keeps_the_norm():
    """Oracle: pair (x0, x1) at angle a becomes (x0 cos a - x1 sin a, x0 sin a + x1 cos a); lengths are kept."""
    x = torch.tensor([[1.0, 0.0, 0.0, 2.0]], dtype=torch.float64)  # (T=1, d_k=4)
    angles = torch.tensor([[math.pi / 2, math.pi]], dtype=torch.float64)  # (1, 2)
    torch.testing.assert_close(rotate(x, angles), torch.tensor([[0.0, 1.0, 0.0, -2.0]], dtype=torch.float64))
    y = torch.randn(3, 5, 16, generator=torch.Generator().manual_seed(0))
    rotated = rotate(y, rope_angles(torch.arange(5), 16))
    torch.testing.assert_close(rotated.norm(dim=-1), y.norm(dim=-1))


def test_rope_scores_depend_only_on_relative_position():
    """Invariant: <R_(m+c) q, R_(n+c) k> = <R_m q, R_n k> for every shift c (float64, any q, k)."""
    g = torch.Generator().manual_seed(1)
    q, k = torch.randn(6, 16, generator=g, dtype=torch.float64), torch.randn(6, 16, generator=g, dtype=torch.float64)
    base = rotate(q, rope_angles(torch.arange(6), 16)) @ rotate(k, rope_angles(torch.arange(6), 16)).T  # (6, 6)
    for shift in (1, 17, 1000):
        positions = torch.arange(6) + shift
        shifted = rotate(q, rope_angles(positions, 16)) @ rotate(k, rope_angles(positions, 16)).T
        torch.testing.assert_close(shifted, base)


def test_rope_attention_weights_are_unchanged_when_every_position_shifts():
    """Invariant, in the real module: the same tokens at positions c .. c+T-1 (behind c cached positions that the
    mask hides) get exactly the attention weights they get at 0 .. T-1."""
    torch.manual_seed(2)
    rope = RotaryEmbedding(D // H, max_len=16)
    mha = MultiHeadAttention(D, H, position=rope).eval()
    x = torch.randn(1, 5, D, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        out, weights = with_weights(mha, x, x, x, is_causal=True)
        for shift in (3, 40):  # 40: past the precomputed table
            cache = KVCache()
            junk = torch.randn(1, shift, D)
            mha(junk, junk, junk, is_causal=True, cache=cache)
            hide = torch.arange(shift + 5) >= shift  # (S,): the junk keys are masked
            out_s, weights_s = with_weights(mha, x, x, x, hide[None, None, None, :], is_causal=True, cache=cache)
            torch.testing.assert_close(weights_s[..., shift:], weights, atol=1e-5, rtol=0)
            torch.testing.assert_close(out_s, out, atol=1e-5, rtol=0)


def test_rope_beyond_the_table_equals_the_formula():
    """Oracle: angles past max_len are computed on the fly and equal rope_angles."""
    rope = RotaryEmbedding(8, max_len=4)
    torch.testing.assert_close(rope.angles_for(2, 6), rope_angles(torch.arange(2, 8), 8).float())


def test_rotated_dot_products_peak_at_distance_zero_and_decay():
    """Invariant: for q = k = ones, the score is |q|^2 at distance 0, symmetric in the sign of the distance, and
    smaller on average far away than near (RoFormer's long-term decay)."""
    q = torch.ones(64)
    distances = torch.arange(-200, 201)
    scores = rotated_dot_products(q, q, distances)
    assert scores[200] == pytest.approx(64.0, abs=1e-4)
    torch.testing.assert_close(scores, scores.flip(0), atol=1e-4, rtol=0)
    assert scores.abs().max() <= 64.0 + 1e-4
    assert scores[200 + 100:].abs().mean() < scores[200 + 1: 200 + 20].abs().mean()


@pytest.mark.parametrize("n_heads, expected", [
    (8, [2 ** -k for k in range(1, 9)]),
    (4, [2 ** -2, 2 ** -4, 2 ** -6, 2 ** -8]),
    (1, [2 ** -8]),
    (6, [2 ** -2, 2 ** -4, 2 ** -6, 2 ** -8, 2 ** -1, 2 ** -3]),  # 4 of a power of two, then every other of 8
])
def test_alibi_slopes_follow_the_papers_geometric_sequence(n_heads, expected):
    """Oracle: the slopes of Press et al.: start 2^(-8/n), ratio 2^(-8/n); other head counts as their code does."""
    torch.testing.assert_close(alibi_slopes(n_heads), torch.tensor(expected))


def test_alibi_bias_is_minus_slope_times_distance():
    """Oracle: bias[h, i, j] = -m_h |i - j|; with a cache the queries are the last positions."""
    slopes = alibi_slopes(2)
    bias = alibi_bias(slopes, torch.arange(3), torch.arange(3))
    for h in range(2):
        for i in range(3):
            for j in range(3):
                assert bias[h, i, j] == pytest.approx(-float(slopes[h]) * abs(i - j))
    torch.testing.assert_close(ALiBi(2)(T=1, S=3), bias[:, 2:])


def test_alibi_attention_equals_softmax_of_scores_plus_bias():
    """Oracle: with ALiBi the module's weights are softmax(q k^T / sqrt(d_k) - m_h |i - j|) under the causal
    mask, and the fused path (no weights) gives the same output as the explicit one."""
    torch.manual_seed(4)
    mha = MultiHeadAttention(D, H, position=ALiBi(H)).eval()
    x = torch.randn(2, 6, D, generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        out, weights = with_weights(mha, x, x, x, is_causal=True)
        fused = mha(x, x, x, is_causal=True)
        q = (x @ mha.W_Q).view(2, 6, H, D // H).transpose(1, 2)  # no biases: the paper's projections
        k = (x @ mha.W_K).view(2, 6, H, D // H).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(D // H) + alibi_bias(alibi_slopes(H), torch.arange(6), torch.arange(6))
    scores = scores.masked_fill(~torch.ones(6, 6, dtype=torch.bool).tril(), float("-inf"))
    torch.testing.assert_close(weights, scores.softmax(-1), atol=1e-6, rtol=0)
    torch.testing.assert_close(fused, out, atol=1e-5, rtol=0)


def _alternating(batch: int, length: int, generator: torch.Generator) -> torch.Tensor:
    """Sequences a b a b ...: two random tokens (3..16) alternating; the next token is the one two back."""
    pair = torch.randint(3, 17, (batch, 2), generator=generator)
    return pair.repeat(1, length // 2 + 1)[:, :length]  # (batch, length)


@pytest.mark.slow
def test_alibi_model_trained_at_length_L_runs_at_2L():
    """Behaviour (Press et al.'s claim): an ALiBi decoder trained on 12-token sequences predicts as well at
    positions 12..23 of a 24-token input, which a model with a position table refuses to read at all."""
    torch.manual_seed(0)
    L = 12
    model = seeded_model(tiny_config("decoder-only", pos_encoding="alibi", n_decoder_layers=1, max_len=L)).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(1)
    for _ in range(150):
        x = _alternating(32, L + 1, g)
        loss = torch.nn.functional.cross_entropy(model(x[:, :-1]).logits.flatten(0, 1), x[:, 1:].flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    x = _alternating(64, 2 * L + 1, torch.Generator().manual_seed(2))
    with torch.no_grad():
        predicted = model(x[:, :-1]).logits.argmax(-1)  # (64, 2L)
    correct = (predicted == x[:, 1:])[:, 2:].float()  # from position 2 on, the answer is in the context
    assert correct[:, : L - 2].mean() >= 0.95, "precondition: it learned the task at the trained length"
    assert correct[:, L - 2:].mean() >= 0.95  # positions L .. 2L - 1: never seen in training
    table = seeded_model(tiny_config("decoder-only", pos_encoding="sinusoidal", max_len=L))
    with pytest.raises(ValueError, match="max_len"):
        table(x[:, :-1])


def test_rope_and_alibi_models_have_no_position_parameters():
    """Invariant: relative schemes add no parameters and no saved tensors (RoPE's table is recomputed)."""
    for kind in ("rope", "alibi"):
        model = seeded_model(tiny_config("encoder-decoder", pos_encoding=kind))
        assert model.pos_encoding is None
        assert not any("position" in name for name in model.state_dict())
        absolute = seeded_model(tiny_config("encoder-decoder", pos_encoding="sinusoidal"))
        assert sum(p.numel() for p in model.parameters()) == sum(p.numel() for p in absolute.parameters())
