"""The Trainer (that it learns: tests/integration/test_reverse_end_to_end.py, on the shared reverse run): resume ==
uninterrupted, NaN stops it safely, saves are atomic, closing stops it."""
from __future__ import annotations

import json
import math
import os

import pytest
import torch
import torch.nn.functional as F

from transformer import checkpoint as ckpt_module
from transformer.checkpoint import load_checkpoint
from transformer.config import TransformerConfig
from transformer.data import TASKS, TaskData, TextData
from transformer.model import Transformer
from transformer.tokenization import CharTokenizer
from transformer.train import EvalEvent, StepEvent, TrainConfig, Trainer, TrainingError, learning_rate

# --- the schedule ---------------------------------------------------------------------------------------------


def test_noam_schedule_is_equation_3():
    """Oracle: lrate = d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5) (equation 3), by hand for the
    paper's d_model=512, warmup 4000: it rises linearly, peaks at step 4000 at 512^-0.5 * 4000^-0.5, then decays
    as step^-0.5; cfg.lr multiplies it."""
    cfg = TrainConfig(schedule="noam", warmup=4000, lr=1.0)
    assert learning_rate(1, cfg, 512) == pytest.approx(512 ** -0.5 * 4000 ** -1.5)
    assert learning_rate(4000, cfg, 512) == pytest.approx(512 ** -0.5 * 4000 ** -0.5)
    assert learning_rate(4000, cfg, 512) == pytest.approx(6.987712429686844e-4)
    assert learning_rate(16000, cfg, 512) == pytest.approx(512 ** -0.5 * 16000 ** -0.5)
    assert learning_rate(2000, cfg, 512) == pytest.approx(learning_rate(4000, cfg, 512) / 2)
    assert max(range(1, 10000, 7), key=lambda s: learning_rate(s, cfg, 512)) in range(3994, 4007)
    assert learning_rate(100, TrainConfig(schedule="noam", warmup=4000, lr=2.0), 512) == pytest.approx(
        2 * learning_rate(100, cfg, 512))


def test_cosine_and_constant_schedules():
    """Oracle: cosine warms up linearly to lr, is lr * (0.1 + 0.45 (1 + cos(pi p))) after warm-up, so it is 0.55 lr
    half way and lr / 10 at the last step; constant is lr throughout."""
    cfg = TrainConfig(schedule="cosine", lr=0.01, warmup=100, steps=1100)
    assert learning_rate(50, cfg, 64) == pytest.approx(0.005)
    assert learning_rate(100, cfg, 64) == pytest.approx(0.01)
    assert learning_rate(600, cfg, 64) == pytest.approx(0.0055)
    assert learning_rate(1100, cfg, 64) == pytest.approx(0.001)
    assert learning_rate(350, cfg, 64) == pytest.approx(0.01 * (0.1 + 0.45 * (1 + math.cos(math.pi / 4))))
    assert {learning_rate(s, TrainConfig(schedule="constant", lr=3e-4), 64) for s in (1, 10, 10_000)} == {3e-4}


@pytest.mark.parametrize("kwargs, field", [
    (dict(steps=0), "steps"), (dict(batch_size=-1), "batch_size"), (dict(schedule="linear"), "schedule"),
    (dict(lr=0.0), "lr"), (dict(lr=float("inf")), "lr"), (dict(label_smoothing=1.0), "label_smoothing"),
    (dict(eval_every=0), "eval_every"), (dict(warmup=-1), "warmup"), (dict(checkpoint_every=-5), "checkpoint_every"),
])
def test_train_config_validation_names_the_field(kwargs, field):
    """Invariant: a bad training setting is a ValueError that names it."""
    with pytest.raises(ValueError, match=field):
        TrainConfig(**kwargs)


# --- small runs for the mechanics ------------------------------------------------------------------------------

TEXT = "".join(f"line {i}: the {'cat' if i % 3 else 'dog'} sat on mat {i % 7}.\n" for i in range(80))


