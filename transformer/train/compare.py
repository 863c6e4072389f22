"""Attention variants side by side: one small model trained once per variant, with the same data, steps and seed.

Key/value heads: multi-head attention gives every query head its own keys and values (MHA, n_kv_heads = n_heads);
multi-query attention (Shazeer 2019) shares one key/value head among all query heads (MQA, n_kv_heads = 1);
grouped-query attention (Ainslie et al. 2023) sits between, one key/value head per group of n_heads / n_kv_heads
query heads; multi-head latent attention (DeepSeek-V2) caches one small latent per position and rebuilds every
head's keys and values from it (MLA). Fewer cached numbers per token mean a smaller KV cache, at some cost in quality.
Positions: the paper's sinusoidal table, learned vectors, RoPE (rotated queries and keys) or ALiBi (a distance
penalty on the scores) - how they change quality, speed and how far the heads look. Blocks: the paper's LayerNorm
and feed-forward against Llama's RMSNorm and SwiGLU (at 2/3 of d_ff, so the three matrices hold about as many
parameters as the two they replace), one at a time and together.

`compare_variants(setup, variants)` trains the variants one after the other, yielding events so a UI can stream the
loss curves on one plot (`COMPARISONS` names the usual sets: "kv-heads", "attention", "positions", "blocks", "all";
the variants themselves are transformer.train.variants):

    ComparisonPlan   first: the variants to train, and why GQA is missing when it is (n_heads prime or 1)
    VariantEvent     each Trainer event (StepEvent / EvalEvent) of each variant, tagged with the variant
    ComparisonRow    last, one per variant: parameters, KV-cache bytes per token, training and decoding speed,
                     final quality, and how far its heads look (mean attended distance)
"""
from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass
from typing import Callable, Iterator

import torch

from ..config import TransformerConfig
from ..data import InductionData, TaskData, TextData
from ..encoding import source_ids
from ..evaluate import nats_per_char
from ..generate import _Decoder, cache_bytes_per_token  # _Decoder: the decoding state generate() itself uses
from ..model import Transformer
from .run import seeded_model
from .trainer import EvalEvent, StepEvent, TrainConfig, Trainer
from .variants import (COMPARISONS, Variant, attention_variants, block_variants,  # noqa: F401
                       comparison_variants, gqa_choices, gqa_skip_note, kv_head_variants, position_variants)

Data = TaskData | TextData | InductionData


@dataclass
class ComparisonSetup:
    """What every variant shares. Each variant replaces its own fields of `config` (Variant.config).

    `make_data()` must return a fresh data source seeded from `train_cfg.seed` (it is called once per variant, so
    each variant sees the same batches in the same order); `rewound(data)` makes one from a data source that has
    not yet served a batch. `val_text`, for a language model, is scored in nats per character at the end.
    """

    config: TransformerConfig
    tokenizer: object
    train_cfg: TrainConfig
    make_data: Callable[[], Data]
    val_text: str | None = None
    # how far the decoder's self-attention looks, (model, data, tokenizer) -> a number for the table's column (the CLI
    # and the app pass transformer.interpretability.head_metrics.mean_attended_distance); None leaves it empty
    attended_distance: Callable[[Transformer, Data, object], float] | None = None


@dataclass
class ComparisonPlan:
    variants: list[Variant]
    steps: int  # training steps per variant
    note: str | None = None  # why a variant is missing (GQA for a prime n_heads), to show the user
    kind: str = "plan"


@dataclass
class VariantEvent:
    """One Trainer event of one variant: `event.kind` is "step" (loss, lr, tokens/s) or "eval" (val loss, ...)."""

    variant: Variant
    event: StepEvent | EvalEvent
    kind: str = "train"


@dataclass
class ComparisonRow:
    """One variant's line of the final table. val_loss, and exact_match (seq2seq tasks: greedy, on the Trainer's
    eval_examples validation pairs), come from the Trainer's evaluation at the last step; nats_per_char (language
    models given `val_text`) is measured on the whole validation text."""

    variant: str
    n_heads: int
    n_kv_heads: int
    parameters: int
    kv_cache_bytes_per_token: int  # what the decoder's self-attention caches per token, all layers, fp32
    decode_tokens_per_sec: float  # greedy decoding with the KV cache, batch 1
    steps: int
    train_seconds: float
    final_train_loss: float
    val_loss: float
    exact_match: float | None = None
    nats_per_char: float | None = None
    attention: str = "mha"
    pos_encoding: str = "sinusoidal"
    train_tokens_per_sec: float | None = None  # target tokens trained on / training seconds
    mean_attended_distance: float | None = None  # decoder self-attention, mean over layers, heads and queries
    norm: str = "layer"
    ffn: str = "standard"
    kind: str = "row"

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k != "kind"}


