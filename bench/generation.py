"""Generation speed: the time per token along a long continuation (does it grow with the KV cache?), and the KV
cache's speed-up over re-running the decoder, for every configuration option.

    python bench/generation.py                                   # both parts, 1 thread (a few minutes)
    python bench/generation.py --part positions                  # the time per token at ~100 and ~900 only
    python bench/generation.py --part options                    # the cache / no cache table only
    python bench/generation.py --rounds 2 --new 32 --long 200    # smoke test

Part 1, positions. Decoder-only, 4 layers, d_model 256, 8 heads, d_ff 1024, vocabulary 1000, max_len 1024, random
weights. Batch 1, a 16-token prompt, --long greedy tokens (default 960, so positions 16-975) through
transformer.generate.generate(use_cache=True). Each token's time is the time between two yields, on the wall
clock and on the thread's CPU clock; the figure for a position is the median over the 32 tokens around it, and the
headline is the median over interleaved rounds of the per-round ratio time(~900) / time(~100) for MHA with
`KVCache` as it is (preallocated, doubles when full). Interleaved with it: the same model with `CatKVCache`, defined
below, which reproduces the old append (a `torch.cat` of the whole cache at every step, as transformer/attention.py
did before commit efc43df), and GQA (2 kv heads) and MQA models, whose caches are 4x and 8x smaller. A last MHA
generation times each step's `model.decode` call and the attention kernel inside it, to show where the growth is.

Part 2, options. The same model in post-norm, ReLU, sinusoidal, MHA, decoder-only form, and that model with one
option changed per row (and GPT-2's combination: pre-norm, GELU, learned positions). Batch 1, a 16-token prompt
(the source, for encoder-decoder), --new greedy tokens, use_cache=True against use_cache=False, interleaved; the
headline of a row is the median per-round ratio of tokens/s (wall), with the ratio of CPU times beside it.
Cached and uncached tokens are checked equal.

One thread by default: on this 2-core machine shared with other jobs, two intra-op threads wait for each other
whenever one of them loses its core, and the step times come out in multiples of the scheduler's time slice. The
CPU clock counts only the time the thread actually ran, so a busy machine disturbs it less than the wall clock.

In both parts the EOS token's (tied) embedding row is zeroed, so its logit is exactly 0 and greedy decoding runs the
full length (the speed does not depend on the weights' values).
"""
from __future__ import annotations

import argparse
import copy
import os
import statistics
import time
from collections import defaultdict
from types import SimpleNamespace

from timing import RatioStats, interleave, machine_header, table, verdict  # also puts the repo on sys.path

import torch

from transformer import Transformer, TransformerConfig
from transformer.attention import KVCache
from transformer.generate import cache_bytes_per_token, generate

TARGET_SPEEDUP = 5.0  # cached >= 5x the tokens/s of uncached, for every option
TARGET_GROWTH = 1.3  # time per token at position ~900 <= 1.3x that at ~100
PROMPT_LEN = 16
PROMPT = list(range(3, 3 + PROMPT_LEN))  # ids 0-2 are pad/bos/eos
WINDOW = 32  # tokens per position window
CLOCKS = {"wall": time.perf_counter, "CPU": time.thread_time}  # CPU: meaningful with --threads 1
BASE = dict(n_decoder_layers=4, d_model=256, n_heads=8, d_ff=1024, vocab_size=1000, dropout=0.1)
DECODER_ONLY = dict(arch="decoder-only")
OPTIONS = {  # row label: the fields that differ from the base (decoder-only, post-norm, ReLU, sinusoidal, MHA)
    "base: post-norm, ReLU, sinusoidal, MHA": {},
    "pre-norm": dict(norm_first=True),
    "GELU": dict(activation="gelu"),
    "GELU (tanh)": dict(activation="gelu_tanh"),
    "learned positions": dict(pos_encoding="learned"),
    "RoPE": dict(pos_encoding="rope"),
    "ALiBi": dict(pos_encoding="alibi"),
    "GQA (2 kv heads)": dict(n_kv_heads=2),
    "MQA (1 kv head)": dict(n_kv_heads=1),
    "MLA": dict(attention="mla"),
    "MLA + RoPE": dict(attention="mla", pos_encoding="rope"),
    "attention-only layers": dict(attention_only=True),
    "pre-norm, GELU, learned (GPT-2's)": dict(norm_first=True, activation="gelu", pos_encoding="learned"),
    "encoder-decoder (4 + 4 layers)": dict(arch="encoder-decoder", n_encoder_layers=4),
}


class CatKVCache(KVCache):
    """THE OLD BEHAVIOUR, for comparison only: every append concatenates the new positions to the whole cache
    (`k = torch.cat([cache.k, k], dim=2)`), so each step copies everything kept so far."""

    def append(self, *new: torch.Tensor) -> list[torch.Tensor]:
        self._storage = [torch.cat([kept, x], dim=2) for kept, x in zip(self._storage, new)] if self._storage \
            else list(new)  # (B, *, L + T, *) each
        self.length += new[0].size(2)
        return self.tensors()


