"""Translation batches for the Trainer: verse pairs encoded once, drawn in length buckets so little is padding.

Every epoch the training pairs are shuffled, cut into pools of 50 batches, each pool sorted by length and cut into
batches, and the batches shuffled: each batch holds verses of similar length. The ids are assembled by
transformer.encoding (source + </s>; <s> + target; target + </s>), the rule every encoder-decoder path uses.
"""
from __future__ import annotations

import random

import torch
import torch.nn.functional as F

from ..config import TransformerConfig
from ..encoding import id_pair_batch, most_source_tokens, most_target_tokens, pad, source_ids, target_tokens
from ..generate import greedy_batch
from ..heads import AttentionKind
from ..interpretability.probe import record_ids
from .bible import VersePair

POOL = 50  # batches per length-sorted pool


class TranslationData:
    """Batches of (English ids, Spanish ids); `evaluate` measures a model on the first validation verses."""

    def __init__(self, train: list[VersePair], valid: list[VersePair], tokenizer, config: TransformerConfig,
                 seed: int, n_val: int, max_tokens: int | None = None):
        self.tokenizer, self.config = tokenizer, config
        rooms = (max_tokens, max_tokens) if max_tokens else (most_source_tokens(config), most_target_tokens(config))
        encoded = [(tokenizer.encode(p.en), target_tokens(tokenizer, p.es)) for p in train]
        self.train = [(s, t) for s, t in encoded if 0 < len(s) <= rooms[0] and 0 < len(t) <= rooms[1]]
        if not self.train:
            raise ValueError(f"no training pair fits in {rooms[0]} source and {rooms[1]} target tokens")
        self.dropped = len(encoded) - len(self.train)
        self.valid = valid[:n_val]
        self.rng = random.Random(seed)
        self.batches: list[list[int]] = []
        self.epoch = 0

    def _new_epoch(self, batch_size: int):
        order = list(range(len(self.train)))
        self.rng.shuffle(order)
        batches = []
        for start in range(0, len(order), batch_size * POOL):
            pool = sorted(order[start:start + batch_size * POOL], key=lambda i: len(self.train[i][0]))
            batches += [pool[i:i + batch_size] for i in range(0, len(pool), batch_size)]
        self.rng.shuffle(batches)
        self.batches = batches
        self.epoch += 1

    def train_batch(self, batch_size: int):
        if not self.batches:
            self._new_epoch(batch_size)
        rows = self.batches.pop()
        src, tgt_in, tgt_out = id_pair_batch([self.train[i] for i in rows], self.config)
        return (src, tgt_in), tgt_out

    @torch.no_grad()
    def evaluate(self, model, tokenizer) -> dict:
        """Validation loss and token accuracy (teacher forcing) on the validation verses, three greedy
        translations, and the cross-attention of the first."""
        cfg = model.config
        losses, correct, total = 0.0, 0, 0
        for start in range(0, len(self.valid), 32):
            chunk = [(tokenizer.encode(p.en)[: most_source_tokens(cfg)],
                      target_tokens(tokenizer, p.es)[: most_target_tokens(cfg)]) for p in self.valid[start:start + 32]]
            src, tgt_in, tgt_out = (t.to(model.device) for t in id_pair_batch(chunk, cfg))
            logits = model(src, tgt_in).logits
            real = tgt_out != cfg.pad_id
            losses += F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=cfg.pad_id,
                                      reduction="sum").item()
            correct += int((logits.argmax(-1) == tgt_out)[real].sum())
            total += int(real.sum())
        shown = self.valid[:3]
        src = pad([source_ids(tokenizer, p.en, cfg)[-cfg.max_len:] for p in shown], cfg.pad_id).to(model.device)
        outputs = [tokenizer.decode(o) for o in greedy_batch(model, src, most_target_tokens(cfg))]
        first = shown[0]
        attention = record_ids(model, tokenizer, source_ids(tokenizer, first.en, cfg),
                               target_tokens(tokenizer, outputs[0])).patterns[AttentionKind.CROSS]
        return {"val_loss": losses / total, "token_accuracy": correct / total,
                "samples": [(p.en, p.es, o) for p, o in zip(shown, outputs)], "attention": attention}

    def state(self) -> dict:
        version, internal, gauss = self.rng.getstate()
        return {"rng": [version, list(internal), gauss], "epoch": self.epoch, "batches": self.batches}

    def load_state(self, state: dict):
        version, internal, gauss = state["rng"]
        self.rng.setstate((version, tuple(internal), gauss))
        self.epoch, self.batches = state["epoch"], [list(b) for b in state["batches"]]
