"""The phase-change helpers on hand-made curves: where the score rose, where the loss fell fastest."""
from __future__ import annotations

import pytest

from transformer.interpretability.phase_change import rise_window, steepest_drop
from transformer.train.induction import induction_run


def test_rise_window_by_hand():
    """Oracle: scores 0.02, 0.05, 0.2, 0.4, 0.6: the last below 0.1 before the first >= 0.5 is step 200; the first
    >= 0.5 is step 500. A score that never reaches 0.5 gives None."""
    steps = [100, 200, 300, 400, 500]
    assert rise_window(steps, [0.02, 0.05, 0.2, 0.4, 0.6]) == (200, 500)
    assert rise_window(steps, [0.02, 0.05, 0.2, 0.4, 0.45]) is None
    assert rise_window(steps, [0.7, 0.8, 0.9, 0.9, 0.9]) == (100, 100)


def test_steepest_drop_by_hand():
    """Oracle: losses 4.1, 4.0, 3.0, 2.5 at steps 0, 100, 150, 300: rates 0.001, 0.02, 0.0033 per step: (100, 150)."""
    assert steepest_drop([0, 100, 150, 300], [4.1, 4.0, 3.0, 2.5]) == (100, 150)
    with pytest.raises(ValueError):
        steepest_drop([0], [1.0])


def test_the_run_is_the_shipped_recipe():
    """Invariant: the run trains the shipped `induction` checkpoint's architecture (2 attention-only layers of 4
    heads, d_model 64, pre-norm, 64 positions, its 62-character alphabet) with its optimiser settings."""
    import json
    from pathlib import Path

    model, tok, _, cfg = induction_run(steps=10, eval_every=5)
    shipped = json.loads((Path(__file__).resolve().parents[2] / "checkpoints" / "induction" / "config.json")
                         .read_text())["model"]
    mine = model.config.to_dict()
    for field in ("arch", "vocab_size", "d_model", "n_heads", "n_decoder_layers", "attention_only", "norm_first",
                  "max_len", "pos_encoding", "dropout"):
        assert mine[field] == shipped[field], field
    assert (cfg.lr, cfg.batch_size, cfg.schedule, cfg.weight_decay) == (3e-3, 64, "constant", 0.1)