ComparisonEvent = ComparisonPlan | VariantEvent | ComparisonRow


def rewound(data: Data) -> Callable[[], Data]:
    """A `make_data` for a data source that has served no batch yet: each call hands back the same object rewound to
    its state now (the state()/load_state() of resuming), which is what a fresh source with the same seed would be."""
    start = data.state()

    def make_data() -> Data:
        data.load_state(start)
        return data

    return make_data


# --- measuring ----------------------------------------------------------------------------------------------------


def parameter_count(model: Transformer) -> int:
    """Trainable parameters, tied embeddings counted once."""
    return sum(p.numel() for p in model.parameters())


def decode_prompt(data: Data, tokenizer, config: TransformerConfig, length: int = 16) -> list[int]:
    """What the speed test decodes from: the first validation source (seq2seq) or the first `length` tokens of the
    first validation window (language model)."""
    if isinstance(data, TaskData):
        return source_ids(tokenizer, data.val_pairs[0][0], config)
    return data.val_batch[0][0, :length].tolist()


@torch.no_grad()
def decode_seconds(model: Transformer, prompt: list[int], n_tokens: int) -> tuple[int, float]:
    """(tokens, seconds) of greedy decoding with the KV cache, batch 1, as generate() decodes but never stopping
    at EOS, so every variant decodes the same number of tokens (an encoder-decoder stops at max_len)."""
    start = time.perf_counter()
    decoder, done = _Decoder(model, prompt, 1, use_cache=True), 0
    while done < n_tokens and not decoder.full:
        decoder.append(decoder.next_logits().argmax(-1))  # (1,)
        done += 1
    return done, time.perf_counter() - start


def decode_speeds(models: list[Transformer], prompt: list[int], n_tokens: int = 64, rounds: int = 5) -> list[float]:
    """Median tokens/s of each model over `rounds` timed decodes, after one warm-up decode each. The models take
    turns within a round, in alternating order, so a burst of load on a shared machine slows them alike."""
    for model in models:
        model.eval()
        decode_seconds(model, prompt, n_tokens)  # warm-up: first-call allocations, oneDNN kernel choice
    rates: list[list[float]] = [[] for _ in models]
    for r in range(rounds):
        order = range(len(models)) if r % 2 == 0 else reversed(range(len(models)))
        for i in order:
            tokens, seconds = decode_seconds(models[i], prompt, n_tokens)
            rates[i].append(tokens / seconds)
    return [statistics.median(r) for r in rates]


# --- the comparison -----------------------------------------------------------------------------------------------


def build_variant(setup: ComparisonSetup, variant: Variant, device: str | torch.device = "cpu"
                  ) -> tuple[Transformer, Data]:
    """The variant's model, initialised right after seeding torch with train_cfg.seed (the same random stream for
    every variant, whatever ran before), and its fresh data source. The stream is the same, not the weights: the
    attention projections' sizes differ, so the weights drawn after them differ too, as would a different seed's;
    with dropout > 0 the dropout masks continue the stream after initialisation."""
    return seeded_model(variant.config(setup.config), setup.train_cfg.seed, device), setup.make_data()


