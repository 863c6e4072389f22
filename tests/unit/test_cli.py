"""The command line: `python -m transformer.train` runs the CLI without loading the library twice, and its JSONL log
keeps every step record even when the run is killed."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.reliability.forking import run_forked
from transformer.train.cli import main as cli_main
from transformer.train import Trainer

ROOT = Path(__file__).resolve().parents[2]

COUNT_CLASS_BODIES = """
import builtins, runpy, sys
real, bodies = builtins.__build_class__, []
def counting(func, name, *args, **kwargs):
    if func.__code__.co_filename.endswith("trainer.py"):
        bodies.append(name)
    return real(func, name, *args, **kwargs)
builtins.__build_class__ = counting
sys.argv = ["python -m transformer.train", "--help"]
try:
    runpy.run_module("transformer.train", run_name="__main__", alter_sys=True)  # what `python -m` does
except SystemExit as e:
    code = e.code
print(repr((code, bodies.count("Trainer"))))
"""


@pytest.mark.slow
def test_python_m_transformer_train_runs_the_cli_and_defines_the_trainer_once():
    """Invariant: `python -m transformer.train --help` prints the CLI's usage and exits 0, and the Trainer class is
    defined once: the package's __main__.py hands over to the CLI, which imports the library once (until the
    package, train.py defined everything and then imported cli, which imported train.py a second time)."""
    done = subprocess.run([sys.executable, "-c", COUNT_CLASS_BODIES], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "usage: python -m transformer.train" in done.stdout, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "(0, 1)"


def test_the_log_keeps_every_step_record_when_the_run_is_killed_before_any_evaluation(tmp_path):
    """Invariant: each JSONL record reaches the file when it is written. A run SIGKILLed while computing step 6,
    before its first evaluation (eval_every 100), leaves the records of steps 1-5 in its log. Before the fix the
    log was flushed only at evaluations, and the kill lost them all."""
    log = tmp_path / "run.log.jsonl"
    real_loss = Trainer._loss

    def killed_at_step_6(self, inputs, targets):
        if self.step == 5:
            os.kill(os.getpid(), signal.SIGKILL)
        return real_loss(self, inputs, targets)

    def run():
        Trainer._loss = killed_at_step_6
        cli_main(["--task", "copy", "--out", str(tmp_path / "run"), "--log", str(log), "--d-model", "16",
                  "--n-heads", "2", "--n-encoder-layers", "1", "--n-decoder-layers", "1", "--d-ff", "32",
                  "--steps", "50", "--batch-size", "4", "--eval-every", "100", "--threads", "1"])

    assert run_forked(run, timeout=120) == "killed"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["kind"], r["step"]) for r in records] == [("step", s) for s in range(1, 6)]
