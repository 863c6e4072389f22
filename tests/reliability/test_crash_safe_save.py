"""Crash-safe checkpoints (issue 7, item 8): a save killed with SIGKILL at any moment leaves a complete checkpoint,
the previous one or the new one and never a mix, that loads; the next resume or save puts it back in place and
removes the leftovers; `python -m transformer.train ... --resume` continues the run."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.reliability.forking import kill_at_call, run_forked
from transformer import checkpoint as ckpt_module
from transformer.checkpoint import load_checkpoint
from transformer.train.cli import main as cli_main
from transformer.config import TransformerConfig
from transformer.data import TASKS, TaskData
from transformer.model import Transformer
from transformer.tokenization import CharTokenizer
from transformer.train import TrainConfig, Trainer

ROOT = Path(__file__).resolve().parents[2]


def tiny_trainer(out_dir=None, resume=False) -> Trainer:
    """A 1+1-layer d_model-16 copy-task trainer with dropout (so its random state is part of a checkpoint)."""
    task = TASKS["copy"]
    tok = CharTokenizer(task.alphabet)
    cfg = TransformerConfig(vocab_size=tok.vocab_size, d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1,
                            d_ff=32, dropout=0.1, max_len=22)
    torch.manual_seed(0)
    train_cfg = TrainConfig(steps=4, batch_size=4, eval_every=100, eval_examples=4)
    return Trainer(Transformer(cfg), tok, TaskData(task, tok, cfg, 0, 4), train_cfg, out_dir=out_dir, resume=resume)


def weights(model) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def version_of(model, versions: dict[str, dict]) -> str | None:
    """Which saved version (by name) the model's weights are, bit for bit; None for anything else."""
    state = model.state_dict()
    return next((name for name, w in versions.items() if all(torch.equal(state[k], w[k]) for k in w)), None)


@pytest.fixture(scope="module")
def trainer_at_step_4(tmp_path_factory):
    """A trainer at step 4; `pristine` holds its step-2 checkpoint; `versions` maps "old" (step 2) and "new"
    (step 4) to their weights."""
    pristine = tmp_path_factory.mktemp("pristine")
    trainer = tiny_trainer()
    run = trainer.run()
    for event in run:
        if event.kind == "step" and event.step == 2:
            trainer.save(pristine / "ckpt")
            old = weights(trainer.model)
        if event.kind == "step" and event.step == 4:
            break
    run.close()
    return trainer, pristine, {"old": old, "new": weights(trainer.model)}


def test_a_save_killed_at_any_file_system_call_leaves_a_complete_checkpoint(trainer_at_step_4, tmp_path):
    """Invariant: for every k, a step-4 save over the step-2 checkpoint that is SIGKILLed at its k-th file-system
    call (open, write, fsync, rename, unlink, rmtree, ...) leaves a checkpoint that loads as one whole version:
    weights, config.json and trainer state all of step 2 or all of step 4. Resuming it, or saving again, puts it
    back at its path and leaves no temporary folder. Both versions occur, and so does the kill between the two
    renames (the path absent, only `.ckpt.old` left), where the old code had no checkpoint at all."""
    trainer, pristine, versions = trainer_at_step_4
    steps = {"old": 2, "new": 4}
    outcomes = []
    for k in range(1, 400):
        work = tmp_path / f"kill-{k}"
        shutil.copytree(pristine, work, symlinks=True)
        path = work / "ckpt"
        status = run_forked(lambda: kill_at_call(k, lambda: trainer.save(path)))
        if status == "finished":  # k is past the save's last call: every call has been a kill point
            break
        assert status == "killed", f"call {k}: the save failed instead of being killed"
        absent = not path.exists()
        model, _, info = load_checkpoint(path, device="cpu")
        version = version_of(model, versions)
        assert version is not None, f"call {k}: the loaded weights are neither the old nor the new checkpoint"
        directory = ckpt_module._old_copy(path) if absent else path
        assert info["training"]["steps"] == steps[version], f"call {k}: config.json of another version"
        assert json.loads((directory / "trainer_state.json").read_text())["step"] == steps[version], k

        again = tmp_path / f"again-{k}"
        shutil.copytree(work, again, symlinks=True)
        assert tiny_trainer(out_dir=path, resume=True).step == steps[version]
        assert os.listdir(work) == ["ckpt"], f"call {k}: resume left {os.listdir(work)}"
        trainer.save(again / "ckpt")
        assert os.listdir(again) == ["ckpt"], f"call {k}: the next save left {os.listdir(again)}"
        assert version_of(load_checkpoint(again / "ckpt", device="cpu")[0], versions) == "new"
        outcomes.append((version, absent))
    else:
        pytest.fail("the save never finished: the kill injection is broken")
    assert len(outcomes) >= 20, f"only {len(outcomes)} kill points: the injection missed the save's calls"
    assert {version for version, _ in outcomes} == {"old", "new"}
    assert ("old", True) in outcomes, "no kill landed between the two renames"


def test_cli_resume_after_a_kill_between_the_renames_continues_the_run(tmp_path):
    """Invariant: a `python -m transformer.train` run killed between the two renames of its step-4 save (the step-2
    checkpoint set aside as `.run.old`, the new one not yet in place) is continued by the same command with
    --resume: it resumes at step 2, ends at step 6 with no leftover folder, and its weights are bit for bit those
    of a run never interrupted. The old code had no checkpoint there, and --resume failed."""
    def args(out, steps, *extra):
        return ["--task", "copy", "--out", str(out), "--d-model", "16", "--n-heads", "2", "--n-encoder-layers", "1",
                "--n-decoder-layers", "1", "--d-ff", "32", "--dropout", "0.1", "--steps", str(steps),
                "--batch-size", "4", "--checkpoint-every", "2", "--eval-every", "100", "--eval-examples", "4",
                "--threads", "1", "--seed", "3", *extra]

    out = tmp_path / "run"
    old = tmp_path / ".run.old"
    real_rename = os.rename

    def rename_or_die(src, dst, *a, **k):
        if Path(dst) == out and old.exists():  # about to publish the step-4 checkpoint, the step-2 one set aside
            os.kill(os.getpid(), signal.SIGKILL)
        return real_rename(src, dst, *a, **k)

    def interrupted_run():
        os.rename = rename_or_die
        cli_main(args(out, 6))

    assert run_forked(interrupted_run, timeout=120) == "killed"
    assert not out.exists() and old.is_dir(), "precondition: killed between the two renames"
    done = subprocess.run([sys.executable, "-m", "transformer.train", *args(out, 6, "--resume")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(os.listdir(tmp_path)) == ["run", "run.log.jsonl"]
    model, _, info = load_checkpoint(out, device="cpu")
    assert info["training"]["steps"] == 6
    log = [json.loads(line) for line in (tmp_path / "run.log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log if r["kind"] == "step"] == [1, 2, 3, 4, 3, 4, 5, 6]

    cli_main(args(tmp_path / "straight" / "run", 6))
    straight, _, _ = load_checkpoint(tmp_path / "straight" / "run", device="cpu")
    for name, value in straight.state_dict().items():
        assert torch.equal(value, model.state_dict()[name]), name
