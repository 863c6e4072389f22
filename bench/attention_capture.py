"""Cost of capturing attention weights: forward with return_attention=True against False.

    python bench/attention_capture.py                 # both allocator settings (~2-3 minutes)
    python bench/attention_capture.py --rounds 2      # smoke test
    python bench/attention_capture.py --only default  # one allocator setting

The encoder-decoder of bench/train_throughput.py (3+3 layers, d_model 256, 8 heads, d_ff 1024), eval mode, no grad,
source and target length 128, at batch 1 (what the app's Attention tab runs) and batch 32. `return_attention=False`
goes through the fused kernel; `True` through our explicit scaled_dot_product_attention, which materialises every
(B, H, T, S) weight tensor. The two run interleaved; the ratio is the median of per-round time(True) / time(False).

glibc's malloc returns big blocks (above M_MMAP_THRESHOLD) to the kernel on free, so the next one of the same
size page-faults its way in again: the explicit path allocates several (B, H, T, S) tensors per layer. The script
re-runs itself with MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_ set (they must be in the environment before
the process starts), and once more calling mallopt() from inside (what app.py could do), and prints all three.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from timing import RatioStats, interleave, machine_header, table, verdict  # also puts the repo on sys.path

import torch

from transformer import Transformer, TransformerConfig

TARGET = 1.5  # captured forward <= 1.5x the uncaptured one
LENGTH = 128
MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": str(1 << 30), "MALLOC_TRIM_THRESHOLD_": str(1 << 30)}
SETTINGS = {"default": {}, "malloc-env": MALLOC_ENV, "mallopt": {}}  # mallopt: set from inside the process


def set_mallopt() -> bool:
    """What a running process can do instead of the environment variables: glibc's mallopt through ctypes.
    mallopt caps M_MMAP_THRESHOLD at 32 MiB (HEAP_MAX_SIZE / 2); M_TRIM_THRESHOLD has no cap."""
    import ctypes

    libc = ctypes.CDLL("libc.so.6")
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
    return bool(libc.mallopt(M_MMAP_THRESHOLD, 32 << 20)) and bool(libc.mallopt(M_TRIM_THRESHOLD, 1 << 30))


def measure(batch: int, rounds: int, reps: int) -> dict:
    cfg = TransformerConfig(arch="encoder-decoder", d_model=256, n_heads=8, n_encoder_layers=3, n_decoder_layers=3,
                            d_ff=1024, vocab_size=1000, max_len=LENGTH, dropout=0.1)
    torch.manual_seed(0)
    model = Transformer(cfg).eval()
    src = torch.randint(3, cfg.vocab_size, (batch, LENGTH))  # no padding
    tgt = torch.randint(3, cfg.vocab_size, (batch, LENGTH))
    with torch.no_grad():
        plain, captured = model(src, tgt), model(src, tgt, return_attention=True)
        assert torch.allclose(plain.logits, captured.logits, atol=1e-4), "the two paths disagree"
        res = interleave({"fused": lambda: model(src, tgt), "capture": lambda: model(src, tgt, return_attention=True)},
                         rounds, reps, warmup=2, log=False)
    return {"batch": batch, "fused": res.seconds["fused"], "capture": res.seconds["capture"]}


def child(args) -> list[dict]:
    if args.mallopt and not set_mallopt():
        raise RuntimeError("mallopt refused the settings")
    if args.threads:
        torch.set_num_threads(args.threads)
    results = []
    for batch in args.batches:
        reps = max(1, 32 // batch) if args.reps == 0 else args.reps  # ~similar work per round at every batch
        results.append(measure(batch, args.rounds, reps))
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds (one ratio each)")
    parser.add_argument("--reps", type=int, default=0, help="forwards per candidate per round (0: 32 / batch)")
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 32])
    parser.add_argument("--chunks", type=int, default=3, help="alternating child processes per setting")
    parser.add_argument("--threads", type=int, default=0, help="torch intra-op threads (0: torch's default)")
    parser.add_argument("--only", choices=list(SETTINGS), help="measure just one allocator setting")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # child mode: print JSON only
    parser.add_argument("--mallopt", action="store_true", help=argparse.SUPPRESS)  # child mode: call set_mallopt()
    args = parser.parse_args()

    if args.json:
        print(json.dumps(child(args)))
        return
    print(machine_header("attention capture: return_attention=True vs False (eval, no grad, length 128)"))
    settings = [args.only] if args.only else list(SETTINGS)
    # The settings need separate processes; they alternate in `chunks` short runs so drift hits both alike.
    chunks = min(args.chunks, args.rounds)
    per_chunk = [args.rounds // chunks + (i < args.rounds % chunks) for i in range(chunks)]
    runs: dict[str, list[list[dict]]] = {name: [] for name in settings}  # setting -> chunk -> per batch
    for i, rounds in enumerate(per_chunk):
        for name in settings if i % 2 == 0 else settings[::-1]:
            env = {k: v for k, v in os.environ.items() if k not in MALLOC_ENV} | SETTINGS[name]
            cmd = [sys.executable, __file__, "--json", "--rounds", str(rounds), "--reps", str(args.reps),
                   "--threads", str(args.threads), "--batches", *map(str, args.batches)]
            cmd += ["--mallopt"] if name == "mallopt" else []
            shown = " ".join(f"{k}={v}" for k, v in SETTINGS[name].items())
            print(f"run {i + 1}/{chunks} {name}: {shown + ' ' if shown else ''}python {' '.join(cmd[1:])}", flush=True)
            out = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if out.returncode:
                sys.exit(out.stderr)
            runs[name].append(json.loads(out.stdout.strip().splitlines()[-1]))

    rows, capture_ms = [], {}
    for name in settings:
        for b, batch in enumerate(args.batches):
            fused = [t for chunk in runs[name] for t in chunk[b]["fused"]]
            capture = [t for chunk in runs[name] for t in chunk[b]["capture"]]
            stats = RatioStats.of([c / f for c, f in zip(capture, fused)])
            capture_ms[name, batch] = [statistics.median(chunk[b]["capture"]) * 1e3 for chunk in runs[name]]
            rows.append([name, batch, f"{statistics.median(fused) * 1e3:.1f}", f"{statistics.median(capture) * 1e3:.1f}",
                         f"{stats.median:.3f}x ({stats.low:.3f}-{stats.high:.3f}, n={stats.n})",
                         verdict(stats.median, TARGET, higher_is_better=False)])
    print()
    print(table(rows, ["allocator", "batch", "fused ms", "capture ms", "capture / fused (IQR)",
                       f"target <= {TARGET}x"]))
    if "default" in settings and len(settings) > 1:
        print()
        for name in settings[1:]:
            for batch in args.batches:
                pairs = zip(capture_ms["default", batch], capture_ms[name, batch])
                speedup = statistics.median(d / m for d, m in pairs)
                print(f"batch {batch:>2}: {name} makes the captured forward {speedup:.2f}x as fast as default "
                      f"(median over {chunks} alternating process pairs)")


if __name__ == "__main__":
    main()
