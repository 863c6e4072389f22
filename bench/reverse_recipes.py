"""Which Train-tab recipe for `reverse` leaves a sharp anti-diagonal (issue 19, "Attention forming").

Trains one recipe as the Train tab builds the run (tabs.train.request.build_run: an encoder-decoder of `layers` +
`layers` layers, cosine schedule, one torch thread) and prints one JSON line: the wall time, the last exact match,
every cross-attention head's anti-diagonal score on "attention" read with the model's own output (the Attention
tab's overview score), the mean over 200 random examples of the best last-layer head
(transformer.interpretability.head_metrics.reverse_anti_diagonality), and, at each evaluation, (step, seconds,
exact match, best head on "attention").

    python bench/reverse_recipes.py LAYERS HEADS D_MODEL LR STEPS BATCH [POSITIONS]
    python bench/reverse_recipes.py 1 4 64 1e-2 3000 64     # the demo's recipe (tabs/demos.py REVERSE_LIVE)
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from tabs.train.request import TrainingRequest, build_run  # noqa: E402
from transformer.data import TASKS  # noqa: E402
from transformer.interpretability.head_metrics import reverse_anti_diagonality  # noqa: E402
from transformer.interpretability.probe import record_attention  # noqa: E402
from transformer.train import Trainer  # noqa: E402


def best_on_attention(model, tokenizer) -> torch.Tensor:
    """(layers, heads) anti-diagonal scores of the cross-attention on "attention" with the model's own output."""
    return record_attention(model.eval(), tokenizer, "attention").patterns["cross"].scores()["anti-diagonal"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, kind in (("layers", int), ("heads", int), ("d_model", int), ("lr", float), ("steps", int),
                       ("batch_size", int)):
        parser.add_argument(name, type=kind)
    parser.add_argument("positions", nargs="?", default="sinusoidal")
    args = parser.parse_args()
    torch.set_num_threads(1)
    request = TrainingRequest("task", "reverse", None, None, None, args.layers, args.heads, args.d_model, args.lr,
                              args.steps, args.batch_size, positions=args.positions).validated()
    run = build_run(request, max_seconds=10_000)
    trainer = Trainer(run.model, run.tokenizer, run.data, run.train_cfg)
    trajectory, started = [], time.perf_counter()
    for event in trainer.run():
        if getattr(event, "kind", "") == "eval":
            best = float(best_on_attention(run.model, run.tokenizer).max())
            trajectory.append((event.step, round(event.elapsed, 1), round(event.exact_match or 0.0, 3), round(best, 3)))
    scores = [[round(v, 3) for v in row] for row in best_on_attention(run.model, run.tokenizer).tolist()]
    print(json.dumps({"recipe": vars(args), "wall_s": round(time.perf_counter() - started, 1),
                      "exact_match": trajectory[-1][2], "anti_diagonal_on_attention": scores,
                      "mean_of_200": round(reverse_anti_diagonality(run.model, run.tokenizer, TASKS["reverse"]), 3),
                      "trajectory": trajectory}))


if __name__ == "__main__":
    main()
