"""The data an SAE of a shipped model is trained and measured on: the model's own data, split.

`FeatureData` names the source, as its checkpoint was trained:
- "induction": the induction task's sequences (transformer.data.InductionData: a random prefix, n random distinct
  characters, the same n again); the training batches and the held-out batches come from two generators;
- a text file (shakespeare-char: data/tinyshakespeare.txt, relative to the repository): windows of its first 90% (the model's own training
  split) for the SAE's training, windows of the last 10% (the model's validation split) held out.
- "translation" (translate-en-es): length-bucketed batches of the model's own training verse pairs
  (transformer.translation.data, read from the SWORD modules: training only), and held out the first verses of
  the committed validation split (data/bible-en-es/valid.tsv: `--check` needs no SWORD module).
It is recorded in config.json beside the SAE, so `--check` rebuilds the same held-out batches.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from ..data import INDUCTION_ALPHABET, INDUCTION_MIN_HALF, InductionData, split_text, text_batch
from ..encoding import id_pair_batch, most_source_tokens, most_target_tokens, target_tokens
from ..model import Transformer
from .features import Batch

SPLITS = ("train", "held-out")
REPOSITORY = Path(__file__).resolve().parents[2]  # a relative text source is the repository's (data/...)


@dataclass(frozen=True)
class FeatureData:
    """`source` "induction" or a text file's path; `block_size` the length of a text window; `batch_size` rows per
    batch; `train_batches` and `held_out_batches` how many of each; `seed` the batches' generators."""

    source: str
    block_size: int = 64
    batch_size: int = 64
    train_batches: int = 40
    held_out_batches: int = 8
    seed: int = 0

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> FeatureData:
        try:
            return cls(**d)
        except TypeError:
            raise ValueError(f"the SAE's data record must have the fields of FeatureData, got {d!r:.200}") from None

    def describe(self, split: str) -> str:
        n = self.train_batches if split == "train" else self.held_out_batches
        if self.source == "translation":
            return (f"{n} batches of {self.batch_size} " + ("training verse pairs (seed {})".format(self.seed)
                    if split == "train" else "verse pairs of data/bible-en-es/valid.tsv, the first ones"))
        what = ("fresh sequences of the induction task (seed {})" if self.source == "induction" else
                f"{self.block_size}-character windows of {self.source}'s " +
                ("first 90%" if split == "train" else "last 10% (the model's validation split)") + " (seed {})")
        return f"{n} x {self.batch_size} " + what.format(self.seed + SPLITS.index(split))


def feature_batches(data: FeatureData, model: Transformer, tokenizer, split: str) -> list[Batch]:
    """The batches of `split` ("train" or "held-out"): (inputs, targets) as the trainer's data gives them."""
    if split not in SPLITS:
        raise ValueError(f"split: one of {', '.join(SPLITS)}, got {split!r}")
    n, seed = (data.train_batches, data.seed) if split == "train" else (data.held_out_batches, data.seed + 1)
    if data.source == "induction":
        ids = torch.tensor(tokenizer.encode(INDUCTION_ALPHABET))
        induction = InductionData(ids, INDUCTION_MIN_HALF, model.config.max_len, seed, 1)
        return [induction.train_batch(data.batch_size) for _ in range(n)]
    if data.source == "translation":
        return _verse_batches(data, model, tokenizer, split, n, seed)
    with open(REPOSITORY / data.source, encoding="utf-8") as f:  # an absolute source stays itself
        train_text, val_text = split_text(f.read())
    ids = torch.tensor(tokenizer.encode(train_text if split == "train" else val_text))
    generator = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        x, y = text_batch(ids, data.block_size, data.batch_size, generator)
        out.append(((x,), y))
    return out


def _verse_batches(data: FeatureData, model: Transformer, tokenizer, split: str, n: int, seed: int) -> list[Batch]:
    """The translation model's batches: its training pairs as its trainer draws them, or the validation verses."""
    from ..translation.corpus import held_out, training_pairs
    from ..translation.data import TranslationData

    if split == "train":
        from ..translation.bible import read_pairs

        verses = TranslationData(training_pairs(read_pairs()), [], tokenizer, model.config, seed, 0)
        return [verses.train_batch(data.batch_size) for _ in range(n)]
    cfg, valid = model.config, held_out()[1]
    out = []
    for start in range(0, min(n * data.batch_size, len(valid)), data.batch_size):
        pairs = [(tokenizer.encode(p.en)[:most_source_tokens(cfg)], target_tokens(tokenizer, p.es)[:most_target_tokens(cfg)])
                 for p in valid[start:start + data.batch_size]]
        src, tgt_in, tgt_out = id_pair_batch(pairs, cfg)
        out.append(((src, tgt_in), tgt_out))
    return out
