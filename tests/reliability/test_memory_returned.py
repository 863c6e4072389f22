"""Memory is returned: after a large training ends, the app's resident size is back within 300 MB of where it
started, although the app asks glibc to keep freed memory (app.keep_freed_memory, for faster attention captures).

Regression (issue 18, item 7): under load the resident size grew from 0.46 to 5.6 GB and was never returned."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_resident_memory_falls_back_after_a_training():
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GRADIO_ANALYTICS_ENABLED": "False"}
    out = subprocess.run([sys.executable, "-m", "tests.reliability.memory_probe"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=900)  # minutes on a busy machine
    line = [x for x in out.stdout.splitlines() if x.startswith("MEMORY=")]
    assert out.returncode == 0 and line, out.stderr[-3000:]
    mb = json.loads(line[-1][len("MEMORY="):])
    print(mb)
    assert mb["peak"] - mb["start"] > 300, f"the training was too small to show anything: {mb}"
    assert mb["end"] - mb["start"] <= 300, f"resident memory stayed {mb['end'] - mb['start']:.0f} MB up: {mb}"