def compare_variants(setup: ComparisonSetup, variants: list[Variant] | None = None, *,
                     decode_tokens: int = 64, speed_rounds: int = 15, device: str | torch.device = "cpu",
                     stop: Callable[[], bool] | None = None) -> Iterator[ComparisonEvent]:
    """Train `variants` (default `kv_head_variants(setup.config.n_heads)`) one after the other and compare them.

    Yields a ComparisonPlan, then every VariantEvent of every run, then one ComparisonRow per variant. Decoding
    speed is measured once all variants are trained, interleaved (see `decode_speeds`). Closing the generator stops
    at once. A Trainer's `max_seconds` applies to each run; a run it cuts short shows fewer `steps` in its row.
    `stop()`, asked after every training step, ends the comparison early: the variant in training is dropped
    (its events were yielded; it gets no row) and the variants trained before it are measured and get their rows.
    """
    n_heads = setup.config.n_heads
    variants = list(variants) if variants is not None else kv_head_variants(n_heads)
    if not variants or len({v.name for v in variants}) != len(variants):
        raise ValueError(f"variants: give at least one, with distinct names, got {variants!r}")
    for variant in variants:
        variant.config(setup.config)  # refuse a variant this model cannot be (RoPE with an odd d_k) before training
    names = {v.name for v in variants}
    kv_comparison = "MQA" in names or "MHA" in names
    note = None if "GQA" in names or not kv_comparison else gqa_skip_note(n_heads)
    yield ComparisonPlan(variants, setup.train_cfg.steps, note)
    trained = []  # (variant, model, its last StepEvent, its last EvalEvent, median training tokens/s)
    stopped = False
    for variant in variants:
        model, data = build_variant(setup, variant, device)
        last, rates = {}, []
        run = Trainer(model, setup.tokenizer, data, setup.train_cfg).run()
        for event in run:
            last[event.kind] = event
            if event.kind == "step":
                rates.append(event.tokens_per_sec)
            yield VariantEvent(variant, event)
            if stop is not None and stop():
                stopped = True
                run.close()
                break
        if stopped:
            break
        # the Trainer evaluates at its last step; the median step rate leaves evaluation pauses out
        trained.append((variant, model, last["step"], last["eval"], statistics.median(rates)))
    if not trained:
        return
    prompt = decode_prompt(data, setup.tokenizer, setup.config)  # every variant's data has the same validation set
    speeds = decode_speeds([t[1] for t in trained], prompt, decode_tokens, speed_rounds)
    for (variant, model, last_step, last_eval, train_rate), speed in zip(trained, speeds):
        yield result_row(variant, model, setup, data, speed, train_rate, last_step, last_eval)


def result_row(variant: Variant, model: Transformer, setup: ComparisonSetup, data: Data, speed: float,
               train_rate: float, last_step: StepEvent, last_eval: EvalEvent) -> ComparisonRow:
    """A trained variant's table row; `last_eval` is the Trainer's evaluation at its final step."""
    model.eval()
    cfg = model.config
    nats = nats_per_char(model, setup.tokenizer, setup.val_text) if setup.val_text else None
    return ComparisonRow(variant.name, cfg.n_heads, cfg.n_kv_heads, parameter_count(model),
                         cache_bytes_per_token(cfg), round(speed, 1), last_step.step,
                         round(last_step.elapsed, 1), round(last_step.loss, 4), round(last_eval.val_loss, 4),
                         last_eval.exact_match, None if nats is None else round(nats, 4), cfg.attention,
                         cfg.pos_encoding, round(train_rate, 1),
                         None if setup.attended_distance is None
                         else round(setup.attended_distance(model, data, setup.tokenizer), 3), cfg.norm, cfg.ffn)


def markdown_table(rows: list[ComparisonRow]) -> str:
    """The rows as a Markdown table, with each variant's parameters and KV cache relative to the first row's."""
    head = ["variant", "attention", "positions", "parameters", "KV cache bytes/token", "train tokens/s",
            "decode tokens/s (cache)", "steps", "train s", "final train loss", "val loss", "mean attended distance"]
    seq2seq = any(r.exact_match is not None for r in rows)
    text = any(r.nats_per_char is not None for r in rows)
    head += ["exact match"] * seq2seq + ["nats/char"] * text
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    base = rows[0]
    for r in rows:
        attention = (f"MLA ({r.n_heads} heads)" if r.attention == "mla"
                     else f"{r.n_kv_heads} kv heads of {r.n_heads}")
        cells = [r.variant, attention, r.pos_encoding,
                 f"{r.parameters:,} ({r.parameters - base.parameters:+,})",
                 f"{r.kv_cache_bytes_per_token:,} ({r.kv_cache_bytes_per_token / base.kv_cache_bytes_per_token:.2f}x)",
                 "-" if r.train_tokens_per_sec is None else f"{r.train_tokens_per_sec:,.0f}",
                 f"{r.decode_tokens_per_sec:,.0f}", str(r.steps), f"{r.train_seconds:.0f}",
                 f"{r.final_train_loss:.4f}", f"{r.val_loss:.4f}",
                 "-" if r.mean_attended_distance is None else f"{r.mean_attended_distance:.2f}"]
        cells += [f"{r.exact_match:.1%}" if r.exact_match is not None else "-"] * seq2seq
        cells += [f"{r.nats_per_char:.4f}" if r.nats_per_char is not None else "-"] * text
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
