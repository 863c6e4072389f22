"""Embeddings and positional encodings: the paper's formula, buffers vs parameters, the sqrt(d_model) scale."""
from __future__ import annotations

import math

import pytest
import torch

from transformer.embeddings import TokenEmbedding
from transformer.positions import LearnedPositionalEncoding, SinusoidalPositionalEncoding, sinusoidal_table


def pe_by_hand(pos: int, dim: int, d_model: int) -> float:
    """Section 3.5: PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model))."""
    two_i = dim - dim % 2
    angle = pos / 10000 ** (two_i / d_model)
    return math.sin(angle) if dim % 2 == 0 else math.cos(angle)


@pytest.mark.parametrize("d_model", [64, 512])
def test_sinusoidal_table_equals_the_papers_formula(d_model):
    """Oracle: the formula of section 3.5 evaluated with math.sin / math.cos at spot positions and dimensions."""
    table = sinusoidal_table(50, d_model)
    for pos in (0, 1, 17, 49):
        for dim in (0, 1, 10, 11, d_model - 2, d_model - 1):
            assert table[pos, dim].item() == pytest.approx(pe_by_hand(pos, dim, d_model), abs=1e-6), (pos, dim)


def test_sinusoidal_table_position_zero_is_sin0_cos0():
    """Oracle: at pos 0 every angle is 0, so even dimensions are sin 0 = 0 and odd ones cos 0 = 1."""
    row = sinusoidal_table(4, 10)[0]
    assert torch.equal(row, torch.tensor([0., 1.] * 5))


def test_sinusoidal_table_odd_d_model_drops_the_last_cosine():
    """Oracle: with d_model=5 the last column is the sine of pair 2i=4, by hand."""
    table = sinusoidal_table(20, 5)
    for pos in (1, 7, 19):
        for dim in range(5):
            assert table[pos, dim].item() == pytest.approx(pe_by_hand(pos, dim, 5), abs=1e-6)


def test_sinusoidal_encoding_is_a_buffer_not_a_parameter(make_model):
    """Invariant: the sinusoidal table is a registered buffer: it follows .to(dtype), is never trained and is not
    stored in checkpoints (it is recomputed from the config)."""
    model = make_model()
    pe = model.pos_encoding
    assert isinstance(pe, SinusoidalPositionalEncoding)
    assert any(buf is pe.table for buf in model.buffers())
    assert all(p is not pe.table for p in model.parameters())
    assert not pe.table.requires_grad
    assert not any("pos_encoding" in name for name in model.state_dict())
    model.to(torch.float64)
    assert pe.table.dtype == torch.float64
    torch.testing.assert_close(pe.table, sinusoidal_table(model.config.max_len, model.config.d_model).double())


def test_learned_encoding_is_a_trained_parameter(make_model):
    """Invariant: the learned positional table is a parameter: in model.parameters(), in the state dict, and it
    receives a gradient."""
    model = make_model(pos_encoding="learned").train()
    pe = model.pos_encoding
    assert isinstance(pe, LearnedPositionalEncoding)
    assert any(p is pe.table for p in model.parameters())
    assert "pos_encoding.table" in model.state_dict()
    src = torch.tensor([[4, 5, 6, 2]])
    model(src, torch.tensor([[1, 7, 8]])).logits.sum().backward()
    assert pe.table.grad is not None and pe.table.grad[:4].abs().sum() > 0
    assert torch.all(pe.table.grad[4:] == 0)  # positions the input did not reach get no gradient


@pytest.mark.parametrize("cls", [SinusoidalPositionalEncoding, LearnedPositionalEncoding])
def test_positional_encoding_adds_the_row_of_each_position(cls):
    """Oracle: pe(x, start) = x + table[start : start + T], for both kinds (the KV cache relies on `start`)."""
    torch.manual_seed(0)
    pe = cls(16, 8)
    if cls is LearnedPositionalEncoding:
        torch.nn.init.normal_(pe.table)
    x = torch.randn(2, 3, 8)
    torch.testing.assert_close(pe(x, start=5), x + pe.table[5:8])
    torch.testing.assert_close(pe(x), x + pe.table[:3])


def test_token_embedding_is_scaled_by_sqrt_d_model():
    """Oracle: section 3.4, "we multiply those weights by sqrt(d_model)": emb(ids) = W[ids] * sqrt(d_model)."""
    emb = TokenEmbedding(10, 16)
    torch.nn.init.normal_(emb.weight)
    ids = torch.tensor([[3, 0, 9]])
    torch.testing.assert_close(emb(ids), emb.weight[ids] * 4.0)
