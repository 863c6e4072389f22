"""Two inputs side by side: the Jensen-Shannon divergence of each head's attention, against its definition."""
from __future__ import annotations

import math

import pytest
import torch

from transformer import Transformer, TransformerConfig
from transformer.interpretability.two_inputs import differing_positions, head_divergence, jensen_shannon
from transformer.interpretability.probe import record_ids
from transformer.tokenization import CharTokenizer

TOK = CharTokenizer.from_text("abcdefgh ")


def test_jensen_shannon_by_hand():
    """Oracle: JS([1, 0], [0, 1]) = 1 bit (nothing in common); JS([1/2, 1/2], [1, 0]) by the formula
    (KL(p||m) + KL(q||m)) / 2 with m = [3/4, 1/4]; JS(p, p) = 0; symmetric."""
    assert float(jensen_shannon(torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0]))) == pytest.approx(1.0)
    p, q = torch.tensor([0.5, 0.5]), torch.tensor([1.0, 0.0])
    by_hand = (0.5 * math.log2(0.5 / 0.75) + 0.5 * math.log2(0.5 / 0.25) + math.log2(1 / 0.75)) / 2
    assert float(jensen_shannon(p, q)) == pytest.approx(by_hand)
    assert float(jensen_shannon(q, p)) == pytest.approx(by_hand)
    assert float(jensen_shannon(p, p)) == 0.0


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    cfg = TransformerConfig(arch="decoder-only", vocab_size=TOK.vocab_size, d_model=16, n_heads=2, d_ff=32,
                            dropout=0.0, max_len=32, n_decoder_layers=2)
    return Transformer(cfg).eval()


def test_identical_inputs_give_zero_for_every_head(model):
    """Oracle: the same input twice: 0 for every head of every layer."""
    a = record_ids(model, TOK, TOK.encode("the cab is")).patterns["decoder self"]
    b = record_ids(model, TOK, TOK.encode("the cab is")).patterns["decoder self"]
    assert torch.equal(head_divergence(a, b), torch.zeros(2, 2))


def test_minimal_pair_changes_heads_after_the_change_only(model):
    """Invariant: a causal model's rows before the first differing token are identical, so the divergence equals
    the mean over the rows from that token on (computed row by row here), and is positive."""
    a_ids, b_ids = TOK.encode("the cab is"), TOK.encode("the cab as")
    a = record_ids(model, TOK, a_ids).patterns["decoder self"]
    b = record_ids(model, TOK, b_ids).patterns["decoder self"]
    first = differing_positions(a.query_tokens, b.query_tokens)[0]
    assert first == 8
    rows = jensen_shannon(a.weights, b.weights)  # (L, H, T): same length, nothing to cut
    assert torch.all(rows[..., :first] == 0)
    assert torch.allclose(head_divergence(a, b), rows.mean(-1)) and (head_divergence(a, b) > 0).all()


def test_different_lengths_compare_the_shared_positions(model):
    """Invariant: a causal pattern compared with its own prefix differs in nothing over the shared positions."""
    a = record_ids(model, TOK, TOK.encode("abc defg")).patterns["decoder self"]
    b = record_ids(model, TOK, TOK.encode("abc d")).patterns["decoder self"]
    assert head_divergence(a, b).abs().max() < 1e-6
    assert differing_positions(a.query_tokens, b.query_tokens) == [5, 6, 7]


def test_kinds_must_match(model):
    """Bad input: patterns of different kinds or shapes are refused."""
    a = record_ids(model, TOK, TOK.encode("abc")).patterns["decoder self"]
    b = record_ids(model, TOK, TOK.encode("abc")).patterns["decoder self"]
    b.kind = "cross"
    with pytest.raises(ValueError, match="one kind"):
        head_divergence(a, b)
