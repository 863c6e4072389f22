"""The Train tab's session logic without a browser: validation, streaming, stop, the per-browser model store, and the
exported checkpoint."""
import zipfile

import pytest
import torch

from limits import TRAINING
from store.user_models import UserModels
from tabs.train.request import PRESETS, TrainingRequest, read_upload
from tabs.train.session import export_checkpoint, run_training_session
from transformer import load_checkpoint


def request(**kw):
    base = dict(source="task", task="reverse", text=None, upload=None, hub=None, layers=1, heads=4, d_model=64,
                lr=3e-3, steps=400, batch_size=32)
    return TrainingRequest(**{**base, **kw})


def test_stop_ends_training_and_the_model_joins_the_store(tmp_path):
    """Setting the control event stops after the current step; the model is kept, for inference only (eval mode,
    no gradients), and exports as a checkpoint zip that loads."""
    store = UserModels()
    updates = run_training_session(request(), store, "browser-a")
    first = next(updates)
    second = next(updates)
    assert second.step >= 1, "the first update after Start already has a loss point"
    first.control.set()
    last = list(updates)[-1]
    assert "stopped" in last.status and last.step < 400 and last.done
    assert store.names("browser-a") == ["my reverse model #1"] == [last.name]
    model, tok, info = store.get("browser-a", last.name)
    assert not model.training and all(p.grad is None and not p.requires_grad for p in model.parameters())
    archive = export_checkpoint(model, tok, info, last.name, tmp_path)
    with zipfile.ZipFile(archive) as z:
        z.extractall(tmp_path / "unzipped")
    loaded, _, loaded_info = load_checkpoint(next((tmp_path / "unzipped").iterdir()), device="cpu")
    assert loaded_info["task"] == "reverse" and loaded_info["training"]["steps"] == last.step
    assert torch.equal(loaded.embed.weight, model.embed.weight)


def test_two_runs_get_two_names_reserved_at_start():
    """Regression: two trainings of one browser got the same name and one model was lost. The name is reserved
    when a run starts, so a run that starts while another is going gets the next number."""
    store = UserModels()
    a = run_training_session(request(steps=20), store, "k")
    b = run_training_session(request(steps=20), store, "k")
    name_a, name_b = next(a).name, next(b).name
    assert (name_a, name_b) == ("my reverse model #1", "my reverse model #2")
    list(b), list(a)
    assert sorted(store.names("k")) == ["my reverse model #1", "my reverse model #2"]


def test_numbering_counts_per_task_and_the_store_keeps_the_last_three():
    """Each task has its own numbering, and a browser keeps only its last `per_browser` models (a bound on
    memory); other browsers are untouched."""
    store = UserModels(per_browser=3)
    for task in ("reverse", "copy", "reverse", "sort"):
        list(run_training_session(request(task=task, steps=10), store, "k"))
    list(run_training_session(request(steps=10), store, "other"))
    assert store.names("k") == ["my copy model #1", "my reverse model #2", "my sort model #1"]
    assert store.names("other") == ["my reverse model #1"]


def test_store_is_bounded_in_models_and_the_first_browser_keeps_its_model():
    """The store is bounded in models of every browser together; among clients holding as many, the model used
    (trained or opened) longest ago goes (issue 30: eviction by use, so a flood's untouched models go first,
    whenever it came), and never the model just put. Here the first browser opens its model, so the second loses
    its own; then, nobody opening anything, the first's (now used longest ago) goes."""
    store = UserModels(per_browser=1, max_models=2)
    model = torch.nn.Linear(2, 2)
    for key in ("a", "b"):
        store.put(key, store.reserve(key, "copy"), model, None, {})
    assert store.get("a", "my copy model #1") is not None  # opened: used after b's model was trained
    store.put("c", store.reserve("c", "copy"), model, None, {})
    assert store.names("a") == ["my copy model #1"] and store.names("b") == [] and len(store) == 2
    assert store.names("c") == ["my copy model #1"] and "no longer kept" in store.why_gone("b", "my copy model #1")
    store.put("d", store.reserve("d", "copy"), model, None, {})
    assert store.names("a") == [] and store.names("c") == store.names("d") == ["my copy model #1"]


