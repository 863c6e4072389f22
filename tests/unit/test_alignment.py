"""AER, precision and recall on hand-made alignments (Och & Ney 2003), the diagonal baseline, and alignments read
from attention."""
from __future__ import annotations

import pytest
import torch

from transformer.translation.alignment import (attention_alignment, lowest_aer_head, diagonal_alignment, heads_alignments,
                                               score)


def test_a_perfect_alignment_has_aer_0_and_an_empty_one_aer_1():
    gold = {(0, 0), (1, 2), (2, 1)}
    assert score(set(gold), gold).aer == 0.0
    assert score(set(), gold).aer == 1.0


def test_a_mixed_case_by_hand():
    """A = {(0,0), (1,1), (2,2)}, G = {(0,0), (1,2), (2,1), (3,3)}: one hit; P = 1/3, R = 1/4,
    AER = 1 - 2 * 1 / (3 + 4) = 5/7."""
    s = score({(0, 0), (1, 1), (2, 2)}, {(0, 0), (1, 2), (2, 1), (3, 3)})
    assert s.precision == pytest.approx(1 / 3)
    assert s.recall == pytest.approx(1 / 4)
    assert s.aer == pytest.approx(5 / 7)


def test_scores_pool_links_over_sentences():
    """Pooled, not averaged: one sentence with 1 of 1 right and one with 0 of 3 gives P = R = 1/4."""
    s = score([{(0, 0)}, {(0, 1), (1, 0), (2, 2)}], [{(0, 0)}, {(0, 0), (1, 1), (2, 1)}])
    assert (s.precision, s.recall) == (0.25, 0.25)


def test_diagonal_baseline():
    """5 English words, 4 Spanish: j -> round(j * 5 / 4) = 0, 1 (1.25), 2 (2.5 rounds to even), 4 (3.75)."""
    assert diagonal_alignment(5, 4, [0, 1, 2, 3]) == {(0, 0), (1, 1), (2, 2), (4, 3)}
    assert diagonal_alignment(2, 6, [5]) == {(1, 5)}  # never past the last English word


def test_attention_alignment_takes_each_asked_words_strongest_key():
    w = torch.tensor([[0.1, 0.9, 0.0], [0.5, 0.2, 0.3], [0.0, 0.0, 1.0]])  # (Spanish words, English words)
    assert attention_alignment(w, [0, 2]) == {(1, 0), (2, 2)}  # word 1 not asked: no gold link


def test_per_head_alignments_and_the_best_head():
    weights = torch.zeros(2, 2, 2, 2)  # (layers, heads, es, en)
    weights[..., 0, 0] = weights[..., 1, 1] = 1.0  # every head diagonal ...
    weights[1, 1] = torch.tensor([[0.0, 1.0], [1.0, 0.0]])  # ... but layer 1 head 1, which crosses
    out = heads_alignments(weights, [0, 1])
    assert out[0][0] == {(0, 0), (1, 1)} and out[1][1] == {(1, 0), (0, 1)}
    assert len(out[0]) == 3  # two heads and the layer's mean
    gold = {(1, 0), (0, 1)}
    table = {"aer": [[score(a, gold).aer for a in layer] for layer in out]}
    assert lowest_aer_head(table) == (1, 1)
