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


# --- the protocol: one scoring for every aligner (heads, the diagonal, eflomal) ------------------------------------

# A hand-made verse: "In the beginning God created" / "En el principio creó Dios"; gold links (English i, Spanish j)
VERSE_GOLD = {(0, 0), (2, 2), (3, 4), (4, 3)}  # In-En, beginning-principio, God-Dios, created-creó; "el" has none


def test_the_protocol_scores_only_the_gold_linked_spanish_words():
    """Oracle by hand: an aligner links every Spanish word: (0,0) (1,1) (2,2) (4,3) (2,4). Word 1 ("el") has no gold
    link, so (1,1) is not scored; of the four scored links three are gold: P = 3/4, R = 3/4, AER = 1/4."""
    from transformer.translation.alignment import on_gold_words, score_on_gold

    predicted = {(0, 0), (1, 1), (2, 2), (4, 3), (2, 4)}
    assert on_gold_words(predicted, VERSE_GOLD) == {(0, 0), (2, 2), (4, 3), (2, 4)}
    s = score_on_gold([predicted], [VERSE_GOLD])
    assert (s.precision, s.recall, s.aer) == (0.75, 0.75, 0.25)
    with pytest.raises(ValueError, match="one English word"):
        on_gold_words({(0, 0), (1, 0)}, VERSE_GOLD)  # two English words for Spanish word 0


def test_eflomal_and_the_heads_are_scored_by_the_same_function(monkeypatch):
    """Oracle: on the hand-made verse, eflomal's score (its links replaced by the hand-made ones) and a head whose
    attention points at the same English words get the same P, R and AER, the hand-computed ones."""
    from transformer.translation import statistical
    from transformer.translation.bible import VersePair
    from transformer.translation.gold import head_alignment

    verse = VersePair("Gen.1.1", "In the beginning God created", "En el principio creó Dios", tuple(VERSE_GOLD))
    links = {(0, 0), (1, 1), (2, 2), (4, 3), (2, 4)}
    monkeypatch.setattr(statistical, "eflomal_links", lambda src, tgt: [set()] * (len(src) - 1) + [links])
    by_eflomal = statistical.eflomal_score([verse], [verse])
    weights = torch.zeros(5, 5)  # (Spanish words, English words)
    for i, j in links:
        weights[j, i] = 1.0
    _, by_head = head_alignment(weights, VERSE_GOLD)
    assert by_eflomal == {"precision": 0.75, "recall": 0.75, "aer": 0.25, "verses": 1, "training_verses": 1,
                          "gold_links": 4}
    assert by_head.to_dict() == {k: by_eflomal[k] for k in ("precision", "recall", "aer")}


def test_every_aligner_is_scored_through_the_protocol():
    """One owner, checked in the source: outside alignment.py no module imports the bare `score`; they import
    score_on_gold (which applies the protocol), so a new aligner cannot be scored another way by accident."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    importers = {}
    for path in sorted((root / "transformer").rglob("*.py")) + sorted((root / "tabs").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("alignment"):
                names = {a.name for a in node.names}
                if names & {"score", "score_on_gold"}:
                    importers[str(path.relative_to(root))] = names & {"score", "score_on_gold"}
    assert all(names == {"score_on_gold"} for names in importers.values()), importers
    assert {"transformer/translation/evaluate.py", "transformer/translation/statistical.py",
            "transformer/translation/gold.py"} <= set(importers)


def test_eflomal_parses_pharaoh_links_and_keeps_word_counts():
    from transformer.translation.statistical import aligner_words, parse_links

    assert parse_links("0-1 2-0 3-3") == {(0, 1), (2, 0), (3, 3)} and parse_links("") == set()
    assert aligner_words("Y dijo Dios: ¡Sea la luz! —") == "y dijo dios sea la luz —"
