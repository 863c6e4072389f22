"""The Train tab's default run (reverse task, tiny preset), as the app runs it: how soon the first loss point
arrives after Start, and how soon the cross-attention of the evaluation example becomes anti-diagonal.

    python bench/train_tab.py            # prints both times; targets: < 1 s and < ~60 s on 2 CPU cores
"""
import sys
import time
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tabs.train.request import PRESETS, TrainingRequest, build_run  # noqa: E402
from tabs.train.session import warm_up  # noqa: E402
from transformer.train import Trainer  # noqa: E402


def anti_diagonal_hit_rate(event) -> float:
    """Best head of the last layer: the anti-diagonal score (transformer.interpretability.analysis, on the text positions)."""
    return float(event.attention.scores()["anti-diagonal"][-1].max())


def main(threshold: float = 0.9, limit_s: float = 180):
    warm_up()
    p = PRESETS["tiny"]
    request = TrainingRequest("task", "reverse", None, None, None, p["layers"], p["heads"], p["d_model"], p["lr"],
                              p["steps"], p["batch_size"]).validated()
    start = time.perf_counter()
    run = build_run(request)
    model, tokenizer, data, cfg = run.model, run.tokenizer, run.data, run.train_cfg
    first_point = formed = None
    for event in Trainer(model, tokenizer, data, cfg).run():
        now = time.perf_counter() - start
        if first_point is None and event.kind == "step":
            first_point = now
        if event.kind == "eval":
            score = anti_diagonal_hit_rate(event)
            print(f"{now:6.1f} s  step {event.step:5d}  val loss {event.val_loss:.3f}  exact {event.exact_match:.2f}"
                  f"  anti-diagonal {score:.2f}")
            if score >= threshold and formed is None:
                formed = now
                break
        if now > limit_s:
            break
    print(f"first loss point after Start: {first_point:.2f} s (target < 1 s)")
    print(f"anti-diagonal cross-attention (>= {threshold}): "
          f"{'%.0f s' % formed if formed else 'not within %d s' % limit_s} (target ~60 s)")


if __name__ == "__main__":
    main()
