"""What the sessions' held inputs and the figure exports in progress cost the server's memory (issue 37, item 4).

    nice -n 10 python bench/held_memory.py                       # the app's limits
    nice -n 10 python bench/held_memory.py --unbounded           # as before: no held-input budget, 64 exports wait

Starts `python app.py` on 127.0.0.1 (a process of its own, so this client's copies of the figures are not counted)
and sends, as the page does (a queue join, then the session's stream):
1. 60 sessions, 4 at a time, each saving one figure of the largest size a request may carry as HTML (a plotly
   heatmap of ~12.5 MiB of JSON; bodies are cut at 16 MiB): each session then holds that figure in gradio's copy of
   its page (server.held_inputs bounds those in total);
2. 32 such exports at once, one per page (the export line runs 2 and lets 8 wait: limits.QUEUE_WAITING).
For each phase, prints the server's peak resident size (VmHWM, reset before the phase) and what it still holds 35 s
after (the app returns freed memory every 30 s), both above its size before the phase, and the calls answered /
refused.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from store.sessions import KEY_COOKIE  # noqa: E402
from tests.app_server import join_and_wait  # noqa: E402


def status_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def figure(mib: float) -> dict:
    """A plotly heatmap of about `mib` MiB of JSON, as the page sends a gr.Plot's value."""
    side = int((mib * (1 << 20) / 19) ** 0.5)
    z = [[round((i * 131 + j * 7) % 1000 / 997, 12) for j in range(side)] for i in range(side)]
    return {"type": "plotly", "plot": json.dumps({"data": [{"type": "heatmap", "z": z}], "layout": {}})}


def start_app(port: int, unbounded: bool) -> subprocess.Popen:
    env = {**os.environ, "GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_SERVER_PORT": str(port)}
    code = "import app; app.launch()" if not unbounded else (
        "import limits; limits.QUEUE_WAITING[limits.EXPORT_FIGURE_GROUP] = 64; "
        "limits.HELD_INPUTS['bytes'] = 1 << 50; import app; app.launch()")
    return subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def phase(name: str, pid: int, calls, workers: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # the peak (VmHWM) from now
    before = status_mb(pid, "VmRSS")
    with ThreadPoolExecutor(workers) as pool:
        answers = list(pool.map(lambda call: call(), calls))
    peak = status_mb(pid, "VmHWM")
    time.sleep(35)
    held = status_mb(pid, "VmRSS")
    done = sum(bool(a.get("success")) for a in answers)
    print(f"{name}: {done} saved, {len(answers) - done} refused or failed; server peak {peak - before:+.0f} MB, "
          f"held 35 s after {held - before:+.0f} MB (resident before {before:.0f} MB)", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--unbounded", action="store_true")
    parser.add_argument("--mib", type=float, default=12.5)
    args = parser.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = start_app(port, args.unbounded)
    url = f"http://127.0.0.1:{port}/"
    try:
        for _ in range(600):
            try:
                config = httpx.get(url + "config", timeout=10).json()
                break
            except (httpx.HTTPError, ValueError):
                time.sleep(1)
        export = next(d["id"] for d in config["dependencies"]
                      if d.get("api_name") == "html_file")  # the first figure's HTML export
        data = [figure(args.mib)]
        print(f"{'unbounded' if args.unbounded else 'limits'}: figure {len(json.dumps(data)) / (1 << 20):.1f} MiB",
              flush=True)
        phase("60 sessions, one figure each", server.pid,
              [lambda: join_and_wait(url, export, data, uuid.uuid4().hex[:12], timeout=600) for _ in range(60)], 4)
        # one session (and browser key) per call: a session's calls share one stream of messages, which
        # join_and_wait reads for one call only (4 calls of one session hung there), and one browser's same figure is
        # one file (store.exports reuse), not 4 exports
        phase("32 exports at once (32 pages)", server.pid,
              [lambda: join_and_wait(url, export, data, uuid.uuid4().hex[:12], {KEY_COOKIE: uuid.uuid4().hex},
                                     timeout=600) for _ in range(32)], 32)
    finally:
        server.terminate()
        server.wait(30)


if __name__ == "__main__":
    threading.excepthook = lambda args: None
    main()
