"""MHA vs GQA vs MQA side by side: one small model trained three times, differing only in n_kv_heads.

Multi-head attention gives every query head its own keys and values (n_kv_heads = n_heads); multi-query attention
(Shazeer 2019) shares one key/value head among all query heads (n_kv_heads = 1); grouped-query attention (Ainslie
et al. 2023) sits between, one key/value head per group of n_heads / n_kv_heads query heads. Fewer key/value heads
mean fewer parameters and a smaller KV cache per generated token, at some cost in quality.

`compare_kv_heads(setup)` trains the variants one after the other with the same data, steps and seed, yielding
events so a UI can stream the loss curves on one plot:

    ComparisonPlan   first: the variants to train, and why GQA is missing when it is (n_heads prime or 1)
    VariantEvent     each Trainer event (StepEvent / EvalEvent) of each variant, tagged with the variant
    ComparisonRow    last, one per variant: parameters, KV-cache bytes per token, decoding tokens/s, final metrics
"""
from __future__ import annotations

import statistics
import time
from fractions import Fraction
from dataclasses import asdict, dataclass, replace
from typing import Callable, Iterator

import torch

from .config import TransformerConfig
from .data import InductionData, TaskData, TextData
from .evaluate import nats_per_char
from .generate import _Decoder, cache_bytes_per_token  # _Decoder: the decoding state generate() itself uses
from .model import Transformer
from .train import EvalEvent, StepEvent, TrainConfig, Trainer

Data = TaskData | TextData | InductionData


@dataclass(frozen=True)
class Variant:
    name: str  # "MHA", "GQA" or "MQA"
    n_kv_heads: int


@dataclass
class ComparisonSetup:
    """What every variant shares. `config.n_kv_heads` is replaced per variant; everything else stays.

    `make_data()` must return a fresh data source seeded from `train_cfg.seed` (it is called once per variant, so
    each variant sees the same batches in the same order); `rewound(data)` makes one from a data source that has
    not yet served a batch. `val_text`, for a language model, is scored in nats per character at the end.
    """

    config: TransformerConfig
    tokenizer: object
    train_cfg: TrainConfig
    make_data: Callable[[], Data]
    val_text: str | None = None


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
    kv_cache_bytes_per_token: int  # decoder self-attention keys + values, all layers, fp32
    decode_tokens_per_sec: float  # greedy decoding with the KV cache, batch 1
    steps: int
    train_seconds: float
    final_train_loss: float
    val_loss: float
    exact_match: float | None = None
    nats_per_char: float | None = None
    kind: str = "row"

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k != "kind"}


ComparisonEvent = ComparisonPlan | VariantEvent | ComparisonRow


# --- which variants ---------------------------------------------------------------------------------------------


def gqa_choices(n_heads: int) -> list[int]:
    """The n_kv_heads values that make grouped-query attention: divisors of n_heads strictly between 1 and n_heads."""
    return [g for g in range(2, n_heads) if n_heads % g == 0]


def gqa_skip_note(n_heads: int) -> str | None:
    """Why no GQA variant can be trained with n_heads query heads, or None when one can."""
    if gqa_choices(n_heads):
        return None
    if n_heads == 1:
        return ("GQA and MQA skipped: with n_heads=1 there is one key/value head whatever n_kv_heads is, so MHA, GQA "
                "and MQA are the same model. Use 4, 6 or 8 heads to compare three variants.")
    return (f"GQA skipped: n_heads={n_heads} is prime, so no n_kv_heads strictly between 1 and {n_heads} divides it "
            f"(grouped-query attention needs equal groups of query heads). Comparing MHA and MQA only; use 4, 6 or 8 "
            f"heads to compare three variants.")


