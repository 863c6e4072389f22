"""A model from "Watch an induction head form" carries its last evaluation's numbers to the Model tab.

Regression: the watch kept `metrics = {}`, so the Model tab said "Metrics: none recorded" of a model whose loss and
best heads the run had just shown. The head scores are checked against a fresh computation on the model itself."""
from __future__ import annotations

import math

from store.catalogue import USER_MODELS
from tabs.model import describe_model
from tests.conftest import page_call
from tabs.train.stop_signal import StopSignal
from tabs.train.watch import WATCH, watch_stream
from transformer.interpretability.phase_change import best_scores


def test_the_watched_model_carries_its_last_evaluation_to_the_model_tab():
    control = StopSignal()
    last = list(watch_stream(control, steps=WATCH["eval_every"]))[-1]  # one evaluation, at the last step
    control.discard()
    metrics = last.info["metrics"]
    assert math.isfinite(metrics["val_loss"]) and metrics["val_loss"] > 0, metrics
    prev_head, prev, ind_head, ind = best_scores(last.model)  # the model has not changed since that evaluation
    assert (metrics["previous_token_head"], metrics["induction_head"]) == (prev_head, ind_head), metrics
    assert abs(metrics["previous_token_score"] - prev) < 1e-4 and abs(metrics["induction_score"] - ind) < 1e-4
    assert f"at step {WATCH['eval_every']}" in metrics["measured_on"]
    key = "0123456789abcdef0123456789abcd26"  # a browser's key, in its page's cookie
    name = USER_MODELS.reserve(key, "induction")
    USER_MODELS.put(key, name, last.model, last.tokenizer, last.info)
    summary = describe_model(name, request=page_call(key)).summary
    assert "none recorded" not in summary, summary
    assert f"| induction score | {metrics['induction_score']:.4g} |" in summary, summary  # tabs.model.metric_label
    layer, head = metrics["induction_head"].split(".")  # a head in words, not the number "1.0"
    assert f"| induction head | layer {layer}, head {head} |" in summary, summary
