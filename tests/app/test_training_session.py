"""The Train tab's session logic without a browser: validation, streaming, stop, and the exported checkpoint."""
import zipfile

import pytest

from tabs.training_session import LIMITS, PRESETS, TrainingRequest, run_training_session
from transformer import load_checkpoint


def request(**kw):
    base = dict(source="task", task="reverse", text=None, upload=None, hub=None, layers=1, heads=4, d_model=64,
                lr=3e-3, steps=400, batch_size=32)
    return TrainingRequest(**{**base, **kw})


def test_stop_ends_training_and_the_model_joins_the_session(tmp_path):
    """Setting the control event stops after the current step; the model is kept and exported as a zip."""
    models = {}
    updates = run_training_session(request(), models)
    first = next(updates)
    second = next(updates)
    assert second.step >= 1, "the first update after Start already has a loss point"
    first.control.set()
    last = list(updates)[-1]
    assert "stopped" in last.status and last.step < 400
    assert list(models) == ["my reverse model #1"]
    with zipfile.ZipFile(last.zip_path) as z:
        z.extractall(tmp_path)
    model, tokenizer, info = load_checkpoint(next(p for p in tmp_path.iterdir() if p.is_dir()), device="cpu")
    assert info["task"] == "reverse" and info["training"]["steps"] == last.step


def test_updates_are_throttled():
    """Fewer updates than steps: the page gets at most a few a second plus one per evaluation."""
    updates = list(run_training_session(request(steps=150), {}))
    assert len(updates) < 150 and "finished" in updates[-1].status


@pytest.mark.parametrize("kw, message", [
    (dict(heads=3), "divisible"),
    (dict(steps=LIMITS["steps"][1] + 1), "steps"),
    (dict(lr=0.5), "lr"),
    (dict(task="nope"), "unknown task"),
    (dict(source="text", text="too short"), "at least"),
    (dict(source="text"), "paste some text"),
])
def test_bad_requests_are_refused_with_the_field_named(kw, message):
    with pytest.raises(ValueError, match=message):
        next(run_training_session(request(**kw), {}))


def test_text_training_uses_pasted_text():
    text = "To be, or not to be, that is the question.\n" * 100
    updates = list(run_training_session(request(source="text", text=text, steps=30), {}))
    assert "finished" in updates[-1].status


def test_presets_respect_the_limits():
    for preset in PRESETS.values():
        request(layers=preset["layers"], heads=preset["heads"], d_model=preset["d_model"], lr=preset["lr"],
                steps=preset["steps"], batch_size=preset["batch_size"]).validated()
