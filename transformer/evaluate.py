"""Metrics of trained models: exact match on a task, how anti-diagonal `reverse` attention is, nats per character."""
from __future__ import annotations

import math
import random

import torch
import torch.nn.functional as F

from .analysis import argmax_hit_rate, previous_token
from .data import Task, pad
from .generate import greedy_batch
from .model import Transformer
from .tokenization import UNK_ID


@torch.no_grad()
def exact_match(model: Transformer, tokenizer, task: Task, n: int = 1000, seed: int = 12345,
                batch_size: int = 250) -> float:
    """Fraction of n fresh examples whose greedy output equals the target exactly."""
    rng, cfg, hits = random.Random(seed), model.config, 0
    pairs = [task.sample(rng) for _ in range(n)]
    for i in range(0, n, batch_size):
        chunk = pairs[i: i + batch_size]
        src = pad([tokenizer.encode(s) + [cfg.eos_id] for s, _ in chunk], cfg.pad_id).to(model.device)
        outputs = greedy_batch(model, src, task.max_target_len + 1)
        hits += sum(tokenizer.decode(out) == t for out, (_, t) in zip(outputs, chunk))
    return hits / n


@torch.no_grad()
def reverse_anti_diagonality(model: Transformer, tokenizer, task: Task, n: int = 200, seed: int = 777) -> float:
    """For `reverse`: the fraction of output positions whose strongest cross-attention weight, in the best head of
    the last decoder layer, falls on the mirrored source position (output t reads source n-1-t)."""
    cfg, rng = model.config, random.Random(seed)
    hits = torch.zeros(cfg.n_heads)
    total = 0
    for _ in range(n):
        source, target = task.sample(rng)
        src = torch.tensor([tokenizer.encode(source) + [cfg.eos_id]], device=model.device)
        tgt = torch.tensor([[cfg.bos_id] + tokenizer.encode(target)], device=model.device)
        cross = model(src, tgt, return_attention=True).attention.cross[-1][0]  # (H, T, S)
        m = len(source)
        mirrored = torch.arange(m - 1, -1, -1, device=model.device)  # output t reads source m-1-t
        hits += torch.tensor([argmax_hit_rate(cross[h, :m, :], mirrored) * m for h in range(cfg.n_heads)])
        total += m
    return float(hits.max() / total)


@torch.no_grad()
def nats_per_char(model: Transformer, tokenizer, text: str, block_size: int | None = None,
                  batch_size: int = 32) -> float:
    """Cross-entropy of `text` in nats per character: the text is cut into consecutive windows of block_size
    tokens, each read from its start; total nats / number of characters (so char and BPE models compare)."""
    block_size = block_size or model.config.max_len
    ids = torch.tensor(tokenizer.encode(text))
    n_windows = (len(ids) - 1) // block_size
    starts = [i * block_size for i in range(n_windows)]
    total = 0.0
    for i in range(0, len(starts), batch_size):
        x = torch.stack([ids[s: s + block_size] for s in starts[i: i + batch_size]]).to(model.device)
        y = torch.stack([ids[s + 1: s + 1 + block_size] for s in starts[i: i + batch_size]]).to(model.device)
        logits = model(x).logits.float()
        total += F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), reduction="sum").item()
    scored = ids[1: 1 + n_windows * block_size].tolist()  # every predicted token, once
    n_chars = sum(1 if i == UNK_ID else len(tokenizer.id_to_token(i)) for i in scored)  # <unk> stood for one char
    return total / n_chars


@torch.no_grad()
def previous_token_scores(model: Transformer, tokenizer, text: str, length: int = 128) -> torch.Tensor:
    """(layers, heads) share of attention on position t-1, on the first `length` tokens of text."""
    ids = torch.tensor([tokenizer.encode(text)[: min(length, model.config.max_len)]], device=model.device)
    maps = model(ids, return_attention=True).attention.decoder_self
    return torch.tensor([[previous_token(layer[0, h].float()) for h in range(layer.size(1))] for layer in maps])


def bits(nats: float) -> float:
    return nats / math.log(2)
