"""The fixed split of the Bible corpus: 1,000 test and 1,000 validation verses, committed as TSV; the rest trains.

The rule (documented, seeded): sort the OSIS ids of every verse pair that `bible.read_pairs` yields, shuffle them
with `random.Random(SPLIT_SEED)`, take the first 1,000 as test and the next 1,000 as validation. Random verses, not
whole books, so the held-out verses come from every book. The TSV files have a header row and the columns
`verse`, `en`, `es`, `links` (space-separated `i-j`: word i of `en` and word j of `es`, whitespace words, 0-based).
"""
from __future__ import annotations

import csv
import random
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from .bible import VersePair, read_pairs

DATA_DIR = Path(__file__).resolve().parents[2] / "data" / "bible-en-es"
SPLIT_SEED = 20170612  # the date "Attention Is All You Need" appeared on arXiv
N_TEST = N_VALID = 1000
COLUMNS = ("verse", "en", "es", "links")


def split_ids(verses: Iterable[str], seed: int = SPLIT_SEED, n_test: int = N_TEST,
              n_valid: int = N_VALID) -> tuple[list[str], list[str]]:
    """(test ids, validation ids): the documented rule above, a function of the set of ids and the seed only."""
    ids = sorted(set(verses))
    if len(ids) < n_test + n_valid + 1:
        raise ValueError(f"{len(ids)} verses cannot give {n_test} test and {n_valid} validation verses and training")
    random.Random(seed).shuffle(ids)
    return ids[:n_test], ids[n_test:n_test + n_valid]


def parse_links(text: str) -> tuple[tuple[int, int], ...]:
    """'0-4 2-0' -> ((0, 4), (2, 0))."""
    return tuple((int(i), int(j)) for i, j in (link.split("-") for link in text.split()))


def write_tsv(path: str | Path, pairs: Iterable[VersePair]) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, delimiter="\t", quoting=csv.QUOTE_NONE, escapechar=None, lineterminator="\n")
        writer.writerow(COLUMNS)
        for p in pairs:
            if "\t" in p.en + p.es or "\n" in p.en + p.es:
                raise ValueError(f"{p.verse}: a tab or newline inside the text")
            writer.writerow((p.verse, p.en, p.es, p.links_text()))


def read_tsv(path: str | Path) -> list[VersePair]:
    """The verse pairs of a split file; raises ValueError on a file that does not have the four columns."""
    rows = Path(path).read_text(encoding="utf-8").splitlines()
    if not rows or tuple(rows[0].split("\t")) != COLUMNS:
        raise ValueError(f"{path}: the first row must be the header {' '.join(COLUMNS)}")
    pairs = []
    for n, row in enumerate(rows[1:], start=2):
        cells = row.split("\t")
        if len(cells) != 4:
            raise ValueError(f"{path}:{n}: expected 4 tab-separated columns, got {len(cells)}")
        pairs.append(VersePair(cells[0], cells[1], cells[2], parse_links(cells[3])))
    return pairs


def held_out(data_dir: str | Path = DATA_DIR) -> tuple[list[VersePair], list[VersePair]]:
    """(test, validation) verse pairs from the committed files: no SWORD modules needed."""
    data_dir = Path(data_dir)
    return read_tsv(data_dir / "test.tsv"), read_tsv(data_dir / "valid.tsv")


def find_verse(english: str, data_dir: str | Path = DATA_DIR) -> VersePair | None:
    """The held-out verse (test or validation) whose English is `english` (spaces normalised), else None: how the
    app finds the reference Spanish and the gold links of a verse a user typed or a demo chose."""
    wanted = " ".join(str(english).split())
    test, valid = _held_out_cached(str(Path(data_dir)))
    return next((p for p in test + valid if p.en == wanted), None)


def example_verse(rng: random.Random, data_dir: str | Path = DATA_DIR) -> VersePair:
    """A random test verse (never trained on): the example input of the translation model."""
    return rng.choice(_held_out_cached(str(Path(data_dir)))[0])


@lru_cache(maxsize=2)
def _held_out_cached(data_dir: str) -> tuple[list[VersePair], list[VersePair]]:
    return held_out(data_dir)


def training_pairs(all_pairs: Iterable[VersePair], data_dir: str | Path = DATA_DIR) -> list[VersePair]:
    """Every verse pair except the committed test and validation verses."""
    test, valid = held_out(data_dir)
    excluded = {p.verse for p in test} | {p.verse for p in valid}
    return [p for p in all_pairs if p.verse not in excluded]


def make_split(out_dir: str | Path = DATA_DIR, sword_path: str | Path | None = None) -> tuple[int, int, int]:
    """Read the corpus, write test.tsv and valid.tsv; returns (train, test, valid) counts."""
    pairs = list(read_pairs(sword_path) if sword_path else read_pairs())
    test_ids, valid_ids = split_ids(p.verse for p in pairs)
    by_id = {p.verse: p for p in pairs}
    write_tsv(Path(out_dir) / "test.tsv", (by_id[v] for v in sorted(test_ids, key=_canonical(pairs))))
    write_tsv(Path(out_dir) / "valid.tsv", (by_id[v] for v in sorted(valid_ids, key=_canonical(pairs))))
    return len(pairs) - len(test_ids) - len(valid_ids), len(test_ids), len(valid_ids)


def _canonical(pairs: list[VersePair]):
    """Sort key: the Bible's own order (the order read_pairs yields)."""
    order = {p.verse: i for i, p in enumerate(pairs)}
    return order.__getitem__


if __name__ == "__main__":
    n_train, n_test, n_valid = make_split()
    print(f"wrote {DATA_DIR}: {n_test} test, {n_valid} validation verses; {n_train} for training")