def setup(kind: str, init_seed: int = 0):
    """A tiny model with dropout 0.1 (so resuming must restore the random state too) and its data."""
    if kind == "task":
        task = TASKS["reverse"]
        tok = CharTokenizer(task.alphabet)
        cfg = TransformerConfig(vocab_size=tok.vocab_size, d_model=32, n_heads=4, n_encoder_layers=1,
                                n_decoder_layers=1, d_ff=64, dropout=0.1, max_len=22)
        data = TaskData(task, tok, cfg, seed=0, n_val=16)
    else:
        tok = CharTokenizer.from_text(TEXT)
        cfg = TransformerConfig(arch="decoder-only", vocab_size=tok.vocab_size, d_model=32, n_heads=4,
                                n_decoder_layers=2, d_ff=64, dropout=0.1, max_len=16)
        cut = int(len(TEXT) * 0.9)
        data = TextData(TEXT[:cut], TEXT[cut:], tok, block_size=16, seed=0, n_val=8)
    torch.manual_seed(init_seed)
    return Transformer(cfg), tok, data


def train_cfg(**kw) -> TrainConfig:
    base = dict(steps=12, batch_size=8, schedule="noam", lr=1.0, warmup=4, eval_every=4, eval_examples=16,
                block_size=16)
    return TrainConfig(**{**base, **kw})


def losses(events) -> dict[int, float]:
    return {e.step: e.loss for e in events if isinstance(e, StepEvent)}


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["task", "text"])
def test_resume_reproduces_the_uninterrupted_loss_curve(tmp_path, kind):
    """Invariant: resume == uninterrupted. A run checkpointed at step 6 and killed at step 8, then resumed by a new
    Trainer (resume=True, a model initialised differently) produces the losses of steps 7-12 and the final
    weights of a run that was never interrupted (optimiser, data and dropout random states all restored)."""
    model, tok, data = setup(kind)
    reference = Trainer(model, tok, data, train_cfg())
    ref_events = list(reference.run())
    ref_losses = losses(ref_events)

    model, tok, data = setup(kind)
    first = Trainer(model, tok, data, train_cfg(checkpoint_every=6), out_dir=tmp_path / "run")
    run = first.run()
    for event in run:
        if isinstance(event, StepEvent) and event.step == 8:
            break
    run.close()  # the process "dies" two steps after its last checkpoint
    assert json.loads((tmp_path / "run" / "trainer_state.json").read_text())["step"] == 6

    model, tok, data = setup(kind, init_seed=123)
    resumed = Trainer(model, tok, data, train_cfg(checkpoint_every=6), out_dir=tmp_path / "run", resume=True)
    assert resumed.step == 6
    resumed_events = list(resumed.run())
    resumed_losses = losses(resumed_events)
    assert sorted(resumed_losses) == list(range(7, 13))
    for step, loss in resumed_losses.items():
        assert loss == pytest.approx(ref_losses[step], abs=1e-6), step
    assert ref_losses[7] != ref_losses[12]  # the curve moves: the comparison is not trivial
    ref_evals = {e.step: e.val_loss for e in ref_events if isinstance(e, EvalEvent)}
    for e in resumed_events:
        if isinstance(e, EvalEvent):
            assert e.val_loss == pytest.approx(ref_evals[e.step], abs=1e-6)
    for (name, a), (_, b) in zip(reference.model.state_dict().items(), resumed.model.state_dict().items()):
        torch.testing.assert_close(a, b, atol=1e-6, rtol=0, msg=name)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_a_non_finite_loss_raises_training_error_and_the_checkpoint_survives(tmp_path, monkeypatch, bad):
    """Invariant: when the loss becomes NaN (or inf) at step 5, training stops with a TrainingError saying so, where
    and where the last good checkpoint (step 3) is; that checkpoint loads and holds the step-3 weights, and the bad
    step changed no weight."""
    model, tok, data = setup("task")
    trainer = Trainer(model, tok, data, train_cfg(checkpoint_every=3, eval_every=100), out_dir=tmp_path / "run")
    real_loss = Trainer._loss

    def poisoned(self, inputs, targets):
        loss = real_loss(self, inputs, targets)
        return loss * bad if self.step == 4 else loss  # computing step 5

    monkeypatch.setattr(Trainer, "_loss", poisoned)
    snapshots = {}
    with pytest.raises(TrainingError) as error:
        for event in trainer.run():
            snapshots[event.step] = {k: v.clone() for k, v in model.state_dict().items()}
    message = str(error.value)
    assert f"the loss became {bad} at step 5" in message
    assert "step 3" in message and str(tmp_path / "run") in message
    loaded, _, info = load_checkpoint(tmp_path / "run", device="cpu")
    assert info["training"]["steps"] == 3
    for name, value in loaded.state_dict().items():
        assert torch.equal(value, snapshots[3][name]), name
        assert torch.equal(model.state_dict()[name], snapshots[4][name]), name


