"""Decoder-only generation speed with the KV cache against without it, and the cache's size per token.

    python bench/generation.py                       # the real measurement (~2 minutes)
    python bench/generation.py --rounds 2 --new 32   # smoke test

Model: decoder-only, 4 layers, d_model 256, 8 heads, d_ff 1024, vocabulary 1000, random weights (the speed does not
depend on them). Batch 1, a 16-token prompt, 256 new tokens, greedy, through transformer.generate.generate with
use_cache=True and use_cache=False, interleaved; the headline is the median per-round ratio of tokens/s.
"""
from __future__ import annotations

import argparse

from timing import RatioStats, interleave, machine_header, table, verdict  # also puts the repo on sys.path

import torch

from transformer import Transformer, TransformerConfig
from transformer.generate import cache_bytes_per_token, generate

TARGET = 5.0  # cached >= 5x the tokens/s of uncached
PROMPT_LEN = 16
PROMPT = torch.arange(3, 3 + PROMPT_LEN)  # ids 0-2 are pad/bos/eos


def make_model(n_kv_heads: int | None, new_tokens: int, seed: int = 0) -> Transformer:
    """A random-weight model whose greedy continuation of the prompt runs the full `new_tokens` (no early EOS)."""
    for attempt in range(20):
        cfg = TransformerConfig(arch="decoder-only", n_decoder_layers=4, d_model=256, n_heads=8, n_kv_heads=n_kv_heads,
                                d_ff=1024, vocab_size=1000, max_len=512, dropout=0.1)
        torch.manual_seed(seed + attempt)
        model = Transformer(cfg).eval()
        if len(run(model, new_tokens, use_cache=True)) == new_tokens:
            return model
    raise RuntimeError("every seed tried stops at EOS early")



def run(model: Transformer, new_tokens: int, use_cache: bool) -> list[int]:
    return [s.token_id for s in generate(model, PROMPT, new_tokens, strategy="greedy", use_cache=use_cache)]


def measured_cache_bytes(model: Transformer, new_tokens: int) -> float:
    """Bytes the self-attention caches hold after decoding, per cached position (prompt + new tokens - 1)."""
    from transformer.generate import _Decoder  # the decoding state that owns the cache

    dec = _Decoder(model, PROMPT.tolist(), 1, use_cache=True)
    with torch.no_grad():
        for _ in range(new_tokens):
            token = dec.next_logits()[0].argmax()
            dec.append(token[None])
    total = sum(c.nbytes() for layer in dec.cache for c in layer if c is not None)
    return total / dec.n_cached


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=10, help="interleaved rounds (one ratio each)")
    parser.add_argument("--new", type=int, default=256, help="new tokens per generation")
    parser.add_argument("--threads", type=int, default=0, help="torch intra-op threads (0: torch's default)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(machine_header("generation: KV cache vs no cache (decoder-only, batch 1, greedy)"))

    models = {"MHA": make_model(None, args.new), "GQA(2)": make_model(2, args.new), "MQA": make_model(1, args.new)}
    for name, model in models.items():  # the property the cache must keep: the same tokens
        assert run(model, args.new, True) == run(model, args.new, False), f"{name}: cached and uncached differ"

    candidates = {}
    for name, model in models.items():
        candidates[f"{name} cache"] = (lambda m: lambda: run(m, args.new, True))(model)
    candidates["MHA no cache"] = lambda: run(models["MHA"], args.new, False)
    print(f"timing    {args.rounds} rounds, {PROMPT_LEN}-token prompt + {args.new} new tokens per call, 1 warm-up each")
    res = interleave(candidates, args.rounds, reps=1, warmup=1)

    rows = []
    for name, model in models.items():
        cfg = model.config
        formula = cache_bytes_per_token(cfg)
        measured = measured_cache_bytes(model, args.new)
        sec = res.median(f"{name} cache")
        rows.append([name, cfg.n_kv_heads, f"{formula:,}", f"{measured:,.0f}", f"{args.new / sec:,.0f}",
                     f"{sec / args.new * 1e3:.2f}"])
    sec = res.median("MHA no cache")
    rows.append(["MHA no cache", 8, "-", "-", f"{args.new / sec:,.0f}", f"{sec / args.new * 1e3:.2f}"])
    print()
    print(table(rows, ["variant", "kv heads", "cache bytes/token (formula, fp32)", "measured", "tokens/s (median)",
                       "ms/token"]))
    print()
    stats: RatioStats = res.ratio("MHA no cache", "MHA cache")
    print(f"{'MHA cache / no cache, tokens/s (headline)':44s} {stats}  target >= {TARGET}x: {verdict(stats.median, TARGET)}")
    for name in ("GQA(2)", "MQA"):
        print(f"{name + ' cache / MHA no cache':44s} {res.ratio('MHA no cache', f'{name} cache')}")


if __name__ == "__main__":
    main()
