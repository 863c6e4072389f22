"""Metrics of trained models: exact match (the one definition: the Trainer, ablation and the CLI use it), perplexity
and nats per character. The metrics of attention heads are in transformer.interpretability.head_metrics."""
from __future__ import annotations

import math
import random
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from .data import Task
from .encoding import decoder_length, source_batch
from .generate import greedy_batch
from .model import HeadMask, Transformer
from .tokenization import UNK_ID


@torch.no_grad()
def greedy_exact_match(model: Transformer, tokenizer, pairs: list[tuple[str, str]], max_new_tokens: int, *,
                       head_mask: HeadMask | None = None, batch_size: int = 250) -> tuple[float, list[str]]:
    """(exact match, outputs): each source's greedy output (read as the encoder reads it, `encoding.source_batch`,
    up to max_new_tokens) decoded, and the fraction of outputs that equal their target exactly. The one definition
    of exact match: the Trainer's evaluation, head ablation and `exact_match` all call it."""
    outputs = []
    for i in range(0, len(pairs), batch_size):
        src = source_batch(tokenizer, [s for s, _ in pairs[i: i + batch_size]], model.config).to(model.device)
        outputs += [tokenizer.decode(o) for o in greedy_batch(model, src, max_new_tokens, head_mask)]
    return sum(o == t for o, (_, t) in zip(outputs, pairs)) / len(pairs), outputs


def exact_match(model: Transformer, tokenizer, task: Task, n: int = 1000, seed: int = 12345,
                batch_size: int = 250) -> float:
    """Fraction of n fresh examples of `task` whose greedy output equals the target exactly."""
    rng = random.Random(seed)
    pairs = [task.sample(rng) for _ in range(n)]
    return greedy_exact_match(model, tokenizer, pairs, decoder_length(task.max_target_len), batch_size=batch_size)[0]


@dataclass(frozen=True)
class TextLoss:
    """Next-token cross-entropy of a text, summed over every predicted token, with the characters those tokens
    stand for: loss per token and perplexity depend on the tokenizer; nats per character compares char and BPE."""

    nats: float  # total over the predicted tokens
    tokens: int
    chars: int

    @property
    def loss_per_token(self) -> float:
        return self.nats / self.tokens

    @property
    def perplexity(self) -> float:
        """exp(mean loss per token): per token of this tokenizer."""
        return math.exp(self.loss_per_token)

    @property
    def nats_per_char(self) -> float:
        return self.nats / self.chars


@torch.no_grad()
def text_loss(model: Transformer, tokenizer, text: str, block_size: int | None = None,
              batch_size: int = 32) -> TextLoss:
    """Cross-entropy of `text` in one pass: the text is cut into consecutive windows of block_size tokens, each read
    from its start; every token after the first is predicted once (its window's earlier tokens as context)."""
    block_size = block_size or model.config.max_len
    ids = torch.tensor(tokenizer.encode(text))
    n_windows = (len(ids) - 1) // block_size
    if n_windows == 0:
        raise ValueError(f"the text is too short: it needs more than block_size + 1 = {block_size + 1} tokens, "
                         f"it has {len(ids)}")
    starts = [i * block_size for i in range(n_windows)]
    total = 0.0
    for i in range(0, len(starts), batch_size):
        x = torch.stack([ids[s: s + block_size] for s in starts[i: i + batch_size]]).to(model.device)  # (B, T)
        y = torch.stack([ids[s + 1: s + 1 + block_size] for s in starts[i: i + batch_size]]).to(model.device)
        logits = model(x).logits.float()  # (B, T, V)
        total += F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), reduction="sum").item()
    scored = ids[1: 1 + n_windows * block_size].tolist()  # every predicted token, once
    n_chars = sum(1 if i == UNK_ID else len(tokenizer.id_to_token(i)) for i in scored)  # <unk> stood for one char
    return TextLoss(total, len(scored), n_chars)


def nats_per_char(model: Transformer, tokenizer, text: str, block_size: int | None = None,
                  batch_size: int = 32) -> float:
    """Cross-entropy of `text` in nats per character (`text_loss`): total nats / number of characters."""
    return text_loss(model, tokenizer, text, block_size, batch_size).nats_per_char


def bits(nats: float) -> float:
    return nats / math.log(2)
