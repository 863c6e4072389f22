"""Time of every patching grid (issue 27) on the shipped checkpoints, and of attribution patching on a GPT-2-small-
shaped model (random weights: the real ones are not on this machine; same shapes, same code path).

Each model gets the pair its demo uses (induction: patching_demos.induction_texts; translate-en-es: Luke 15:11
with 'sons' -> 'daughters'; the tasks: an example with one source character changed, target the model's greedy
output; shakespeare-char: a 42-character line with one character changed, scored by the clean target's loss).
Per grid: wall time and the process's CPU time (median of --rounds; with one thread the CPU time is what the grid
costs whatever else the shared machine runs), and the ratio to one plain forward pass of the clean input measured
in the same run (the peer, in CPU time). The goal: every grid within 2 s on 2 cores; attribution patching of a
GPT-2-small-shaped model within 5 s (its peer: true head patching, one forward per head). The load average is
printed with the figures.

`--clicks` times instead the app's two clicks of the patching section (tabs/attention/patching.py) on each model:
the grids click (the metric's default answers, the residual grid, the heads grid) and the head click (direct logit
attribution when the model is pre-norm, path patching into and from the head), each twice in the same run: with the
pair run by every method (what the app did before issue 41: 6-10 forwards of the pair per click) and with one
`run_pair` that every method reads (2).

    python bench/patching.py [--rounds 3] [--threads 2] [--models induction ...] [--no-gpt2] [--clicks]
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from deeper_views import gpt2_small_shaped  # noqa: E402
from transformer import load_checkpoint  # noqa: E402
from transformer.data import TASKS  # noqa: E402
from transformer.encoding import source_ids  # noqa: E402
from transformer.generate import generate_text  # noqa: E402
from transformer.heads import AttentionKind, HeadId  # noqa: E402
from transformer.interpretability.activation_patching import (head_patching, pattern_patching,  # noqa: E402
                                                              residual_patching)
from transformer.interpretability.attribution_patching import attribution_patching  # noqa: E402
from transformer.interpretability.logit_attribution import direct_logit_attribution  # noqa: E402
from transformer.interpretability.path_patching import path_patching, path_patching_into  # noqa: E402
from transformer.interpretability.patching_demos import (TRANSLATION_EXAMPLES, diverging_position,  # noqa: E402
                                                         induction_texts)
from transformer.interpretability.patching_metric import logit_difference, target_loss  # noqa: E402
from transformer.interpretability.patching_runs import minimal_pair, run, run_pair  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MODELS = ("induction", "reverse", "sort", "dates", "shakespeare-char", "translate-en-es")
SHAKESPEARE = "To be, or not to be, that is the question:"  # 42 characters: cells grow with length squared


def change_one(text: str, at: int, alphabet: str) -> str:
    """`text` with the character at `at` replaced by another of `alphabet`."""
    other = next(c for c in alphabet if c != text[at])
    return text[:at] + other + text[at + 1:]


def demo_pair(name: str, model, tok):
    """(pair, metric) of a shipped model's demo (see the module's docstring)."""
    cfg = model.config
    if name == "induction":
        clean, corrupted = induction_texts()
        pair = minimal_pair(model, tok.encode(clean), tok.encode(corrupted), tokenizer=tok)
        return pair, logit_difference(model, pair)
    if name == "shakespeare-char":
        pair = minimal_pair(model, tok.encode(SHAKESPEARE), tok.encode(change_one(SHAKESPEARE, 20, "xyz")),
                            tokenizer=tok)
        return pair, target_loss(pair)
    if name == "translate-en-es":
        _, clean, corrupted = TRANSLATION_EXAMPLES[0]
    else:
        task = TASKS[name]
        clean, _ = task.sample(random.Random(0))
        corrupted = change_one(clean, len(clean) // 2, task.alphabet)
    target = tok.encode(generate_text(model, tok, clean, cfg.max_len - 2, strategy="greedy"))
    pair = minimal_pair(model, source_ids(tok, clean, cfg), source_ids(tok, corrupted, cfg), target, tokenizer=tok)
    return pair, logit_difference(model, pair, position=diverging_position(model, pair))


def grids(model, pair, metric) -> dict[str, callable]:
    """Every grid of the library for this model, by name, as a function of nothing."""
    kinds = AttentionKind.of(model.config)
    out = {f"residual {s}": (lambda s=s: residual_patching(model, pair, metric, s))
           for s in (["encoder", "decoder"] if pair.encoder is not None else ["decoder"])}
    for k in kinds:
        out[f"heads {k}"] = lambda k=k: head_patching(model, pair, metric, k)
        out[f"heads {k} by position"] = lambda k=k: head_patching(model, pair, metric, k, by_position=True)
        out[f"patterns {k}"] = lambda k=k: pattern_patching(model, pair, metric, k)
    first = kinds[0]
    if first.n_layers(model.config) > 1 or len(kinds) > 1:
        out[f"path from {first} 0.0"] = lambda: path_patching(model, pair, metric, HeadId(first, 0, 0))
    last = HeadId(kinds[-1], kinds[-1].n_layers(model.config) - 1, 0)
    out[f"paths into {last}"] = lambda: path_patching_into(model, pair, metric, last)
    out["attribution (every head)"] = lambda: attribution_patching(model, pair, metric)
    if model.config.norm_first and hasattr(metric, "answer"):
        out["direct logit attribution"] = lambda: direct_logit_attribution(model, pair, metric)
    return out


def clicks(model, pair, metric_of) -> dict[str, callable]:
    """The app's grids click and head click (see the module's docstring), each as a function of whether the pair
    is run once (`run_pair`) or by every method; `metric_of(pair)` is the click's metric on either."""
    kind = AttentionKind.of(model.config)[-1]
    stack = "encoder" if pair.encoder is not None else "decoder"
    head = HeadId(kind, kind.n_layers(model.config) - 1, 0)

    def grids_click(once: bool):
        p = run_pair(model, pair) if once else pair
        metric = metric_of(p)
        return residual_patching(model, p, metric, stack), head_patching(model, p, metric, kind)

    def head_click(once: bool):
        p = run_pair(model, pair) if once else pair
        metric = metric_of(p)
        out = [path_patching_into(model, p, metric, head)]
        if model.config.norm_first and hasattr(metric, "answer"):
            out.append(direct_logit_attribution(model, p, metric))
        return out

    return {f"{what} click, pair {how}": (lambda f=f, once=once: f(once))
            for what, f in (("grids", grids_click), ("head", head_click))
            for how, once in (("run by every method", False), ("run once", True))}