@pytest.mark.slow
def test_non_finite_loss_without_a_checkpoint_says_so(monkeypatch):
    """Invariant: with no checkpoint written yet, the TrainingError says that no checkpoint was written."""
    model, tok, data = setup("task")
    monkeypatch.setattr(Trainer, "_loss", lambda self, i, t: torch.tensor(float("nan")))
    with pytest.raises(TrainingError, match="loss became nan at step 1.*no checkpoint was written"):
        list(Trainer(model, tok, data, train_cfg()).run())


@pytest.mark.parametrize("fail_in", ["save_model", "tokenizer.save", "KeyboardInterrupt"])
def test_an_interrupted_save_leaves_the_previous_checkpoint(tmp_path, monkeypatch, fail_in):
    """Invariant (atomic checkpoints): if the step-6 save dies mid-write (weights half written, the tokenizer
    failing, or Ctrl-C), the step-3 checkpoint still loads with its own weights and trainer state, the run can
    resume from it, and no temporary directory is left next to it."""
    model, tok, data = setup("task")
    out = tmp_path / "run"
    trainer = Trainer(model, tok, data, train_cfg(steps=6, checkpoint_every=3, eval_every=100), out_dir=out)
    real_save_model = ckpt_module.save_model
    calls = []
    error = KeyboardInterrupt if fail_in == "KeyboardInterrupt" else OSError

    def flaky_save_model(m, filename, *a, **k):
        calls.append(filename)
        real_save_model(m, filename, *a, **k)
        if len(calls) == 2:
            with open(filename, "r+b") as f:
                f.truncate(64)
            raise error("disk full")

    if fail_in == "tokenizer.save":
        real_tok_save = type(tok).save

        def flaky_tok_save(self, path):
            calls.append(path)
            if len(calls) == 2:
                raise OSError("disk full")
            real_tok_save(self, path)

        monkeypatch.setattr(type(tok), "save", flaky_tok_save)
    else:
        monkeypatch.setattr(ckpt_module, "save_model", flaky_save_model)
    snapshots = {}
    with pytest.raises(error):
        for event in trainer.run():
            snapshots[event.step] = {k: v.clone() for k, v in model.state_dict().items()}
    monkeypatch.undo()
    assert len(calls) == 2
    assert os.listdir(tmp_path) == ["run"]
    loaded, _, info = load_checkpoint(out, device="cpu")
    assert info["training"]["steps"] == 3
    assert json.loads((out / "trainer_state.json").read_text())["step"] == 3
    for name, value in loaded.state_dict().items():
        assert torch.equal(value, snapshots[3][name]), name
    model2, tok2, data2 = setup("task")
    assert Trainer(model2, tok2, data2, train_cfg(steps=6), out_dir=out, resume=True).step == 3


def test_closing_the_run_generator_stops_training(tmp_path):
    """Invariant: when the consumer stops iterating (closes the generator, as the app's Stop button does), no
    further step runs: the step count and the weights stay where they were and no final checkpoint is written."""
    model, tok, data = setup("task")
    trainer = Trainer(model, tok, data, train_cfg(steps=50), out_dir=tmp_path / "run")
    run = trainer.run()
    seen = [next(run) for _ in range(3)]
    assert [e.step for e in seen] == [1, 2, 3]
    weights = {k: v.clone() for k, v in model.state_dict().items()}
    run.close()
    with pytest.raises(StopIteration):
        next(run)
    assert trainer.step == 3
    assert all(torch.equal(v, weights[k]) for k, v in model.state_dict().items())
    assert not (tmp_path / "run").exists()


