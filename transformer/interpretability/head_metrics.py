"""Metrics of attention heads in trained models: how anti-diagonal `reverse` cross-attention is, previous-token
scores, and the induction model's card (its best previous-token and induction heads, in-context accuracy)."""
from __future__ import annotations

import random

import torch

from ..data import InductionData, Task, TaskData, TextData
from ..encoding import source_ids, target_tokens
from ..heads import AttentionKind
from ..model import Transformer
from .analysis import (best_head, head_scores, previous_token, random_token_ids, repeated_sequence_scores,
                       repeated_sequences)
from .probe import record_ids


@torch.no_grad()
def reverse_anti_diagonality(model: Transformer, tokenizer, task: Task, n: int = 200, seed: int = 777) -> float:
    """For `reverse`: the anti-diagonal score (`transformer.analysis.anti_diagonal` on the text positions, the same
    definition as the app's overview) of the best cross-attention head of the last decoder layer, averaged over n
    fresh examples read with their true targets. 1.0 = output letter i puts all its weight on source letter m-1-i."""
    cfg, rng = model.config, random.Random(seed)
    total = torch.zeros(cfg.n_heads)
    for _ in range(n):
        source, target = task.sample(rng)
        pattern = record_ids(model, tokenizer, source_ids(tokenizer, source, cfg),
                             target_tokens(tokenizer, target)).patterns[AttentionKind.CROSS]
        total += head_scores(pattern.weights[-1:], pattern.query_text, pattern.key_text)["anti-diagonal"][0]
    return float(total.max() / n)


@torch.no_grad()
def previous_token_scores(model: Transformer, tokenizer, text: str, length: int = 128) -> torch.Tensor:
    """(layers, heads) share of attention on position t-1, on the first `length` tokens of text."""
    ids = torch.tensor([tokenizer.encode(text)[: min(length, model.config.max_len)]], device=model.device)
    maps = model(ids, return_attention=True).attention.decoder_self
    return torch.tensor([[previous_token(layer[0, h].float()) for h in range(layer.size(1))] for layer in maps])


@torch.no_grad()
def in_context_accuracy(model: Transformer, vocab_size: int | None = None, seq_len: int | None = None,
                        n_seqs: int = 200, seed: int = 0) -> tuple[float, float]:
    """Greedy next-token accuracy of a decoder-only model on n random distinct tokens repeated twice (the sequences
    of `analysis.repeated_sequences`): (on the first copy, on the second copy).

    First copy: the tokens at positions 1..n-1, which nothing in the context predicts (chance: about 1 / the number
    of tokens drawn from). Second copy: positions n+1..2n-1, each the token that followed the earlier occurrence of
    the token before it (what an induction head predicts). Position n, where the repeat starts, counts in neither.
    """
    tokens = repeated_sequences(model, vocab_size, seq_len, n_seqs, seed)  # (B, 2n)
    n = tokens.size(1) // 2
    hits = model(tokens[:, :-1]).logits.argmax(-1) == tokens[:, 1:]  # (B, 2n - 1); column i scores position i + 1
    return float(hits[:, : n - 1].float().mean()), float(hits[:, n:].float().mean())


def induction_metrics(model: Transformer, seq_len: int | None = None, n_seqs: int = 200, seed: int = 2024) -> dict:
    """What the `induction` checkpoint's card states, measured on n_seqs fresh repeated random sequences: the best
    previous-token head and the best induction head ("layer.head" and score), every head's detector scores, and
    the in-context accuracy on each copy beside chance (1 / the number of tokens drawn from)."""
    tokens = repeated_sequences(model, seq_len=seq_len, n_seqs=n_seqs, seed=seed)
    seq_len = tokens.size(1) // 2
    scores = repeated_sequence_scores(model, seq_len=seq_len, n_seqs=n_seqs, seed=seed)
    first, second = in_context_accuracy(model, seq_len=seq_len, n_seqs=n_seqs, seed=seed)
    n_ids = len(random_token_ids(model.config))
    prev_head, prev = best_head(scores["previous token"])
    ind_head, ind = best_head(scores["induction"])
    table = {name.replace(" ", "_") + "_score": [[round(v, 3) for v in row] for row in s.tolist()]
             for name, s in scores.items()}
    return {"previous_token_head": prev_head.label, "previous_token_head_score": round(prev, 3),
            "induction_head": ind_head.label, "induction_head_score": round(ind, 3),
            "in_context_accuracy_first_copy": round(first, 3), "in_context_accuracy_second_copy": round(second, 3),
            "chance_accuracy": round(1 / n_ids, 3),
            "measured_on": f"{n_seqs} fresh sequences of {seq_len} random distinct tokens repeated twice (seed {seed})",
            **table}


@torch.no_grad()
def mean_attended_distance(model: Transformer, data: TaskData | TextData | InductionData, tokenizer,
                           n_examples: int = 8) -> float:
    """How far the decoder's self-attention looks: the "mean distance" head score (transformer.analysis, on text
    positions) averaged over layers, heads and the first `n_examples` validation examples."""
    model.eval()
    values = []
    for i in range(n_examples):
        if isinstance(data, TaskData):
            if i >= len(data.val_pairs):
                break
            source, target = data.val_pairs[i]
            record = record_ids(model, tokenizer, source_ids(tokenizer, source, model.config),
                                target_tokens(tokenizer, target))
        else:
            windows = data.val_batch[0]
            if i >= windows.size(0):
                break
            record = record_ids(model, tokenizer, windows[i].tolist())
        values.append(float(record.patterns[AttentionKind.DECODER_SELF].scores()["mean distance"].mean()))
    return sum(values) / len(values)
