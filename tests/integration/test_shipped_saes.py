"""The shipped SAEs' cards are recomputable (issue 42, item 3): `python -m transformer.interpretability.features
<checkpoint> --check` recomputes every metric of the card and agrees; a card that says otherwise, or a corrupt SAE
file, makes it fail in words."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

from tests.conftest import CHECKPOINTS
from transformer.interpretability.feature_cli import main

ROOT = CHECKPOINTS.parent


def test_check_recomputes_the_induction_card():
    """The command itself, in a process, as CI and a reader run it: every metric as the card says, exit 0."""
    done = subprocess.run([sys.executable, "-m", "transformer.interpretability.features", "checkpoints/induction",
                           "--check"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "16 of 16 metrics as the card says" in done.stdout
    assert "decoder self layer 1 loss_spliced" in done.stdout


def test_check_fails_on_a_wrong_card_and_a_corrupt_file(tmp_path, capsys):
    copy = tmp_path / "induction"
    shutil.copytree(CHECKPOINTS / "induction", copy)
    info = json.loads((copy / "config.json").read_text())
    info["features"][1]["metrics"]["explained_variance"] += 0.05
    (copy / "config.json").write_text(json.dumps(info))
    assert main([str(copy), "--check"]) == 1
    assert "DIFFERS" in capsys.readouterr().out
    file = copy / "sae-decoder-self-0.safetensors"
    file.write_bytes(file.read_bytes()[:-4])
    assert main([str(copy), "--check"]) == 2
    assert "sae-decoder-self-0.safetensors is not a valid SAE" in capsys.readouterr().err