def timed(fn, rounds: int) -> tuple[float, float]:
    """(median wall seconds, median CPU seconds of this process) of `rounds` calls after one warm-up call."""
    fn()
    walls, cpus = [], []
    for _ in range(rounds):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="timed calls per grid (median)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (the goal is for 2 cores)")
    parser.add_argument("--models", nargs="*", default=list(MODELS), help="shipped checkpoints to time")
    parser.add_argument("--no-gpt2", action="store_true", help="skip the GPT-2-small-shaped model")
    parser.add_argument("--clicks", action="store_true", help="time the app's two clicks, pair run once or not")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} threads, load average before: {os.getloadavg()}")
    print("| model | grid | cells | wall s | CPU s | CPU x one forward |\n|---|---|---:|---:|---:|---:|")
    for name in args.models:
        model, tok, _ = load_checkpoint(ROOT / "checkpoints" / name, device="cpu")
        pair, metric = demo_pair(name, model, tok)
        with torch.no_grad():
            _, forward = timed(lambda: run(model, pair, "clean"), args.rounds)  # CPU seconds: steadier under load
        if args.clicks:
            for click, fn in clicks(model, pair, lambda p, m=metric: m if hasattr(m, "target") else
                                    logit_difference(model, p, position=m.position)).items():
                wall, cpu = timed(fn, args.rounds)
                print(f"| {name} | {click} | | {wall:.3f} | {cpu:.3f} | {cpu / forward:.0f} |")
            continue
        for grid_name, fn in grids(model, pair, metric).items():
            result = fn()
            cells = sum(g.values.numel() for g in result.values()) if isinstance(result, dict) else (
                result.values.numel() if hasattr(result, "values") else len(result.terms()))
            wall, cpu = timed(fn, args.rounds)
            print(f"| {name} | {grid_name} | {cells} | {wall:.3f} | {cpu:.3f} | {cpu / forward:.0f} |")
    if not args.no_gpt2 and not args.clicks:
        gpt2_attribution(args.rounds)
    print(f"load average after: {os.getloadavg()}")


def gpt2_attribution(rounds: int) -> None:
    """Attribution patching of every head of a GPT-2-small-shaped model against true head patching."""
    model, _ = gpt2_small_shaped()  # deeper_views' GPT-2-small-shaped random model
    ids = torch.randint(100, 50000, (32,), generator=torch.Generator().manual_seed(0)).tolist()
    corrupted = ids[:10] + [ids[10] + 1] + ids[11:]
    pair = minimal_pair(model, ids, corrupted)
    metric = logit_difference(model, pair, answer=11, other=12)
    attribution, _ = timed(lambda: attribution_patching(model, pair, metric), rounds)
    true, _ = timed(lambda: head_patching(model, pair, metric), 1)
    print(f"\nGPT-2-small-shaped (random weights, 32 tokens, 144 heads): attribution patching {attribution:.2f} s, "
          f"true head patching {true:.2f} s ({true / attribution:.1f}x)")


if __name__ == "__main__":
    main()
