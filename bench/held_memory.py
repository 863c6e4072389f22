"""What the sessions' held inputs and the figure exports in progress cost the server's memory (issue 37, item 4).

    nice -n 10 python bench/held_memory.py                       # the app's limits
    nice -n 10 python bench/held_memory.py --unbounded           # as before: no held-input budget, 64 exports wait,
                                                                 # no budget of bodies read at once
    nice -n 10 python bench/held_memory.py --probe               # and what the app holds (bench/memory_probe.py)

Starts `python app.py` on 127.0.0.1 (a process of its own, so this client's copies of the figures are not counted)
and sends, as the page does (a queue join, then the session's stream):
0. one export alone (what one largest HTML export costs at its peak: its request, its figure parsed, its page);
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

from bench.memory_probe import ask, rss_mb  # noqa: E402
from store.sessions import KEY_COOKIE  # noqa: E402
from tests.app_server import join_and_wait  # noqa: E402


def figure(mib: float) -> dict:
    """A plotly heatmap of about `mib` MiB of JSON, as the page sends a gr.Plot's value."""
    side = int((mib * (1 << 20) / 15.8) ** 0.5)  # ~15.8 bytes a number
    z = [[round((i * 131 + j * 7) % 1000 / 997, 12) for j in range(side)] for i in range(side)]
    return {"type": "plotly", "plot": json.dumps({"data": [{"type": "heatmap", "z": z}], "layout": {}})}


def start_app(port: int, unbounded: bool, probe: str | None, trace: bool) -> subprocess.Popen:
    env = {**os.environ, "GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_SERVER_PORT": str(port)}
    code = "" if not unbounded else (
        "import limits; limits.QUEUE_WAITING[limits.EXPORT_FIGURE_GROUP] = 64; limits.HELD_INPUTS['bytes'] = 1 << 50; "
        "limits.BODIES_READ['bytes'] = 1 << 50; ")
    code += (f"import sys; sys.path.insert(0, 'bench'); import memory_probe; memory_probe.serve({probe!r}, {trace})"
             if probe else "import app; app.launch()")
    return subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def show(name: str, report: dict) -> None:
    """One line of the app's own report (bench/memory_probe.py), and tracemalloc's largest holders if traced."""
    if "failed" in report:
        print(f"  [{name}] the report failed: {report['failed']}", flush=True)
    glibc, small, held = report.get("glibc", {}), report.get("pymalloc", {}), report.get("gradio", {})
    line = (f"  [{name}] RSS {report.get('rss', 0):.0f} MB; glibc in use {glibc.get('in_use', 0):.0f}, free kept "
            f"{glibc.get('free_kept', 0):.0f} (top {glibc.get('top_free', 0):.0f}), mmapped {glibc.get('mmapped', 0):.0f}; "
            f"pymalloc arenas {small.get('arenas', 0)} ({small.get('total_bytes', 0) / 2**20:.0f} MB, "
            f"{small.get('allocated_bytes', 0) / 2**20:.0f} in blocks); sessions {held.get('sessions')}, their values "
            f"{held.get('held_values_mb', 0):.1f} MB, unread messages {held.get('unread_messages')}, "
            f"events {held.get('events')}")
    if "rss_after_trim" in report:
        line += (f"; after gc + malloc_trim: RSS {report['rss_after_trim']:.0f} MB, glibc free kept "
                 f"{report['glibc_after_trim'].get('free_kept', 0):.0f}")
    print(line, flush=True)
    for trim in report.get("trims", []):
        print(f"    trim at {trim['at'] - report['at']:+.0f} s: returned {trim['returned']}, RSS "
              f"{trim['rss_before']:.0f} -> {trim['rss_after']:.0f} MB", flush=True)
    for large in report.get("large", []):
        print(f"    a {large['type']} of {large['mb']:.1f} MB held by {' < '.join(large['held_by'])}", flush=True)
    if "traced" in report:
        traced = report["traced"]
        print(f"    traced: {traced['current_mb']:.0f} MB live (peak {traced['peak_mb']:.0f})", flush=True)
        for stat in traced["top"][:8]:
            print(f"      {stat['mb']:7.1f} MB {stat['blocks']:>8} blocks  {' < '.join(reversed(stat['where'][-4:]))}",
                  flush=True)


def phase(name: str, pid: int, calls, workers: int, probe: str | None) -> None:
    if probe:
        show("before", ask(pid, probe))
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # the peak (VmHWM) from now
    before = rss_mb(pid)
    with ThreadPoolExecutor(workers) as pool:
        answers = list(pool.map(lambda call: call(), calls))
    peak = rss_mb(pid, "VmHWM")
    if probe:
        show("just after", ask(pid, probe))
    time.sleep(35)
    held = rss_mb(pid)
    if probe:
        show("35 s after", ask(pid, probe, trim=True))
    done = sum(bool(a.get("success")) for a in answers)
    print(f"{name}: {done} saved, {len(answers) - done} refused or failed; server peak {peak - before:+.0f} MB, "
          f"held 35 s after {held - before:+.0f} MB (resident before {before:.0f} MB)", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--unbounded", action="store_true")
    parser.add_argument("--mib", type=float, default=12.5)
    parser.add_argument("--one", type=int, default=1, help="0: no phase of one export alone first")
    parser.add_argument("--sessions", type=int, default=60)
    parser.add_argument("--exports", type=int, default=32)
    parser.add_argument("--probe", action="store_true", help="the app reports its heap, arenas and sessions")
    parser.add_argument("--trace", action="store_true", help="with --probe: tracemalloc's largest holders too")
    args = parser.parse_args()
    probe = f"/tmp/held-memory-probe-{os.getpid()}.json" if args.probe or args.trace else None
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = start_app(port, args.unbounded, probe, args.trace)
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
        if args.one:
            phase("one export alone", server.pid,
                  [lambda: join_and_wait(url, export, data, uuid.uuid4().hex[:12], timeout=600)], 1, probe)
        if args.sessions:
            phase(f"{args.sessions} sessions, one figure each", server.pid,
                  [lambda: join_and_wait(url, export, data, uuid.uuid4().hex[:12], timeout=600)
                   for _ in range(args.sessions)], 4, probe)
        # one session (and browser key) per call: a session's calls share one stream of messages, which
        # join_and_wait reads for one call only (4 calls of one session hung there), and one browser's same figure is
        # one file (store.exports reuse), not 4 exports
        if args.exports:
            phase(f"{args.exports} exports at once ({args.exports} pages)", server.pid,
                  [lambda: join_and_wait(url, export, data, uuid.uuid4().hex[:12], {KEY_COOKIE: uuid.uuid4().hex},
                                         timeout=600) for _ in range(args.exports)], args.exports, probe)
    finally:
        server.terminate()
        server.wait(30)
        if probe:
            Path(probe).unlink(missing_ok=True)


if __name__ == "__main__":
    threading.excepthook = lambda args: None
    main()