def kv_head_variants(n_heads: int, gqa_kv_heads: int | None = None) -> list[Variant]:
    """MHA (n_kv_heads = n_heads), GQA (a divisor: `gqa_kv_heads`, else the one nearest sqrt(n_heads), the geometric
    middle, the larger on a tie: 4 heads -> 2, 6 -> 3, 8 -> 4) and MQA (1). GQA is left out when n_heads has no divisor strictly between 1 and n_heads
    (`gqa_skip_note` says so); with n_heads = 1 only MHA remains."""
    if not isinstance(n_heads, int) or n_heads < 1:
        raise ValueError(f"n_heads: must be a positive integer, got {n_heads!r}")
    choices = gqa_choices(n_heads)
    if gqa_kv_heads is not None and gqa_kv_heads not in choices:
        allowed = ", ".join(map(str, choices)) or f"none: n_heads={n_heads} has no divisor between 1 and itself"
        raise ValueError(f"n_kv_heads: GQA needs a divisor of n_heads={n_heads} strictly between 1 and {n_heads} "
                         f"({allowed}), got {gqa_kv_heads}")
    variants = [Variant("MHA", n_heads)]
    if choices:
        middle = gqa_kv_heads or min(choices, key=lambda g: (Fraction(max(g * g, n_heads), min(g * g, n_heads)), -g))
        variants.append(Variant("GQA", middle))
    if n_heads > 1:
        variants.append(Variant("MQA", 1))
    return variants


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
        return tokenizer.encode(data.val_pairs[0][0]) + [config.eos_id]
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
    key/value projections' sizes differ, so the weights drawn after them differ too, as would a different seed's;
    with dropout > 0 the dropout masks continue the stream after initialisation."""
    config = replace(setup.config, n_kv_heads=variant.n_kv_heads)
    torch.manual_seed(setup.train_cfg.seed)
    model = Transformer(config).to(device)
    return model, setup.make_data()


def compare_kv_heads(setup: ComparisonSetup, variants: list[Variant] | None = None, *,
                     decode_tokens: int = 64, speed_rounds: int = 15, device: str | torch.device = "cpu"
                     ) -> Iterator[ComparisonEvent]:
    """Train `variants` (default `kv_head_variants(setup.config.n_heads)`) one after the other and compare them.

    Yields a ComparisonPlan, then every VariantEvent of every run, then one ComparisonRow per variant. Decoding
    speed is measured once all variants are trained, interleaved (see `decode_speeds`). Closing the generator stops
    at once. A Trainer's `max_seconds` applies to each run; a run it cuts short shows fewer `steps` in its row.
    """
    n_heads = setup.config.n_heads
    variants = list(variants) if variants is not None else kv_head_variants(n_heads)
    if not variants or len({v.name for v in variants}) != len(variants):
        raise ValueError(f"variants: give at least one, with distinct names, got {variants!r}")
    names = {v.name for v in variants}
    yield ComparisonPlan(variants, setup.train_cfg.steps, None if "GQA" in names else gqa_skip_note(n_heads))
    trained = []  # (variant, model, its last StepEvent, its last EvalEvent)
    for variant in variants:
        model, data = build_variant(setup, variant, device)
        last = {}
        for event in Trainer(model, setup.tokenizer, data, setup.train_cfg).run():
            last[event.kind] = event
            yield VariantEvent(variant, event)
        trained.append((variant, model, last["step"], last["eval"]))  # the Trainer evaluates at its last step
    prompt = decode_prompt(data, setup.tokenizer, setup.config)  # every variant's data has the same validation set
    speeds = decode_speeds([model for _, model, _, _ in trained], prompt, decode_tokens, speed_rounds)
    for (variant, model, last_step, last_eval), speed in zip(trained, speeds):
        yield result_row(variant, model, setup, speed, last_step, last_eval)


def result_row(variant: Variant, model: Transformer, setup: ComparisonSetup, speed: float, last_step: StepEvent,
               last_eval: EvalEvent) -> ComparisonRow:
    """A trained variant's table row; `last_eval` is the Trainer's evaluation at its final step."""
    model.eval()
    nats = nats_per_char(model, setup.tokenizer, setup.val_text) if setup.val_text else None
    return ComparisonRow(variant.name, model.config.n_heads, variant.n_kv_heads, parameter_count(model),
                         cache_bytes_per_token(model.config), round(speed, 1), last_step.step,
                         round(last_step.elapsed, 1), round(last_step.loss, 4), round(last_eval.val_loss, 4),
                         last_eval.exact_match, None if nats is None else round(nats, 4))


def markdown_table(rows: list[ComparisonRow]) -> str:
    """The rows as a Markdown table, with each variant's parameters and KV cache relative to the first row's."""
    head = ["variant", "n_kv_heads", "parameters", "KV cache bytes/token", "decode tokens/s (cache)", "steps",
            "train s", "final train loss", "val loss"]
    seq2seq = any(r.exact_match is not None for r in rows)
    text = any(r.nats_per_char is not None for r in rows)
    head += ["exact match"] * seq2seq + ["nats/char"] * text
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    base = rows[0]
    for r in rows:
        cells = [r.variant, f"{r.n_kv_heads} of {r.n_heads}",
                 f"{r.parameters:,} ({r.parameters - base.parameters:+,})",
                 f"{r.kv_cache_bytes_per_token:,} ({r.kv_cache_bytes_per_token / base.kv_cache_bytes_per_token:.2f}x)",
                 f"{r.decode_tokens_per_sec:,.0f}", str(r.steps), f"{r.train_seconds:.0f}",
                 f"{r.final_train_loss:.4f}", f"{r.val_loss:.4f}"]
        cells += [f"{r.exact_match:.1%}" if r.exact_match is not None else "-"] * seq2seq
        cells += [f"{r.nats_per_char:.4f}" if r.nats_per_char is not None else "-"] * text
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
