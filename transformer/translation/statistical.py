"""A statistical word aligner as the anchor of the AER table: eflomal (Östling & Tiedemann 2016, a Bayesian HMM
aligner with fertility, sampled), on the same verses and scored with the same protocol as the attention heads.

eflomal reads the training verses and the test verses together (it is unsupervised: it learns from the parallel
text itself, as an aligner is used), English as the source and Spanish as the target, both as whitespace words
exactly as the gold links count them (`en.split()`, `es.split()`; each word lower-cased and stripped of its
punctuation for the aligner, so "Dios," and "Dios" are one word: `aligner_words`). Its forward alignment links each Spanish word to
at most one English word (or none); those links on the test verses are scored against the Strong's-number gold by
`alignment.score_on_gold`, the scoring of the heads' table. eflomal samples with no seed option, so a rerun moves
the figures in the third decimal.

    python -m transformer.translation.statistical checkpoints/translate-en-es   # prints, and writes the card
    python -m transformer.translation.statistical checkpoints/translate-en-es --check   # prints, writes nothing

needs the SWORD modules (the training verses) and `eflomal` (requirements-dev.txt; C code built at install).
"""
from __future__ import annotations

import argparse
import json
import re
import tempfile
from pathlib import Path

from .alignment import Link, score_on_gold
from .bible import VersePair


def parse_links(line: str) -> set[Link]:
    """One line of eflomal's (Pharaoh-format) links, '0-1 2-3', as {(source word, target word)}."""
    return {(int(i), int(j)) for i, j in (link.split("-") for link in line.split())}


def aligner_words(text: str) -> str:
    """The text as eflomal reads it: the same whitespace words, each lower-cased and without punctuation (a word
    of punctuation only is kept as it is, so the word count never changes)."""
    return " ".join(re.sub(r"[^\w]+", "", w) or w for w in text.lower().split())


def eflomal_links(sources: list[str], targets: list[str]) -> list[set[Link]]:
    """eflomal's forward alignment of each (source, target) pair of whitespace-word texts: (i, j) links, target
    word j to source word i, at most one source word per target word."""
    try:
        import eflomal
    except ImportError as e:
        raise RuntimeError("the statistical aligner needs the `eflomal` package (pip install -r "
                           "requirements-dev.txt)") from e
    if len(sources) != len(targets):
        raise ValueError(f"{len(sources)} sources for {len(targets)} targets")
    with tempfile.TemporaryDirectory(prefix="eflomal-") as tmp:
        forward = Path(tmp) / "forward.links"
        eflomal.Aligner().align([aligner_words(s) for s in sources], [aligner_words(t) for t in targets],
                                links_filename_fwd=str(forward))
        lines = forward.read_text(encoding="utf-8").split("\n")[:len(sources)]
    if len(lines) != len(sources):
        raise RuntimeError(f"eflomal wrote {len(lines)} alignments for {len(sources)} verse pairs")
    return [parse_links(line) for line in lines]


def eflomal_score(test: list[VersePair], training: list[VersePair]) -> dict:
    """eflomal's precision, recall and AER on the test verses' gold links, aligned together with `training`."""
    pairs = training + test
    links = eflomal_links([p.en for p in pairs], [p.es for p in pairs])[len(training):]
    golds = [set(p.links) for p in test]
    return {**score_on_gold(links, golds).to_dict(), "verses": len(test), "training_verses": len(training),
            "gold_links": sum(len(g) for g in golds)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m transformer.translation.statistical", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", help="the translation checkpoint whose card shows eflomal's row")
    p.add_argument("--check", action="store_true", help="print eflomal's scores beside the card's; write nothing")
    args = p.parse_args(argv)
    from .bible import read_pairs
    from .corpus import held_out, training_pairs
    from .evaluate import update_metrics

    test, _ = held_out()
    measured = eflomal_score(test, training_pairs(read_pairs()))
    if args.check:
        from ..checkpoint import read_info

        print(json.dumps({"card": read_info(args.checkpoint)["metrics"].get("eflomal"), "measured": measured}))
        return 0
    update_metrics(args.checkpoint, {"eflomal": measured})
    print(json.dumps(measured))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
