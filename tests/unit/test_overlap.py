"""The near-duplicate rule (transformer.translation.overlap) on hand-made verses, and the committed shares against
the card: the counts, the nearest verses' texts, and the unseen figures."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from transformer.translation.bible import VersePair
from transformer.translation.corpus import held_out
from transformer.translation.overlap import (NEAR_DUPLICATE, UNSEEN, TrainingNgrams, largest_share, overlap_rows,
                                             read_overlap, spanish_ngrams, unseen, write_overlap)

CARD = Path(__file__).resolve().parents[2] / "checkpoints" / "translate-en-es"


def test_ngrams_are_lower_cased_words_without_punctuation():
    """Oracle by hand: 'Y dijo Jehová: Haya luz.' has the words y dijo jehová haya luz, so two 4-grams."""
    assert spanish_ngrams("Y dijo Jehová: Haya luz.") == {("y", "dijo", "jehová", "haya"),
                                                         ("dijo", "jehová", "haya", "luz")}
    assert spanish_ngrams("Jesús lloró.") == set()  # fewer than four words: no 4-gram


def test_the_share_is_the_largest_with_any_one_training_verse():
    """Oracle by hand: the test verse a b c d e f has three 4-grams (abcd, bcde, cdef). Training verse 1 holds
    abcd and bcde (2/3); verse 2 holds cdef (1/3); together they hold all three, but the rule counts one training
    verse at a time, so the share is 2/3, reached by verse 1."""
    training = ["x a b c d e y", "c d e f", "nothing in common here at all"]
    assert TrainingNgrams(training).largest_share("a b c d e f") == (pytest.approx(2 / 3), 0)
    assert largest_share("A, b; c d e f.", training) == pytest.approx(2 / 3)
    assert largest_share("a b c d e f", ["a b c d e f"]) == 1.0
    assert largest_share("a b c d e f", ["f e d c b a"]) == 0.0  # the same words in another order
    assert largest_share("a b c", ["a b c"]) == 0.0  # no 4-gram: counted as unseen


def test_a_repeated_ngram_counts_once():
    """G is a set: 'a b c d a b c d' has five 4-grams of which four differ (abcd twice, bcda, cdab, dabc); one
    training verse 'a b c d' holds one of the four: 1/4 (1/5 or 2/5 if repeats counted)."""
    assert largest_share("a b c d a b c d", ["a b c d"]) == pytest.approx(1 / 4)


def test_rows_name_the_nearest_training_verse_and_round_trip(tmp_path):
    test = [VersePair("T.1.1", "", "a b c d e", ()), VersePair("T.1.2", "", "z y x", ())]
    training = [VersePair("R.1.1", "", "q a b c d", ()), VersePair("R.1.2", "", "a b c d e", ())]
    rows = overlap_rows(test, training)
    assert rows == [("T.1.1", 1.0, "R.1.2", "a b c d e"), ("T.1.2", 0.0, "", "")]
    write_overlap(rows, tmp_path)
    shares = read_overlap(tmp_path)
    assert shares == {"T.1.1": (1.0, "R.1.2", "a b c d e"), "T.1.2": (0.0, "", "")}
    assert unseen(test, shares) == [False, True]
    with pytest.raises(KeyError, match="T.9.9"):
        unseen([VersePair("T.9.9", "", "", ())], shares)


def test_committed_shares_are_the_rule_on_their_nearest_verses():
    """Invariant on the committed file (no SWORD needed): for every test verse whose share is positive, the rule
    recomputed against the named nearest training verse alone gives exactly the stored share."""
    test, _ = held_out()
    shares = read_overlap()
    assert [p.verse for p in test] == list(shares)
    for pair in test:
        share, nearest, nearest_es = shares[pair.verse]
        assert (share > 0) == bool(nearest)
        if nearest:
            assert largest_share(pair.es, [nearest_es]) == pytest.approx(share, abs=1e-4), pair.verse


def test_the_cards_counts_are_the_committed_shares():
    """The card's threshold, unseen count and near-duplicate count are the committed shares counted again."""
    u = json.loads((CARD / "config.json").read_text())["metrics"]["unseen"]
    shares = [s for s, _, _ in read_overlap().values()]
    assert (u["threshold"], u["near_duplicate_share"]) == (UNSEEN, NEAR_DUPLICATE)
    assert u["verses"] == sum(s < UNSEEN for s in shares)
    assert u["near_duplicates"] == sum(s >= NEAR_DUPLICATE for s in shares)
    assert u["all_verses"] == len(shares) == 1000
    card = (CARD / "README.md").read_text(encoding="utf-8")
    assert f"| greedy, the {u['verses']} unseen test verses | {u['bleu_greedy']} | {u['chrf_greedy']} |" in card
    assert "--unseen" in card