def with_cache_class(model: Transformer, cache_class: type[KVCache]) -> Transformer:
    """A copy of `model` whose self-attention caches are `cache_class` (cross-attention keeps KVCache)."""
    other = copy.deepcopy(model)
    cross = other.config.is_encoder_decoder
    other.new_cache = lambda: [(cache_class(), KVCache(static=True) if cross else None) for _ in other.decoder]
    return other


def make_model(seed: int = 0, **fields) -> Transformer:
    """A random-weight model in eval mode whose EOS logit is exactly 0 (its tied embedding row is zero), so greedy
    decoding never stops early."""
    cfg = TransformerConfig(**{**BASE, **DECODER_ONLY, **fields})
    torch.manual_seed(seed)
    model = Transformer(cfg).eval()
    with torch.no_grad():
        model.embed.weight[cfg.eos_id] = 0.0
    return model


def run(model: Transformer, new_tokens: int, use_cache: bool) -> list[int]:
    tokens = [s.token_id for s in generate(model, PROMPT, new_tokens, strategy="greedy", use_cache=use_cache)]
    if len(tokens) != new_tokens:
        raise RuntimeError(f"generation stopped after {len(tokens)} of {new_tokens} tokens")
    return tokens


def timed_run(model: Transformer, new_tokens: int) -> tuple[list[int], dict[str, list[float]]]:
    """(tokens, {clock: seconds of each token}): the time from the previous yield (or the call) to this one, on the
    wall clock and on this thread's CPU clock (which does not run while the thread waits for a core)."""
    tokens, seconds = [], {clock: [] for clock in CLOCKS}
    last = {clock: read() for clock, read in CLOCKS.items()}
    for step in generate(model, PROMPT, new_tokens, strategy="greedy", use_cache=True):
        for clock, read in CLOCKS.items():
            now = read()
            seconds[clock].append(now - last[clock])
            last[clock] = now
        tokens.append(step.token_id)
    return tokens, seconds


def window_ms(seconds: list[float], position: int) -> float:
    """Median ms/token over the WINDOW tokens centred on `position` (the sequence length when a token is made)."""
    first = position - PROMPT_LEN - WINDOW // 2  # token i is made at position PROMPT_LEN + i
    return statistics.median(seconds[first: first + WINDOW]) * 1e3


NEW, OLD = "MHA, KVCache", "MHA, CatKVCache (old)"


