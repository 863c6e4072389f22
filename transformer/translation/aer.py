"""AER of any encoder-decoder's cross-attention on the held-out Bible verses, against the Strong's gold links: one of
our checkpoints or a pretrained translator from the Hugging Face layout (Marian: Helsinki-NLP/opus-mt-en-es).

    python -m transformer.translation.aer Helsinki-NLP/opus-mt-en-es    # Marian (downloaded where the Hub is reachable)
    python -m transformer.translation.aer checkpoints/translate-en-es   # ours: the figures of its card
    python -m transformer.translation.aer Helsinki-NLP/opus-mt-en-es --card checkpoints/translate-en-es
                                              # Marian's row in our model's card, beside eflomal's

The protocol is the card's (transformer.translation.evaluate.alignment_table): the decoder reads the reference
Spanish (teacher forcing, each side cut by its own tokenizer), each head's attention is summed over a word's
tokens into word weights, every gold-linked Spanish word is linked to the English word it attends most, and
precision, recall and AER are pooled over the 1,000 test verses, per head and per layer's mean, with the diagonal
baseline. Prints the best head, its figures and the diagonal's as JSON.
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from tqdm import tqdm

from ..checkpoint import CheckpointError, load_checkpoint
from ..heads import AttentionKind
from .bible import VersePair
from .corpus import DATA_DIR, held_out
from .evaluate import alignment_table


def load_translator(source: str | os.PathLike, device: str | None = None):
    """(model, tokenizer, info) of a checkpoint directory of ours (its config.json has a format_version) or of a
    pretrained encoder-decoder (a Hugging Face directory or repo id, transformer.pretrained.load_pretrained)."""
    from ..pretrained import load_pretrained

    config = Path(source) / "config.json"
    if config.is_file() and "format_version" in json.loads(config.read_text(encoding="utf-8")):
        model, tokenizer, info = load_checkpoint(source, device=device or "auto")
    else:
        model, tokenizer, info = load_pretrained(source, device=device)
    if not AttentionKind.CROSS.n_layers(model.config):
        raise ValueError(f"{source}: a {model.config.arch} model has no cross-attention to align words with")
    return model, tokenizer, info


def cross_attention_aer(model, tokenizer, pairs: list[VersePair] | None = None, progress: bool = False) -> dict:
    """The alignment table (AER, precision, recall per [layer][head] and per layer's mean, the best head, the
    diagonal baseline) of `model`'s cross-attention on `pairs`, by default the 1,000 held-out test verses."""
    pairs = held_out(DATA_DIR)[0] if pairs is None else pairs
    with tqdm(total=len(pairs), desc="alignment", unit="verse", disable=not progress) as bar:
        return alignment_table(model, tokenizer, pairs, progress=bar)


def summary(table: dict) -> dict:
    """The best head and its figures, the diagonal's, and what they were measured on."""
    layer, head = table["best_head"]
    return {"best_head": [layer, head], "aer": table["aer"][layer][head],
            "precision": table["precision"][layer][head], "recall": table["recall"][layer][head],
            "diagonal": table["diagonal"], "verses": table["verses"], "gold_links": table["gold_links"]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m transformer.translation.aer", description=__doc__.split("\n\n")[0])
    p.add_argument("source", help="a checkpoint directory of ours, or a Hugging Face directory or repo id")
    p.add_argument("--verses", type=int, default=None, help="only the first N test verses (default: all 1,000)")
    p.add_argument("--device", default=None, help="cpu, cuda; default: CUDA when present")
    p.add_argument("--card", metavar="CHECKPOINT", help="also write the figures into that translation checkpoint's "
                   "card, a row beside eflomal's (config.json's metrics.pretrained_alignment and README.md)")
    args = p.parse_args(argv)
    try:
        model, tokenizer, _ = load_translator(args.source, args.device)
    except (CheckpointError, ValueError) as e:  # not cached and no Hub, not a translator, bad files
        raise SystemExit(f"error: {e}")
    pairs = held_out(DATA_DIR)[0][: args.verses]
    figures = summary(cross_attention_aer(model, tokenizer, pairs, progress=True))
    print(json.dumps(figures))
    if args.card:
        from .evaluate import update_metrics

        update_metrics(args.card, {"pretrained_alignment": {"source": args.source, **figures}})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
