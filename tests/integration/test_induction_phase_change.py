"""The induction phase change, live (Olsson et al. 2022): on a fixed seed the run of "Watch an induction head form"
(the Train tab's) shows the induction score passing 0.5 and the loss falling fastest inside the window where that
score rose. About 2-4 minutes on a 2-core CPU (3,300 steps; bench/RESULTS.md has the measured steps and time)."""
from __future__ import annotations

import torch

from tabs.train.watch import WATCH
from transformer.interpretability.phase_change import rise_window, steepest_drop
from transformer.train.induction import induction_run, watch_induction


def test_induction_score_jumps_where_the_loss_falls():
    """Invariant of the phase change on seed 0: the best induction score reaches 0.5 within the run; the steepest
    fall of the validation loss between two evaluations lies inside the window where the score rose from below 0.1
    to 0.5; the heads that did it are a previous-token head in layer 0 and an induction head in layer 1."""
    torch.set_num_threads(max(1, min(2, torch.get_num_threads())))
    model, tok, data, cfg = induction_run(WATCH["steps"], WATCH["eval_every"], seed=0)
    points = [e for e in watch_induction(model, tok, data, cfg) if e.kind == "phase"]
    steps = [p.step for p in points]
    window = rise_window(steps, [p.induction for p in points])
    assert window is not None, f"the induction score stayed below 0.5: {max(p.induction for p in points):.2f}"
    a, b = steepest_drop(steps, [p.val_loss for p in points])
    assert window[0] <= a and b <= window[1], f"steepest drop {a}-{b} outside the rise window {window}"
    last = points[-1]
    assert last.induction_head.startswith("1.") and last.previous_token_head.startswith("0.")
    assert points[0].val_loss - last.val_loss > 1.0  # the fall is real: more than 1 nat of the ~4.1 at the start