def positions_part(args) -> None:
    print(f"\n-- part 1: time per token along a {PROMPT_LEN} + {args.long}-token greedy continuation --")
    near, far = 100, min(900, PROMPT_LEN + args.long - WINDOW // 2)  # a shorter --long moves the far window in
    mha = make_model(max_len=1024)
    models = {NEW: mha, OLD: with_cache_class(mha, CatKVCache),  # the same weights, the old cache
              "GQA (2 kv heads), KVCache": make_model(max_len=1024, n_kv_heads=2),
              "MQA (1 kv head), KVCache": make_model(max_len=1024, n_kv_heads=1)}
    per_round = {(name, clock): [] for name in models for clock in CLOCKS}  # (ms at ~near, ms at ~far) per round
    outputs: dict[str, list[int]] = {}

    def candidate(name):
        def fn():
            tokens, seconds = timed_run(models[name], args.long)
            outputs[name] = tokens
            for clock, s in seconds.items():
                per_round[name, clock].append((window_ms(s, near), window_ms(s, far)))
        return fn

    print(f"timing    {args.rounds} rounds, 1 warm-up each; windows of {WINDOW} tokens around positions {near} "
          f"and {far}")
    interleave({name: candidate(name) for name in models}, args.rounds, reps=1, warmup=1, log=False)
    assert outputs[NEW] == outputs[OLD], "the two caches produced different tokens"
    rows, growth = [], {}
    for (name, clock), windows in per_round.items():
        windows = windows[1:]  # drop the warm-up
        growth[name, clock] = RatioStats.of([b / a for a, b in windows])
        rows.append([name, clock, f"{statistics.median(a for a, _ in windows):.3f}",
                     f"{statistics.median(b for _, b in windows):.3f}", str(growth[name, clock])])
    print()
    print(table(rows, ["model, cache", "clock", f"ms/token at ~{near}", f"ms/token at ~{far}",
                       f"time(~{far}) / time(~{near})"]))
    print()
    for clock in CLOCKS:
        stats = growth[NEW, clock]
        print(f"{'headline, ' + NEW + ', ' + clock:40s} {stats}  target <= {TARGET_GROWTH}x: "
              f"{verdict(stats.median, TARGET_GROWTH, higher_is_better=False)}")
    for clock in CLOCKS:
        old, new = per_round[OLD, clock][1:], per_round[NEW, clock][1:]
        print(f"{'old / new cache at ~' + str(far) + ', ' + clock:40s} "
              f"{RatioStats.of([o[1] / n[1] for o, n in zip(old, new)])}")
    attention_share(mha, args.long, near, far)


def attention_share(model: Transformer, new_tokens: int, near: int, far: int) -> None:
    """Where the growth goes, for the MHA model: the wall time of each decoding step's `model.decode` call and, within
    it, of the fused attention kernel (F.scaled_dot_product_attention, every layer), medians over each window."""
    import transformer.attention as attention_module

    kernel = attention_module.F.scaled_dot_product_attention
    decode_us, kernel_us = defaultdict(float), defaultdict(float)  # position -> microseconds in this step
    position = [0]

    def timed_kernel(*a, **kw):
        t0 = time.perf_counter()
        out = kernel(*a, **kw)
        kernel_us[position[0]] += (time.perf_counter() - t0) * 1e6
        return out

    def timed_decode(tgt, *a, start: int = 0, **kw):
        position[0] = start + tgt.size(1)  # the sequence length this step reads
        t0 = time.perf_counter()
        out = Transformer.decode(model, tgt, *a, start=start, **kw)
        decode_us[position[0]] += (time.perf_counter() - t0) * 1e6
        return out

    functional = attention_module.F
    attention_module.F = SimpleNamespace(**{**{n: getattr(functional, n) for n in dir(functional)
                                               if not n.startswith("__")},
                                            "scaled_dot_product_attention": timed_kernel})
    model.decode = timed_decode  # this instance only
    try:
        run(model, new_tokens, use_cache=True)
    finally:
        attention_module.F = functional
        del model.decode
    print(f"\nwhere the time goes ({NEW}, one more generation, wall clock, median over each window):")
    for p in (near, far):
        window = range(p - WINDOW // 2, p + WINDOW // 2)
        d, k = (statistics.median(us[i] for i in window) for us in (decode_us, kernel_us))
        print(f"  position ~{p}: model.decode {d:,.0f} us, of which attention kernel ({model.config.n_decoder_layers} "
              f"layers) {k:,.0f} us, everything else {d - k:,.0f} us")


def options_part(args) -> None:
    print(f"\n-- part 2: cache / no cache, {PROMPT_LEN}-token prompt + {args.new} new tokens, every option --")
    print(f"timing    {args.option_rounds} interleaved rounds per option, 1 warm-up each")
    rows, lowest = [], None
    for label, fields in OPTIONS.items():
        model = make_model(**fields)
        outputs: dict[bool, list[int]] = {}
        cpu: dict[bool, list[float]] = {True: [], False: []}  # this thread's CPU seconds per call

        def candidate(use_cache, model=model, outputs=outputs, cpu=cpu):
            def fn():
                t0 = time.thread_time()
                outputs[use_cache] = run(model, args.new, use_cache)
                cpu[use_cache].append(time.thread_time() - t0)
            return fn

        res = interleave({"cache": candidate(True), "no cache": candidate(False)}, args.option_rounds, reps=1,
                         warmup=1, log=False)
        assert outputs[True] == outputs[False], f"{label}: cached and uncached tokens differ"
        stats = res.ratio("no cache", "cache")
        cpu_stats = RatioStats.of([u / c for c, u in zip(cpu[True][1:], cpu[False][1:])])  # warm-up dropped
        lowest = stats if lowest is None or stats.median < lowest.median else lowest
        rows.append([label, f"{cache_bytes_per_token(model.config):,}", f"{args.new / res.median('cache'):,.0f}",
                     f"{args.new / res.median('no cache'):,.0f}", str(stats), f"{cpu_stats.median:.2f}x",
                     verdict(stats.median, TARGET_SPEEDUP)])
        print(f"  {label}: {stats}; CPU time {cpu_stats}", flush=True)
    print()
    print(table(rows, ["option (decoder-only unless said)", "cache bytes/token", "tokens/s cache",
                       "tokens/s no cache", "cache / no cache (wall)", "(CPU)", f">= {TARGET_SPEEDUP}x"]))
    print(f"\nlowest cache / no cache over the options: {lowest.median:.3f}x  target >= {TARGET_SPEEDUP}x for every "
          f"option: {verdict(lowest.median, TARGET_SPEEDUP)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=("positions", "options", "both"), default="both")
    parser.add_argument("--rounds", type=int, default=8, help="interleaved rounds of the positions part")
    parser.add_argument("--long", type=int, default=960, help="new tokens in the positions part")
    parser.add_argument("--option-rounds", type=int, default=3, help="interleaved rounds per option")
    parser.add_argument("--new", type=int, default=256, help="new tokens per generation in the options part")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (0: torch's default)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(machine_header("generation: time per token by position, and KV cache vs no cache (batch 1, greedy)"))
    if args.part in ("positions", "both"):
        positions_part(args)
    if args.part in ("options", "both"):
        options_part(args)
    print(f"\nload avg at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
