"""What a Show-attention flooder costs the class, part by part (issue 30): its one running long translation, or the
churn of its refused joins?

    nice -n 10 python bench/flood_parts.py --alone          # costs alone, then 4 windows of 40 s, twice, interleaved
    nice -n 10 python bench/flood_parts.py --seconds 30 --parts none,both

Starts the app of this checkout (bench/load.py's driver, on 127.0.0.1, loopback only), opens the classroom's 5
inputs once (so every window finds them cached). With `--alone`, first the server's CPU seconds per refused join,
per long translation and per cached Show attention, each sent alone one after another. Then windows of `--seconds`
with `--clients` (20) honest clients repeating "Show attention" then a redraw (bench/hostile_load.py's classroom),
and beside them, by window:
- none: nothing else (the peer every other window is a ratio against);
- long: one client keeping its 1 running + 4 waiting Show-attention requests of distinct 2,000-character
  translate-en-es inputs (5 threads: it is never refused; what its one running translation costs);
- refused: one client's 12 threads sending 2,001-character inputs, each refused at the door as over the limit
  (what refused joins cost: gradio's join path and the refusal, and the flooder's own client on this machine; a
  refused value is answered at once, so server.backoff does not slow these);
- both: bench/flooders.py's attention flooder as bench/hostile_load.py runs it (16 threads: 1 running, 4 waiting,
  the rest refused by the line, which server.backoff answers later and later).
No trainings: the parts are measured apart from the training line. For each window: the honest clients' Show
attention p50/p95 and its ratio to the mean of the `none` windows' p95, the server's CPU seconds, this process's
(the flooder's client shares the 2 cores), the flooder's answers and refusals per second, and the load average.
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from flooders import attention_flood  # noqa: E402
from hostile_load import Tally, classroom, open_inputs, serve_in_fresh_cache  # noqa: E402
from load import INPUTS, cpu_seconds, loadavg, make_client, percentile, self_cpu_seconds  # noqa: E402

PARTS = {"none": {}, "long": {"in_flight": 5}, "refused": {"in_flight": 12, "chars": 2001},
         "both": {"in_flight": 16}}


def alone_costs(url: str, pid: int, n_refused: int = 300, n_long: int = 6) -> dict:
    """Server CPU seconds per refused join and per long translation, each alone on an idle server (bench/flooders'
    attention flooder sends them: 1 thread, one after another)."""
    costs = {}
    for what, n, chars in (("refused join", n_refused, 2001), ("long translation", n_long, 2000)):
        counts, end = {}, time.perf_counter() + 600
        flood = attention_flood(url, end, counts, in_flight=1, chars=chars, most=n)[0]
        time.sleep(2)
        server0, t0 = cpu_seconds(pid), time.perf_counter()
        flood.start()
        flood.join()
        costs[what] = ((cpu_seconds(pid) - server0) / n, (time.perf_counter() - t0) / n, counts)
    honest, (ckpt, text) = make_client(url, 120), INPUTS[0]
    server0, t0 = cpu_seconds(pid), time.perf_counter()
    for _ in range(n_long * 5):
        honest.predict(ckpt, text, "", api_name="/attention")
    costs["honest Show attention (cached)"] = ((cpu_seconds(pid) - server0) / (n_long * 5),
                                               (time.perf_counter() - t0) / (n_long * 5), {})
    return costs


def window(url: str, part: str, args, pid: int) -> dict:
    tally, counts, end = Tally(), {}, time.perf_counter() + args.seconds
    threads = [threading.Thread(target=classroom, args=(i, url, tally, end), daemon=True)
               for i in range(args.clients)]
    threads += attention_flood(url, end, counts, **PARTS[part]) if PARTS[part] else []
    load, server0, self0, t0 = loadavg(), cpu_seconds(pid), self_cpu_seconds(), time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(args.seconds + 120)
    seconds = time.perf_counter() - t0
    ms = tally.ms.get("attention", [])
    return {"part": part, "n": len(ms), "p50": percentile(ms, 50), "p95": percentile(ms, 95),
            "redraw p95": percentile(tally.ms.get("redraw", []), 95), "errors": sum(map(len, tally.errors.values())),
            "server cpu/s": (cpu_seconds(pid) - server0) / seconds,
            "bench cpu/s": (self_cpu_seconds() - self0) / seconds,
            "answered/s": counts.get("attention flood answered", 0) / seconds,
            "refused/s": sum(v for k, v in counts.items() if "answered" not in k) / seconds,
            "load": f"{load} -> {loadavg()}"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=40)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--parts", default="none,long,refused,both")
    parser.add_argument("--switch-interval", type=float, default=0.0,
                        help="experiment: the server's sys.setswitchinterval in s (CPython's default: 0.005)")
    parser.add_argument("--app-dir", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the checkout whose app is served (this one's by default)")
    parser.add_argument("--alone", action="store_true", help="first the server CPU per refused join, per long "
                        "translation and per cached Show attention, each alone")
    args = parser.parse_args()
    parts = args.parts.split(",")
    server, _ = serve_in_fresh_cache("flood-parts-cache-", args.switch_interval, args.app_dir)
    rows = []
    try:
        url = server.wait_ready(600)
        open_inputs(url, INPUTS + [("translate-en-es", "The cat sat on the mat.")])
        print(f"server pid {server.proc.pid}", flush=True)
        for what, (cpu, wall, counts) in (alone_costs(url, server.proc.pid) if args.alone else {}).items():
            print(f"alone, each {what}: server CPU {cpu * 1e3:.1f} ms, wall {wall * 1e3:.0f} ms ({counts})", flush=True)
        for r in range(args.rounds):
            for part in parts:
                rows.append(window(url, part, args, server.proc.pid))
                print(f"round {r + 1}: {rows[-1]}", flush=True)
    finally:
        server.stop()
    peer = [row["p95"] for row in rows if row["part"] == "none"]
    base = sum(peer) / len(peer) if peer else float("nan")
    print(f"\n{args.clients} honest clients, windows of {args.seconds:.0f} s; ratio: p95 / mean p95 of the 'none' "
          f"windows ({base:.0f} ms)")
    print("| window | n | Show attention p50 / p95 | p95 / none | redraw p95 | server CPU | bench CPU | flooder "
          "answered / refused per s | load |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print(f"| {row['part']} | {row['n']} | {row['p50']:.0f} / {row['p95']:.0f} ms | {row['p95'] / base:.2f} | "
              f"{row['redraw p95']:.0f} ms | {row['server cpu/s']:.2f} cores | {row['bench cpu/s']:.2f} cores | "
              f"{row['answered/s']:.2f} / {row['refused/s']:.1f} | {row['load']} |")
    print(f"errors seen by honest clients: {sum(row['errors'] for row in rows)}")


if __name__ == "__main__":
    main()
