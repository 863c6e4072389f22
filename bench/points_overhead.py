"""What named points cost when nobody reads or writes them: cached greedy decoding, this tree against the tree
before them (commit 6f99384, the parent of the commit that added transformer/points.py), in one process.

    python bench/points_overhead.py                      # 4-layer d_model 256 and 12-layer d_model 768 (~3 minutes)
    python bench/points_overhead.py --rounds 3 --new 16  # smoke test
    python bench/points_overhead.py --base <commit>      # against another tree

The base tree's `transformer/` is extracted with `git archive` into a temporary folder as the package
`transformer_base` (the library imports itself relatively, so it runs under any name) and both are imported side
by side. Decoder-only, pre-norm, random weights with the EOS logit exactly 0 (greedy never stops), a 16-token prompt,
`--new` tokens through `generate(use_cache=True)`, one thread. Three candidates interleave: the base tree, this
tree, and this tree inside a `points(read=[...])` block that reads one residual (so every point is looked up in
an active block). The figure is the median of the per-round ratios time(this) / time(base): 1.000 is no cost.
Times are the thread's CPU time (time.thread_time), as bench/generation.py's: on a shared 2-core machine the wall
clock also counts the time other jobs held the core.
"""
from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

from timing import ROOT, Interleaved, machine_header, table  # also puts the repository on sys.path

import torch  # noqa: E402

BASE = "6f99384"  # main just before the named points (ea3a4ce)


def base_package(commit: str, folder: Path) -> object:
    """`transformer/` of `commit`, extracted under `folder` as the package transformer_base, imported."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "transformer"], check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    (folder / "transformer").rename(folder / "transformer_base")
    sys.path.insert(0, str(folder))
    return importlib.import_module("transformer_base")


def interleave_cpu(candidates: dict, rounds: int) -> Interleaved:
    """timing.interleave on the thread's CPU clock: one warm-up call each, then `rounds` rounds, order alternating."""
    for fn in candidates.values():
        fn()
    seconds = {name: [] for name in candidates}
    for r in range(rounds):
        for name in (list(candidates) if r % 2 == 0 else list(candidates)[::-1]):
            t0 = time.thread_time()
            candidates[name]()
            seconds[name].append(time.thread_time() - t0)
        print(f"  round {r + 1:2d}/{rounds}: " + "  ".join(f"{n}={s[-1] * 1e3:8.1f}ms" for n, s in seconds.items()),
              flush=True)
    return Interleaved(seconds)


def model_of(package, n_layers: int, d_model: int):
    torch.manual_seed(0)
    cfg = package.TransformerConfig(vocab_size=1000, d_model=d_model, n_heads=8, d_ff=4 * d_model, arch="decoder-only",
                                    n_decoder_layers=n_layers, max_len=1024, norm_first=True)
    model = package.Transformer(cfg).eval()
    with torch.no_grad():
        model.embed.weight[cfg.eos_id] = 0  # EOS's logit is exactly 0: greedy decodes the full length
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default=BASE)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--new", type=int, default=64)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(machine_header("named points: cached decoding against the tree before them"))
    import transformer
    from transformer.points import point_name, points

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        base = base_package(args.base, Path(tmp))
        base_generate = importlib.import_module("transformer_base.generate").generate
        from transformer.generate import generate

        for n_layers, d_model in ((4, 256), (12, 768)):
            old, new = model_of(base, n_layers, d_model), model_of(transformer, n_layers, d_model)
            prompt = list(range(5, 21))

            def run(gen, model):
                return lambda: sum(1 for _ in gen(model, prompt, args.new))

            def in_block():
                with points(read=[point_name("decoder", 0, "resid_post")]):
                    return run(generate, new)()

            print(f"-- {n_layers} layers, d_model {d_model}")
            timed = interleave_cpu({"base": run(base_generate, old), "points": run(generate, new),
                                    "block": in_block}, args.rounds)
            per_token = lambda name: f"{timed.median(name) / args.new * 1e3:.3f}"  # noqa: E731  ms per token
            rows.append([f"{n_layers} x {d_model}", per_token("base"), per_token("points"), per_token("block"),
                         str(timed.ratio("points", "base")), str(timed.ratio("block", "base"))])
    print(table(rows, ["layers x d_model", "base ms/token", "points ms/token", "block ms/token",
                       "points / base", "block / base"]))


if __name__ == "__main__":
    main()
