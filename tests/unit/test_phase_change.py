"""The phase-change helpers on hand-made curves: where the score rose, where the loss fell fastest."""
from __future__ import annotations

import pytest

from transformer.interpretability.phase_change import rise_window, steepest_drop
from transformer.train.induction import induction_run
from tests.conftest import CHECKPOINTS


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


def test_the_run_is_the_shipped_recipe(shipped):
    """Oracle: the shipped `induction` checkpoint as load_checkpoint reads it: the run's model config equals its config
    in every field (the tokenizer's alphabet included: vocab_size) but two: d_ff (an attention-only model has no
    feed-forward network to size; the shipped one has no FFN weights) and attention_bias (the checkpoint predates
    the option and has biases on W^Q, W^K, W^V, W^O; the recipe, as `--induction` builds it today, has none). The
    run's TrainConfig equals the card's train_config in every field but the length of the run (steps, eval_every,
    eval_examples, max_seconds: the watch is cut to what a class waits for)."""
    import json
    from dataclasses import asdict, replace

    model, _, _, cfg = induction_run(steps=10, eval_every=5)
    shipped_model, _, info = shipped("induction")
    assert shipped_model.config.attention_only and not any(".ffn." in name for name, _ in
                                                           shipped_model.named_parameters())
    assert model.config == replace(shipped_model.config, d_ff=model.config.d_ff, attention_bias=False)
    cut = ("steps", "eval_every", "eval_examples", "max_seconds")
    card = json.loads((CHECKPOINTS / "induction" / "config.json").read_text())["training"]["train_config"]
    assert replace(cfg, **{k: card[k] for k in cut}) == replace(cfg, **{k: v for k, v in card.items() if k in asdict(cfg)})
    assert (cfg.steps, cfg.eval_every) == (10, 5)