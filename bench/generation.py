"""Generation speed: the time per token along a long continuation (does it grow with the KV cache?), and the KV
cache's speed-up over re-running the decoder, for every configuration option.

    python bench/generation.py                                   # both parts (about 4 minutes when idle)
    python bench/generation.py --part positions                  # the time per token at ~100 and ~900 only
    python bench/generation.py --part options                    # the cache / no cache table only
    python bench/generation.py --rounds 2 --new 32 --long 200    # smoke test

Part 1, positions. Decoder-only, 4 layers, d_model 256, 8 heads, d_ff 1024, vocabulary 1000, max_len 1024, random
weights. Batch 1, a 16-token prompt, --long greedy tokens (default 960, so positions 16-975) through
transformer.generate.generate(use_cache=True). Each token's time is the wall time between two yields; the figure
for a position is the median over the 32 tokens around it, and the headline is the median over interleaved rounds
of the per-round ratio time(~900) / time(~100). Two caches, interleaved: `KVCache` as it is (preallocated, doubles
when full) and `CatKVCache`, defined below, which reproduces the old append (a `torch.cat` of the whole cache at
every step, as transformer/attention.py did before commit efc43df).

Part 2, options. The same model in post-norm, ReLU, sinusoidal, MHA, decoder-only form, and that model with one
option changed per row (and GPT-2's combination: pre-norm, GELU, learned positions). Batch 1, a 16-token prompt
(the source, for encoder-decoder), --new greedy tokens, use_cache=True against use_cache=False, interleaved; the
headline of a row is the median per-round ratio of tokens/s. Cached and uncached tokens are checked equal.

In both parts the EOS token's (tied) embedding row is zeroed, so its logit is exactly 0 and greedy decoding runs the
full length (the speed does not depend on the weights' values).
"""
from __future__ import annotations

import argparse
import copy
import os
import statistics
import time

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


def timed_run(model: Transformer, new_tokens: int) -> tuple[list[int], list[float]]:
    """(tokens, seconds of each token): the wall time from the previous yield (or the call) to this one."""
    tokens, seconds = [], []
    t = time.perf_counter()
    for step in generate(model, PROMPT, new_tokens, strategy="greedy", use_cache=True):
        now = time.perf_counter()
        tokens.append(step.token_id)
        seconds.append(now - t)
        t = now
    return tokens, seconds


def window_ms(seconds: list[float], position: int) -> float:
    """Median ms/token over the WINDOW tokens centred on `position` (the sequence length when a token is made)."""
    first = position - PROMPT_LEN - WINDOW // 2  # token i is made at position PROMPT_LEN + i
    return statistics.median(seconds[first: first + WINDOW]) * 1e3


def positions_part(args) -> None:
    print(f"\n-- part 1: time per token along a {PROMPT_LEN} + {args.long}-token greedy continuation --")
    near, far = 100, min(900, PROMPT_LEN + args.long - WINDOW // 2)  # a shorter --long moves the far window in
    model = make_model(max_len=1024)
    caches = {"KVCache (preallocated, doubling)": model,
              "CatKVCache (old: torch.cat every step)": with_cache_class(model, CatKVCache)}
    per_round: dict[str, list[tuple[float, float]]] = {name: [] for name in caches}
    outputs: dict[str, list[int]] = {}

    def candidate(name):
        def fn():
            tokens, seconds = timed_run(caches[name], args.long)
            outputs[name] = tokens
            per_round[name].append((window_ms(seconds, near), window_ms(seconds, far)))
        return fn

    print(f"timing    {args.rounds} rounds, 1 warm-up each; windows of {WINDOW} tokens around positions {near} "
          f"and {far}")
    interleave({name: candidate(name) for name in caches}, args.rounds, reps=1, warmup=1, log=False)
    first, second = outputs.values()
    assert first == second, "the two caches produced different tokens"
    rows, growth = [], {}
    for name, windows in per_round.items():
        windows = windows[1:]  # drop the warm-up
        growth[name] = RatioStats.of([b / a for a, b in windows])
        rows.append([name, f"{statistics.median(a for a, _ in windows):.3f}",
                     f"{statistics.median(b for _, b in windows):.3f}", f"{growth[name].median:.3f}x"])
    print()
    print(table(rows, ["cache", f"ms/token at ~{near}", f"ms/token at ~{far}", f"~{far} / ~{near}"]))
    print()
    for name, stats in growth.items():
        print(f"{name:40s} time(~{far}) / time(~{near}) {stats}  target <= {TARGET_GROWTH}x: "
              f"{verdict(stats.median, TARGET_GROWTH, higher_is_better=False)}")
    old, new = (per_round[n][1:] for n in reversed(list(caches)))
    print(f"{'old / new cache at ~' + str(far):40s} {RatioStats.of([o[1] / n[1] for o, n in zip(old, new)])}")


def options_part(args) -> None:
    print(f"\n-- part 2: cache / no cache, {PROMPT_LEN}-token prompt + {args.new} new tokens, every option --")
    print(f"timing    {args.option_rounds} interleaved rounds per option, 1 warm-up each")
    rows, lowest = [], None
    for label, fields in OPTIONS.items():
        model = make_model(**fields)
        outputs: dict[bool, list[int]] = {}

        def candidate(use_cache, model=model, outputs=outputs):
            def fn():
                outputs[use_cache] = run(model, args.new, use_cache)
            return fn

        res = interleave({"cache": candidate(True), "no cache": candidate(False)}, args.option_rounds, reps=1,
                         warmup=1, log=False)
        assert outputs[True] == outputs[False], f"{label}: cached and uncached tokens differ"
        stats = res.ratio("no cache", "cache")
        lowest = stats if lowest is None or stats.median < lowest.median else lowest
        rows.append([label, f"{cache_bytes_per_token(model.config):,}", f"{args.new / res.median('cache'):,.0f}",
                     f"{args.new / res.median('no cache'):,.0f}", str(stats),
                     verdict(stats.median, TARGET_SPEEDUP)])
        print(f"  {label}: {stats}", flush=True)
    print()
    print(table(rows, ["option (decoder-only unless said)", "cache bytes/token", "tokens/s cache",
                       "tokens/s no cache", "cache / no cache", f">= {TARGET_SPEEDUP}x"]))
    print(f"\nlowest cache / no cache over the options: {lowest.median:.3f}x  target >= {TARGET_SPEEDUP}x for every "
          f"option: {verdict(lowest.median, TARGET_SPEEDUP)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=("positions", "options", "both"), default="both")
    parser.add_argument("--rounds", type=int, default=8, help="interleaved rounds of the positions part")
    parser.add_argument("--long", type=int, default=960, help="new tokens in the positions part")
    parser.add_argument("--option-rounds", type=int, default=3, help="interleaved rounds per option")
    parser.add_argument("--new", type=int, default=256, help="new tokens per generation in the options part")
    parser.add_argument("--threads", type=int, default=0, help="torch intra-op threads (0: torch's default)")
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