def test_a_refused_request_reserves_no_name():
    store = UserModels()
    with pytest.raises(ValueError):
        next(run_training_session(request(heads=3), store, "k"))
    assert store.names("k") == [] and store.reserve("k", "reverse") == "my reverse model #1"


def test_updates_are_throttled():
    """Fewer updates than steps: the page gets at most a few a second plus one per evaluation."""
    updates = list(run_training_session(request(steps=150), UserModels(), "k"))
    assert len(updates) < 150 and "finished" in updates[-1].status


@pytest.mark.parametrize("kw, message", [
    (dict(heads=3), "divisible"),
    (dict(steps=TRAINING["steps"][1] + 1), "steps"),
    (dict(lr=0.5), "lr"),
    (dict(lr=float("nan")), "lr"),
    (dict(steps=1e30), "steps"),
    (dict(layers=None), "layers"),
    (dict(layers="2"), "layers"),
    (dict(steps=10.5), "steps must be a whole number"),
    (dict(task="nope"), "unknown task"),
    (dict(task=["reverse"]), "unknown task"),
    (dict(source="text", text="too short"), "at least"),
    (dict(source="text"), "paste some text"),
    (dict(source="text", hub="app.py"), "not a Hub dataset name"),
    (dict(source="text", hub="/etc/passwd"), "must be a name like"),
    (dict(source="text", hub="x" * 10_000), "must be a name like"),
])
def test_bad_requests_are_refused_with_the_field_named(kw, message):
    with pytest.raises(ValueError, match=message):
        next(run_training_session(request(**kw), UserModels(), "k"))


def test_text_training_uses_pasted_text():
    text = "To be, or not to be, that is the question.\n" * 100
    updates = list(run_training_session(request(source="text", text=text, steps=30), UserModels(), "k"))
    assert "finished" in updates[-1].status


def test_an_upload_cut_inside_a_character_is_read_not_refused(tmp_path):
    """Regression: a valid UTF-8 upload over the limit was refused because the byte cut split a character."""
    path = tmp_path / "big.txt"
    path.write_text("é" * 1000, encoding="utf-8")  # 2 bytes each: a 4 * 251 = 1004-byte cut lands mid-character
    assert read_upload(str(path), 251) == "é" * 251
    assert read_upload(str(path), 300) == "é" * 300
    path.write_bytes(b"\xff\xfe bad")
    with pytest.raises(ValueError, match="UTF-8"):
        read_upload(str(path), 100)


def test_presets_respect_the_limits():
    for preset in PRESETS.values():
        request(layers=preset["layers"], heads=preset["heads"], d_model=preset["d_model"], lr=preset["lr"],
                steps=preset["steps"], batch_size=preset["batch_size"]).validated()


@pytest.mark.parametrize("attention, positions", [("mla", "alibi"), ("mha", "rope"), ("mla", "rope")])
def test_a_model_trained_with_other_attention_or_positions_is_that_model_and_shows_its_heads(attention, positions):
    """The Train tab's Attention and Positions choices reach the model: the stored model has them in its config,
    its attention record has every head's weights (rows summing to 1), and it decodes cached as uncached."""
    from transformer.generate import generate
    from transformer.interpretability.probe import record_attention

    store = UserModels()
    last = list(run_training_session(request(steps=20, attention=attention, positions=positions), store, "k"))[-1]
    model, tok, _ = store.get("k", last.name)
    assert (model.config.attention, model.config.pos_encoding) == (attention, positions)
    record = record_attention(model, tok, "attention")
    for pattern in record.patterns.values():
        rows = pattern.weights.sum(-1)
        torch.testing.assert_close(rows, torch.ones_like(rows))
    source = tok.encode("abc") + [model.config.eos_id]
    cached, uncached = ([s.token_id for s in generate(model, source, 8, use_cache=c)] for c in (True, False))
    assert cached == uncached


@pytest.mark.parametrize("kw, message", [
    (dict(positions="rope", d_model=36, heads=4), "even"),
    (dict(attention="gqa"), "attention must be one of"),
    (dict(positions="rotary"), "positions must be one of"),
])
def test_impossible_attention_or_positions_are_refused_before_training(kw, message):
    with pytest.raises(ValueError, match=message):
        request(**kw).validated()
