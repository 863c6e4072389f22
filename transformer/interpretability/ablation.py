"""Head ablation: switch attention heads off and measure what the model loses.

A head is switched off by zeroing its output before the layer's output projection (`HeadMask`, passed at forward
time). `head_importance` switches off one head at a time and measures, on a fixed small evaluation set, the drop in
exact match (a seq2seq task) or the rise in loss (a language model, or an encoder-decoder without a task, such as the
translation model: the loss of its target given its source): the heads a model cannot do without.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Iterator

import torch
import torch.nn.functional as F

from ..data import Task
from ..encoding import decoder_ids, decoder_length, most_target_tokens, target_tokens
from ..evaluate import greedy_exact_match
from ..fill_mask import masked_one_at_a_time
from ..generate import generate
from ..heads import AttentionKind, HeadId
from ..model import HeadMask, Transformer


def heads_off(model: Transformer, heads: list[HeadId | tuple[str, int, int]]) -> HeadMask | None:
    """A HeadMask with the given heads (HeadIds or (kind, layer, head)) switched off and every other head on (None when none is)."""
    if not heads:
        return None
    cfg, dev = model.config, model.device
    masks = {}
    for head in heads:
        head = HeadId(*head)
        layers = head.kind.n_layers(cfg)
        if not 0 <= head.layer < layers or not 0 <= head.head < cfg.n_heads:
            raise ValueError(f"no head {head} in this model ({layers} layers x {cfg.n_heads} heads)")
        mask = masks.setdefault(head.kind.field, torch.ones(layers, cfg.n_heads, device=dev))
        mask[head.layer, head.head] = 0.0
    return HeadMask(**masks)


@dataclass
class EvalSet:
    """A fixed small evaluation set: seq2seq (source, target) pairs scored by exact match; or token sequences
    scored by loss: a language model's, or an encoder-decoder's sources (with `</s>`) and their targets."""

    pairs: list[tuple[str, str]] | None = None  # seq2seq task
    sequences: torch.Tensor | None = None  # (B, T) token ids: a language model's input, or an encoder's source
    targets: list[int] | None = None  # encoder-decoder: the target tokens of the one source (no <s>, no </s>)

    @property
    def metric(self) -> str:
        return "exact match" if self.pairs is not None else "loss"


def task_eval_set(task: Task, n: int = 100, seed: int = 4242) -> EvalSet:
    rng = random.Random(seed)
    return EvalSet(pairs=[task.sample(rng) for _ in range(n)])


@torch.no_grad()
def evaluate(model: Transformer, tokenizer, eval_set: EvalSet, head_mask: HeadMask | None = None) -> float:
    """Exact match of greedy outputs (seq2seq task) or mean cross-entropy in nats: of each next token of the
    sequences (language model), of the target given the source, teacher-forced (encoder-decoder), or of each token
    hidden in turn given the rest (encoder-only: transformer.fill_mask.masked_one_at_a_time)."""
    if model.config.is_encoder_only:
        losses = [masked_one_at_a_time(model, tokenizer, row.tolist(), head_mask)[1] for row in eval_set.sequences]
        return sum(losses) / len(losses)
    if eval_set.pairs is not None:
        longest = max(len(target_tokens(tokenizer, t)) for _, t in eval_set.pairs)
        return greedy_exact_match(model, tokenizer, eval_set.pairs, decoder_length(longest), head_mask=head_mask,
                                  batch_size=len(eval_set.pairs))[0]
    x = eval_set.sequences.to(model.device)
    if eval_set.targets is not None:
        dec_in, dec_out = (torch.tensor([ids], device=x.device) for ids in decoder_ids(eval_set.targets, model.config))
        logits = model(x, dec_in, head_mask=head_mask).logits.float()  # (1, T, V)
        return F.cross_entropy(logits.flatten(0, 1), dec_out.flatten()).item()
    logits = model(x[:, :-1], head_mask=head_mask).logits.float()
    return F.cross_entropy(logits.flatten(0, 1), x[:, 1:].flatten()).item()


def head_importance(model: Transformer, tokenizer, eval_set: EvalSet,
                    progress: Callable[[int, int], None] | None = None) -> dict[str, torch.Tensor]:
    """{kind: (layers, heads)}: how much worse the model gets with only that head switched off: the drop in exact
    match (seq2seq) or the rise in loss in nats (language model). `progress(done, total)` is called per head."""
    for item in head_importance_stream(model, tokenizer, eval_set):
        if isinstance(item, dict):
            return item
        if progress is not None:
            progress(*item)


@torch.no_grad()
def head_importance_stream(model: Transformer, tokenizer, eval_set: EvalSet
                           ) -> Iterator[tuple[int, int] | dict[str, torch.Tensor]]:
    """head_importance as a stream: (done, total) after each head, then the {kind: (layers, heads)} result."""
    base = evaluate(model, tokenizer, eval_set)
    sign = 1.0 if eval_set.metric == "exact match" else -1.0  # "worse" is lower exact match, higher loss
    cfg, kinds = model.config, AttentionKind.of(model.config)
    total, done = sum(k.n_layers(cfg) * cfg.n_heads for k in kinds), 0
    result = {}
    for kind in kinds:
        scores = torch.zeros(kind.n_layers(cfg), cfg.n_heads)
        for layer in range(kind.n_layers(cfg)):
            for head in range(cfg.n_heads):
                ablated = evaluate(model, tokenizer, eval_set, heads_off(model, [(kind, layer, head)]))
                scores[layer, head] = sign * (base - ablated)
                done += 1
                yield done, total
        result[kind] = scores
    yield result


def default_eval_set(model: Transformer, tokenizer, task: str | None, input_ids: list[int],
                     target_ids: list[int] | None = None) -> EvalSet:
    """The fixed small set a head is judged on: 100 fresh examples of a seq2seq model's task; for any other
    encoder-decoder (the translation model), the input being looked at: its source `input_ids` (with `</s>`) and
    its target `target_ids` (the reference the record read; the model's greedy output when None); for the
    induction model, 32 repeated random sequences; for any other language model, the input being looked at."""
    from ..data import TASKS
    from .analysis import repeated_sequences

    if model.config.is_encoder_decoder:
        if task in TASKS:
            return task_eval_set(TASKS[task])
        if not input_ids:
            raise ValueError("give a source to translate to measure the loss on")
        if target_ids is None:
            target_ids = [s.token_id for s in generate(model, list(input_ids), most_target_tokens(model.config))]
        return EvalSet(sequences=torch.tensor([list(input_ids)]), targets=list(target_ids)[:most_target_tokens(model.config)])
    if task == "induction":
        return EvalSet(sequences=repeated_sequences(model, n_seqs=32, seed=4242).cpu())
    if len(input_ids) < 2:
        raise ValueError("give an input of at least two tokens to measure the loss on")
    return EvalSet(sequences=torch.tensor([input_ids]))
