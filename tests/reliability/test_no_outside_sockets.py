"""The app opens no socket outside the machine: not at start (gradio's analytics and version check), not while
every tab is used, and not for a refused Hub dataset value or a file "upload" that names a URL. Regressions: at
startup the app looked up two outside hosts; a Train-tab call whose Hub field held a file path looked up a cloud
storage host; an upload whose FileData path was a URL (or a GET of /file=<URL>) made the server resolve an
attacker-chosen host, 169.254.169.254 and a DNS-over-HTTPS host (issue 18, item 6)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_starting_the_app_and_using_every_tab_opens_no_outside_socket():
    env = {k: v for k, v in os.environ.items()
           if k not in ("GRADIO_ANALYTICS_ENABLED", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY")}
    env["PYTHONPATH"] = str(ROOT)
    result = subprocess.run([sys.executable, "-m", "tests.reliability.outside_socket_probe"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)
    lines = [line for line in result.stdout.splitlines() if line.startswith("OUTSIDE=")]
    assert result.returncode == 0 and lines, result.stderr[-3000:]
    outside = json.loads(lines[-1][len("OUTSIDE="):])
    assert outside == [], f"sockets to outside hosts: {outside}"
