"""Subword tokens merged into words: the word rule on our BPE, GPT-2's byte-level BPE and characters, and the merge
of attention weights against a hand computation."""
from __future__ import annotations

import pytest
import torch

from tests.conftest import TINY_GPT2_TEXTS
from transformer.interpretability.words import (merge_mask, merge_to_words, text_words, tokenizer_word_spans,
                                                word_labels, word_spans)
from transformer.tokenization import EOS_ID, BPETokenizer, CharTokenizer, GPT2BPETokenizer

CORPUS = ("the cats sat on the mat and the dogs ran to the park while unbelievable things happened "
          "tokenization splits uncommon words into pieces, slowly. ") * 5
SENTENCES = ["the cats sat on the mat", "unbelievable tokenization happened", "dogs",
             "the dogs ran, while the cats sat."]


def test_merge_matches_a_hand_computation():
    """Oracle: a 4-token example merged by hand. Tokens [A, B1, B2, C] are the words A, B (two tokens), C.
    Query word B = mean of the rows of B1 and B2; key word B = sum of the columns of B1 and B2."""
    w = torch.tensor([[1.0, 0.0, 0.0, 0.0],
                      [0.2, 0.3, 0.1, 0.4],
                      [0.4, 0.1, 0.3, 0.2],
                      [0.1, 0.2, 0.3, 0.4]])
    spans = [range(0, 1), range(1, 3), range(3, 4)]
    expected = torch.tensor([[1.0, 0.0, 0.0],
                             [(0.2 + 0.4) / 2, (0.3 + 0.1 + 0.1 + 0.3) / 2, (0.4 + 0.2) / 2],
                             [0.1, 0.2 + 0.3, 0.4]])
    merged = merge_to_words(w, spans, spans)
    assert torch.allclose(merged, expected, atol=1e-6)
    assert torch.allclose(merged.sum(-1), torch.ones(3))  # invariant: a word's row still sums to 1


def test_merge_of_cross_attention_keeps_batch_dims_and_differs_per_axis():
    """Oracle: per-axis spans of a (L, H, T, S) stack equal merging each (T, S) slice by a loop of sums and means;
    identity spans give the weights back unchanged."""
    g = torch.Generator().manual_seed(0)
    w = torch.softmax(torch.randn(2, 3, 5, 4, generator=g), -1)
    q_spans, k_spans = [range(0, 2), range(2, 5)], [range(0, 1), range(1, 4)]
    merged = merge_to_words(w, q_spans, k_spans)
    assert merged.shape == (2, 3, 2, 2)
    for i, qs in enumerate(q_spans):
        for j, ks in enumerate(k_spans):
            by_hand = w[..., qs.start:qs.stop, ks.start:ks.stop].sum(-1).mean(-1)
            assert torch.allclose(merged[..., i, j], by_hand, atol=1e-6)
    ones = [range(t, t + 1) for t in range(5)], [range(s, s + 1) for s in range(4)]
    assert torch.equal(merge_to_words(w, *ones), w)


def test_causal_mask_in_words_keeps_a_word_on_itself():
    """Invariant: a word may look at itself and earlier words, never at later ones."""
    mask = torch.ones(4, 4, dtype=torch.bool).tril()
    spans = [range(0, 1), range(1, 3), range(3, 4)]
    assert torch.equal(merge_mask(mask, spans, spans), torch.ones(3, 3, dtype=torch.bool).tril())


@pytest.mark.parametrize("spans", [[range(0, 2)], [range(0, 2), range(3, 4)], [range(1, 4)], [range(0, 2), range(1, 4)]])
def test_spans_that_do_not_cover_the_axis_are_refused(spans):
    """Bad input: spans with a gap, an overlap, or not covering every position raise a ValueError naming the axis."""
    with pytest.raises(ValueError, match="key spans"):
        merge_to_words(torch.ones(4, 4) / 4, [range(0, 4)], spans)


def test_word_rule_by_hand():
    """Oracle: the rule written out on tokens: a space starts a word, specials are words of their own, the first
    word (no marker) and the word after <s> start words, <unk> stays inside its word, blanks join the next word."""
    tokens = ["<s>", "The", " cat", "s", " sat", "<unk>", " ", " on", "\n", "it", "</s>"]
    spans = word_spans(tokens)
    assert [(s.start, s.stop) for s in spans] == [(0, 1), (1, 2), (2, 4), (4, 6), (6, 8), (8, 10), (10, 11)]
    assert word_labels(tokens, spans) == ["<s>", "The", "cats", "sat<unk>", "on", "it", "</s>"]
    assert text_words(tokens, spans) == [1, 2, 3, 4, 5]
    assert word_spans([]) == []
    assert [(s.start, s.stop) for s in word_spans(["\u2581a", "b", "\u2581c"])] == [(0, 2), (2, 3)]  # raw marker


@pytest.fixture(scope="module")
def bpe() -> BPETokenizer:
    return BPETokenizer.train([CORPUS], vocab_size=60)


@pytest.mark.parametrize("text", SENTENCES)
def test_our_bpe_words_are_the_text_words(bpe, text):
    """Invariant: with our BPE (Metaspace, no marker on the first word) a source `text + </s>` gives the words of
    text.split() and then </s> alone; the tokenizer really does cut some words into several tokens."""
    ids = bpe.encode(text) + [EOS_ID]
    tokens = [bpe.id_to_token(i) for i in ids]
    spans = tokenizer_word_spans(bpe, ids)
    labels = word_labels(tokens, spans)
    assert [labels[w] for w in text_words(tokens, spans)] == text.split()
    assert labels[-1] == "</s>" and len(spans[-1]) == 1
    assert len(ids) > len(spans) or text == "dogs"


def test_our_bpe_splits_words_into_pieces(bpe):
    """Guard for the test above: at vocab 60 the long words take several tokens, so merging is exercised."""
    assert len(bpe.encode("unbelievable tokenization")) > 2


@pytest.fixture(scope="module")
def gpt2_tokenizer(tiny_gpt2_dir) -> GPT2BPETokenizer:
    return GPT2BPETokenizer.from_file(tiny_gpt2_dir / "tokenizer.json")


@pytest.mark.parametrize("text", TINY_GPT2_TEXTS + ["Mary gave unbelievably tokenized drinks"])
def test_gpt2_words_are_the_text_words(gpt2_tokenizer, text):
    """Invariant: GPT-2's byte-level BPE ("Ġ" = a space) gives text.split(), newlines, runs of spaces, tabs and
    multi-byte characters included (a word's tokens are decoded together, as a character's bytes may
    lie in two tokens; a small GPT-2-shaped tokenizer trained in tests/conftest.py; the real GPT-2
    weights are not needed for the rule)."""
    ids = gpt2_tokenizer.encode(text)
    tokens = [gpt2_tokenizer.id_to_token(i) for i in ids]
    spans = word_spans(tokens)
    words = [gpt2_tokenizer.decode(ids[span.start:span.stop]).strip() for span in spans]
    assert words == text.split()


def test_char_tokenizer_words():
    """Invariant: with one token per character the words are still text.split() (a space starts each word)."""
    text = "the cat sat"
    tok = CharTokenizer.from_text(text)
    ids = tok.encode(text)
    spans = tokenizer_word_spans(tok, ids)
    assert word_labels([tok.id_to_token(i) for i in ids], spans) == text.split()