def test_max_seconds_stops_after_the_limit_with_a_final_eval_and_checkpoint(tmp_path):
    """Invariant: once max_seconds have passed, the run ends at that step with an evaluation and a checkpoint."""
    model, tok, data = setup("task")
    trainer = Trainer(model, tok, data, train_cfg(steps=100, max_seconds=1e-9), out_dir=tmp_path / "run")
    events = list(trainer.run())
    assert [(e.kind, e.step) for e in events] == [("step", 1), ("eval", 1)]
    assert load_checkpoint(tmp_path / "run", device="cpu")[2]["training"]["steps"] == 1


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_training_loss_ignores_padding_and_smooths_labels(smoothing):
    """Oracle: the mean over real (non-pad) target tokens of (1 - eps) * -log p(y) + eps * mean_c(-log p(c))
    (label smoothing, section 5.4), computed by hand from the model's logits."""
    model, tok, data = setup("task")
    model.eval()  # dropout off so two forward passes agree
    trainer = Trainer(model, tok, data, train_cfg(label_smoothing=smoothing))
    (src, tgt_in), tgt_out = data.train_batch(6)
    assert (tgt_out == 0).any(), "precondition: the batch has padding"
    with torch.no_grad():
        loss = trainer._loss((src, tgt_in), tgt_out)
        logp = model(src, tgt_in).logits.log_softmax(-1)
    real = tgt_out != 0
    nll = -logp.gather(-1, tgt_out[..., None])[..., 0]
    by_hand = ((1 - smoothing) * nll - smoothing * logp.mean(-1))[real].mean()
    assert float(loss) == pytest.approx(float(by_hand), rel=1e-5)
    assert float(F.cross_entropy(logp[real], tgt_out[real])) == pytest.approx(float(nll[real].mean()), rel=1e-5)


def test_resume_needs_a_checkpoint(tmp_path):
    """Invariant: resume=True without an out_dir is a ValueError; with an empty out_dir it is a CheckpointError."""
    from transformer.checkpoint import CheckpointError

    model, tok, data = setup("task")
    with pytest.raises(ValueError, match="out_dir"):
        Trainer(model, tok, data, train_cfg(), resume=True)
    with pytest.raises(CheckpointError):
        Trainer(model, tok, data, train_cfg(), out_dir=tmp_path / "nothing", resume=True)


def test_bf16_is_on_by_default_only_where_it_pays():
    """bench/bf16_training.py: bf16 autocast slowed d_model 64-128 training and doubled d_model 256 on a bf16 CPU;
    the default follows that measurement, and an explicit setting always wins."""
    import torch

    from transformer.train import bf16_pays

    cpu = torch.device("cpu")
    assert not bf16_pays(64, cpu) and not bf16_pays(128, cpu)
    assert bf16_pays(256, cpu) == torch.ops.mkldnn._is_mkldnn_bf16_supported()


def test_beta2_reaches_adamw_and_the_default_is_the_papers():
    """Oracle: section 5.3's AdamW betas (0.9, 0.98) and eps 1e-9 by default; TrainConfig.beta2 replaces the second
    (nanoGPT's char models use 0.99); a beta2 outside (0, 1) is a ValueError naming it."""
    tok = CharTokenizer("abc")
    model = Transformer(TransformerConfig(arch="decoder-only", vocab_size=tok.vocab_size, d_model=16, n_heads=2,
                                          n_decoder_layers=1, d_ff=32, max_len=8))
    data = TextData("abcabcabc" * 20, "cabcab" * 10, tok, block_size=8, seed=0, n_val=4)
    groups = Trainer(model, tok, data, TrainConfig()).optimizer.param_groups
    assert {(g["betas"], g["eps"]) for g in groups} == {((0.9, 0.98), 1e-9)}
    groups = Trainer(model, tok, data, TrainConfig(beta2=0.99)).optimizer.param_groups
    assert {g["betas"] for g in groups} == {(0.9, 0.99)}
    for bad in (1.0, 0.0, -0.5):
        with pytest.raises(ValueError, match=r"^beta2\b"):
            TrainConfig(beta2=bad)
