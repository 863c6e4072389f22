"""What a heatmap shows: the pattern merged into words and the value-norm shares, against the functions that own
each rule."""
from __future__ import annotations

import pytest
import torch

from transformer import Transformer, TransformerConfig
from transformer.interpretability.probe import record_ids, record_inside
from transformer.interpretability.value_norms import value_weighted_norms
from transformer.interpretability.views import displayed_pattern, most_moved_head, moved_share, pattern_in_words
from transformer.interpretability.words import merge_to_words, word_spans
from transformer.tokenization import CharTokenizer

TOK = CharTokenizer.from_text("abcdefgh ")


@pytest.fixture(scope="module")
def seq2seq():
    torch.manual_seed(0)
    cfg = TransformerConfig(arch="encoder-decoder", vocab_size=TOK.vocab_size, d_model=16, n_heads=2, d_ff=32,
                            dropout=0.0, max_len=32, n_encoder_layers=1, n_decoder_layers=1)
    model = Transformer(cfg).eval()
    return model, record_ids(model, TOK, TOK.encode("ab cde f") + [2], TOK.encode("fed c"))


def test_cross_attention_in_words(seq2seq):
    """Oracle: merge_to_words with the word spans of each axis; labels are the words, </s> a word of its own; rows
    sum to 1; the text words leave </s> out."""
    _, record = seq2seq
    pattern = record.patterns["cross"]
    words = pattern_in_words(pattern)
    q, k = word_spans(pattern.query_tokens), word_spans(pattern.key_tokens)
    assert torch.allclose(words.weights, merge_to_words(pattern.weights, q, k))
    assert words.key_tokens == ["ab", "cde", "f", "</s>"] and words.query_tokens == ["fed", "c", "</s>"]
    assert words.key_text == [0, 1, 2] and words.query_text == [0, 1]
    assert torch.allclose(words.weights.sum(-1), torch.ones(words.weights.shape[:-1]), atol=1e-6)
    assert set(words.scores()) >= {"entropy", "anti-diagonal"}


def test_causal_self_attention_in_words_keeps_the_mask(seq2seq):
    """Invariant: in words, decoder self-attention is still causal (no word sees a later word)."""
    _, record = seq2seq
    words = pattern_in_words(record.patterns["decoder self"])
    assert torch.equal(words.mask, torch.ones_like(words.mask).tril())
    assert (words.weights[..., ~words.mask] == 0).all()


def test_norms_view_shows_the_shares(seq2seq):
    """Oracle: the norms view's cells are value_weighted_norms' shares; norms of another kind are refused."""
    model, record = seq2seq
    norms = value_weighted_norms(model, record, record_inside(model, record), "encoder self")
    shown = displayed_pattern(record.patterns["encoder self"], norms)
    assert torch.equal(shown.weights, norms.shares)
    assert torch.allclose(displayed_pattern(record.patterns["encoder self"], norms, words=True).weights,
                          pattern_in_words(shown).weights)
    with pytest.raises(ValueError, match="do not belong"):
        displayed_pattern(record.patterns["cross"], norms)


def test_most_moved_head_is_the_maximum_of_moved_share_over_every_kind(seq2seq):
    """Oracle: moved_share of the weights and the norms' shares, head by head, over the three kinds of a random
    seq2seq model; no norms at all is refused."""
    model, record = seq2seq
    inside = record_inside(model, record)
    norms = {kind: value_weighted_norms(model, record, inside, kind) for kind in record.patterns}
    moved = {(kind, layer, head): float(m[layer, head]) for kind, p in record.patterns.items()
             for m in [moved_share(p, displayed_pattern(p, norms[kind]))]
             for layer in range(m.shape[0]) for head in range(m.shape[1])}
    best = max(moved, key=moved.get)
    assert most_moved_head(record.patterns, norms) == (*best, moved[best]) and len(moved) == 6
    with pytest.raises(ValueError, match="no value norms"):
        most_moved_head(record.patterns, {})
