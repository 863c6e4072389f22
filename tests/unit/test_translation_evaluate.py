"""Greedy translation of many verses (transformer.translation.evaluate.translate_greedy): what the card's greedy
BLEU is computed from."""
from __future__ import annotations

from tests.conftest import seeded_model, tiny_config
from transformer.tokenization import CharTokenizer
from transformer.translation import evaluate

SOURCES = ["abcabcabcabcab", "b", "cabca", "abcabcab", "bc", "cabcabcabcabc", "abca", "bcabcabca", "c", "abcab",
           "bcabcabc"]  # lengths 14, 1, 5, 8, 2, 13, 4, 9, 1, 5, 8


def test_each_translation_is_the_one_its_source_gets_alone_in_its_place_and_batches_group_lengths(monkeypatch):
    """Oracle: each source translated alone (a batch of one: no padding). Batched, the outputs come back in the
    order of the sources, and each batch holds sources of neighbouring lengths: the batches of 3 of these 11
    sources each span at most 1 character, where batches in the given order span up to 13 (a batch decodes until
    its longest output ends, so mixed lengths cost time)."""
    tok = CharTokenizer("abc")
    model = seeded_model(tiny_config(vocab_size=tok.vocab_size, max_len=24))
    alone = [evaluate.translate_greedy(model, tok, [s])[0] for s in SOURCES]
    real = evaluate.greedy_batch
    spans = []

    def batch(model, src, max_new_tokens, head_mask=None):
        lengths = (src != model.config.pad_id).sum(1)  # (B,): each source's tokens with its </s>
        spans.append(int(lengths.max() - lengths.min()))
        return real(model, src, max_new_tokens, head_mask)

    monkeypatch.setattr(evaluate, "greedy_batch", batch)
    assert evaluate.translate_greedy(model, tok, SOURCES, batch_size=3) == alone
    assert len(spans) == 4 and max(spans) <= 1, spans
    assert len(set(alone)) > 1  # the model answers differently to different sources: the order is checked
