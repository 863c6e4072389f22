"""Near-duplicates across the split: how much of a test verse's Spanish the training verses already hold.

The split is by random verse (transformer.translation.corpus), so parallel passages leak: Kings and Chronicles,
the Gospels, repeated formulas ("y habló Jehová á Moisés, diciendo"). The rule, one function (`largest_share`):

    share(v) = max over training verses t of |G(v) & G(t)| / |G(v)|

where G(x) is the set of word 4-grams of a Spanish verse (lower-cased words, punctuation dropped: `spanish_ngrams`);
a verse with no 4-gram (under four words) has share 0. A test verse is *unseen* when share < UNSEEN (0.10), a
*near-duplicate* when share >= NEAR_DUPLICATE (0.5). The card reports BLEU and chrF on the whole split and on the
unseen verses (transformer.translation.evaluate).

Every test verse's share and the training verse that reaches it are committed in data/bible-en-es/overlap.tsv, so
scoring needs no SWORD modules; recompute that file from the modules with

    python -m transformer.translation.overlap
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Iterable

from .bible import VersePair
from .corpus import DATA_DIR

N = 4  # word n-grams
UNSEEN, NEAR_DUPLICATE = 0.10, 0.5
OVERLAP_FILE = "overlap.tsv"
COLUMNS = ("verse", "share", "nearest", "nearest_es")
WORD = re.compile(r"\w+")

Ngram = tuple[str, ...]


def spanish_ngrams(text: str, n: int = N) -> set[Ngram]:
    """The set of word n-grams of a text: lower-cased `\\w+` words (punctuation dropped, accents kept)."""
    words = WORD.findall(text.lower())
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


class TrainingNgrams:
    """An inverted index of the training verses' Spanish n-grams: which training verses hold each n-gram."""

    def __init__(self, texts: Iterable[str], n: int = N):
        self.n, self.where = n, {}
        for index, text in enumerate(texts):
            for gram in spanish_ngrams(text, n):
                self.where.setdefault(gram, []).append(index)

    def largest_share(self, text: str) -> tuple[float, int | None]:
        """(share, index of the training verse that reaches it): the rule of this module's docstring; (0.0, None)
        for a text with no n-gram or none in common with any training verse."""
        grams = spanish_ngrams(text, self.n)
        counts = Counter(i for gram in grams for i in self.where.get(gram, ()))  # training verse -> shared n-grams
        if not counts:
            return 0.0, None
        best, shared = min(counts.items(), key=lambda item: (-item[1], item[0]))  # most shared, then first in order
        return shared / len(grams), best


def largest_share(text: str, training: Iterable[str], n: int = N) -> float:
    """A verse's largest share of its Spanish n-grams with any one training verse (the rule, for a few verses)."""
    return TrainingNgrams(training, n).largest_share(text)[0]


def overlap_rows(test: list[VersePair], training: list[VersePair]) -> list[tuple[str, float, str, str]]:
    """(verse, share, nearest training verse, its Spanish) for each test verse; nearest is '' when share is 0."""
    index, rows = TrainingNgrams(p.es for p in training), []
    for pair in test:
        share, best = index.largest_share(pair.es)
        nearest = training[best] if best is not None else None
        rows.append((pair.verse, round(share, 4), nearest.verse if nearest else "", nearest.es if nearest else ""))
    return rows


def write_overlap(rows: list[tuple[str, float, str, str]], data_dir: str | Path = DATA_DIR) -> Path:
    path = Path(data_dir) / OVERLAP_FILE
    lines = ["\t".join(COLUMNS)] + ["\t".join((v, f"{s:.4f}", t, es)) for v, s, t, es in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def read_overlap(data_dir: str | Path = DATA_DIR) -> dict[str, tuple[float, str, str]]:
    """{test verse: (share, nearest training verse, its Spanish)} from the committed file."""
    path = Path(data_dir) / OVERLAP_FILE
    rows = path.read_text(encoding="utf-8").splitlines()
    if not rows or tuple(rows[0].split("\t")) != COLUMNS:
        raise ValueError(f"{path}: the first row must be the header {' '.join(COLUMNS)}")
    out = {}
    for line in rows[1:]:
        verse, share, nearest, nearest_es = line.split("\t")
        out[verse] = (float(share), nearest, nearest_es)
    return out


def unseen(test: list[VersePair], shares: dict[str, tuple[float, str, str]],
           threshold: float = UNSEEN) -> list[bool]:
    """For each test verse: is its share under the threshold? Raises KeyError naming a verse with no share."""
    missing = [p.verse for p in test if p.verse not in shares]
    if missing:
        raise KeyError(f"no overlap share for {missing[:3]} ({len(missing)} verses): rerun "
                       "python -m transformer.translation.overlap")
    return [shares[p.verse][0] < threshold for p in test]


def main() -> int:
    from .bible import read_pairs
    from .corpus import held_out, training_pairs

    test, _ = held_out()
    rows = overlap_rows(test, training_pairs(read_pairs()))
    path = write_overlap(rows)
    shares = [r[1] for r in rows]
    print(f"wrote {path}: {len(rows)} test verses; share >= {NEAR_DUPLICATE}: "
          f"{sum(s >= NEAR_DUPLICATE for s in shares)}; share < {UNSEEN}: {sum(s < UNSEEN for s in shares)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
