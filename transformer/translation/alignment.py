"""Does cross-attention learn which word translates which? Word alignments read from attention, scored by AER.

An alignment is a set of links (i, j): English (source) word i and Spanish (target) word j. Gold links come from
Strong's numbers (transformer.translation.bible). Scores, with the gold links as both the sure and the possible
set (Och & Ney 2003, "A Systematic Comparison of Various Statistical Alignment Models", section 6):

    precision = |A & G| / |A|        recall = |A & G| / |G|        AER = 1 - 2 |A & G| / (|A| + |G|)

The protocol (`score_on_gold`, the one scoring of every aligner: attention heads, the diagonal, eflomal): only the
Spanish words that carry at least one gold link are scored (the Strong's tags cover the words that translate an
original word; a function word with no tag has no gold answer), each with at most one English word. The baseline is
the diagonal: Spanish word j of m reads English word round(j * n / m) of n.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from ..interpretability.analysis import top_head

Link = tuple[int, int]


@dataclass(frozen=True)
class AlignmentScore:
    precision: float
    recall: float
    aer: float
    links: int  # |A|
    gold: int  # |G|

    def to_dict(self) -> dict:
        return {"precision": round(self.precision, 4), "recall": round(self.recall, 4), "aer": round(self.aer, 4)}


def score(predicted: list[set[Link]] | set[Link], gold: list[set[Link]] | set[Link]) -> AlignmentScore:
    """Precision, recall and AER of predicted links against gold links, pooled over sentences (lists of sets, one
    per sentence, or one set). An empty prediction has AER 1; a prediction equal to the gold has AER 0."""
    if isinstance(predicted, set):
        predicted, gold = [predicted], [gold]
    if len(predicted) != len(gold):
        raise ValueError(f"{len(predicted)} predicted alignments for {len(gold)} gold ones")
    hits = sum(len(p & g) for p, g in zip(predicted, gold))
    n_pred, n_gold = sum(len(p) for p in predicted), sum(len(g) for g in gold)
    precision = hits / n_pred if n_pred else 0.0
    recall = hits / n_gold if n_gold else 0.0
    aer = 1.0 - 2 * hits / (n_pred + n_gold) if n_pred + n_gold else 0.0
    return AlignmentScore(precision, recall, aer, n_pred, n_gold)


def on_gold_words(predicted: set[Link], gold: set[Link]) -> set[Link]:
    """The protocol: the predicted links of the Spanish words that carry a gold link; raises ValueError when such a
    word has more than one English word (an aligner scored here gives each Spanish word one English word)."""
    targets = set(aligned_targets(gold))
    kept = {(i, j) for i, j in predicted if j in targets}
    if len({j for _, j in kept}) != len(kept):
        raise ValueError("the protocol links each gold-linked Spanish word to one English word; got several")
    return kept


def score_on_gold(predicted: list[set[Link]], gold: list[set[Link]]) -> AlignmentScore:
    """Precision, recall and AER of an aligner's links (one set per verse) under the protocol (`on_gold_words`),
    pooled over the verses: how heads, the diagonal and eflomal are all scored."""
    if len(predicted) != len(gold):
        raise ValueError(f"{len(predicted)} predicted alignments for {len(gold)} gold ones")
    return score([on_gold_words(p, g) for p, g in zip(predicted, gold)], gold)


def aligned_targets(gold: set[Link]) -> list[int]:
    """The Spanish words that carry a gold link, sorted: the words an alignment is asked about."""
    return sorted({j for _, j in gold})


def diagonal_alignment(n_source: int, n_target: int, targets: list[int]) -> set[Link]:
    """The baseline: Spanish word j (of n_target) reads English word round(j * n_source / n_target)."""
    return {(min(round(j * n_source / n_target), n_source - 1), j) for j in targets}


def attention_alignment(word_weights: Tensor, targets: list[int]) -> set[Link]:
    """From word-level attention (n_target, n_source): each Spanish word j of `targets` to the English word it
    attends to most."""
    best = word_weights.argmax(-1).tolist()  # (n_target,)
    return {(best[j], j) for j in targets}


def heads_alignments(word_weights: Tensor, targets: list[int]) -> list[list[set[Link]]]:
    """Per layer and head, and each layer's mean over its heads as a last 'head': word_weights
    (layers, heads, n_target, n_source) -> [layer][head or mean] alignment."""
    out = []
    for layer in word_weights:  # (heads, n_target, n_source)
        per_head = [attention_alignment(head, targets) for head in layer]
        out.append(per_head + [attention_alignment(layer.mean(0), targets)])
    return out


def lowest_aer_head(table: dict[str, list[list[float]]]) -> tuple[int, int]:
    """(layer, head) with the lowest AER in a table {"aer": [layer][head]} (the per-layer mean column excluded)."""
    aer = torch.tensor(table["aer"])[:, :-1]  # (layers, heads)
    return top_head(-aer)  # the one best-head rule, on -AER (lower is better)
