"""What each kind of request of the hostile load costs the server, alone, in CPU seconds (issue 37's last goal):

    nice -n 10 python bench/flood_costs.py                                # the app of this checkout
    nice -n 10 python bench/flood_costs.py --app-dir /tmp/before          # another tree's (git worktree add)
    nice -n 10 python bench/flood_costs.py --rounds 2 --cheap 100         # 200 of each cheap kind, 2 of the others

Starts the app of `--app-dir` (bench/load.py's driver, on 127.0.0.1, a free port; killed at the end), opens the
classroom's inputs once, then sends each kind of request bench/hostile_load.py sends, alone, one after another, and
reads the server's CPU seconds (/proc) around them: a figure the machine's load moves much less than a latency.
- idle: the server with nothing to do (gradio's loops), per second;
- each request of the hostile window: an honest Show attention (cached: the classroom's 5 inputs in turn), a heatmap
  redraw (of one record, at a random layer and head), a Stop with nothing training, a new gradio_client Client (its
  GET /config), a raw training join from a new session id (the training floods': the join and its whole run of
  bench/flooders.SHORT), a Show attention refused at the door (2,001 characters) and a long one run (2,000
  characters, translate-en-es: the attention flooder's).
Per request: the server's CPU over the kind's requests, less the idle rate over their wall time, divided by their
number; the run of a training is waited for until the server is idle again.
"""
from __future__ import annotations

import argparse
import itertools
import random
import shutil
import sys
import time
import uuid
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from flooders import SHORT, attention_flood, fn_index  # noqa: E402
from hostile_load import open_inputs, serve_in_fresh_cache  # noqa: E402
from load import INPUTS, KINDS, cpu_seconds, loadavg, make_client, opened_kind  # noqa: E402


class Meter:
    """The server's CPU seconds over a stretch of wall time, less what it spends idle over as long."""

    def __init__(self, pid: int, idle_per_s: float = 0.0):
        self.pid, self.idle_per_s = pid, idle_per_s

    def spent(self, run) -> tuple[float, float]:
        """(the server's CPU seconds net of idle, wall seconds) over `run()`."""
        cpu, t0 = cpu_seconds(self.pid), time.perf_counter()
        run()
        wall = time.perf_counter() - t0
        return cpu_seconds(self.pid) - cpu - self.idle_per_s * wall, wall


def settle(pid: int, quiet_cpu: float = 0.05, step: float = 1.0, limit_s: float = 300) -> None:
    """Wait until the server spends under `quiet_cpu` CPU seconds in `step` s (what it ran has ended)."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < limit_s:
        before = cpu_seconds(pid)
        time.sleep(step)
        if cpu_seconds(pid) - before < quiet_cpu:
            return


def raw_training_join(url: str, index: int, http: httpx.Client) -> None:
    """A training flood's join (bench/flooders.training_flood): a new session id, nobody reading its stream."""
    body = {"data": list(SHORT) + ["mha", "sinusoidal"], "fn_index": index, "session_hash": uuid.uuid4().hex[:10],
            "event_data": None, "trigger_id": None}
    http.post(url + "gradio_api/queue/join", json=body).raise_for_status()


def per_request(meter: Meter, n: int, one) -> tuple[float, float]:
    """(CPU ms net of idle, wall ms) per request of `one()`, sent `n` times one after another."""
    cpu, wall = meter.spent(lambda: [one() for _ in range(n)])
    return cpu / n * 1e3, wall / n * 1e3


def flood_per_request(meter: Meter, url: str, chars: int, n: int) -> tuple[float, float, str]:
    """(CPU ms net of idle, wall ms, the answers) per request of the attention flooder's, of `chars` characters,
    `n` sent one after another (one thread)."""
    counts = {}
    thread = attention_flood(url, time.perf_counter() + 3600, counts, in_flight=1, chars=chars, most=n)[0]
    cpu, wall = meter.spent(lambda: (thread.start(), thread.join()))
    return cpu / n * 1e3, wall / n * 1e3, str(counts)


def costs(url: str, pid: int, rounds: int, cheap: int) -> list[tuple[str, float, float, str]]:
    """(kind, server CPU ms per request net of idle, wall ms, note) for each kind."""
    settle(pid)
    idle_cpu, idle_wall = Meter(pid).spent(lambda: time.sleep(10))
    meter, rows = Meter(pid, idle_cpu / idle_wall), [("idle, per second", idle_cpu / idle_wall * 1e3, 1e3, "")]
    honest, rng = make_client(url, 120), random.Random(0)
    ckpt, text = INPUTS[0]
    kind = opened_kind(honest.predict(ckpt, text, "", api_name="/attention"))
    turn = itertools.count()
    rows.append(("honest Show attention (cached; the 5 classroom inputs in turn)", *per_request(
        meter, cheap * rounds, lambda: honest.predict(*INPUTS[next(turn) % len(INPUTS)], "", api_name="/attention")),
        ""))
    honest.predict(ckpt, text, "", api_name="/attention")  # the redraws below: of this input's record
    rows.append(("heatmap redraw", *per_request(meter, cheap * rounds, lambda: honest.predict(
        kind if kind in KINDS else "cross", rng.randrange(2), rng.randrange(4), "entropy",
        api_name="/draw_attention")), ""))

    def stop():
        try:
            honest.predict(api_name="/stop")
        except Exception as e:  # noqa: BLE001  (nothing is training: its answer is this refusal)
            if "Nothing is training" not in str(e):
                raise
    rows.append(("Stop, nothing training", *per_request(meter, cheap * rounds, stop), ""))
    rows.append(("a new Client (GET /config)", *per_request(meter, rounds, lambda: make_client(url, 120)), ""))
    rows.append(("Show attention refused at the door (2,001 chars)", *flood_per_request(meter, url, 2001,
                                                                                          2 * cheap * rounds)))
    rows.append(("long Show attention run (2,000 chars, translate-en-es)", *flood_per_request(meter, url, 2000,
                                                                                               rounds)))
    index = fn_index(url, "train")
    with httpx.Client(timeout=30) as http:
        def training():
            raw_training_join(url, index, http)
            time.sleep(1.0)  # it has started
            settle(pid, step=0.5)
        rows.append(("a training flood's join and its run (SHORT)", *per_request(meter, rounds, training),
                     "wall: until the server is idle again"))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--app-dir", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--rounds", type=int, default=6, help="requests of each kind that runs a model")
    parser.add_argument("--cheap", type=int, default=5, help="this many times --rounds of the cheap kinds (honest "
                        "Show attention, redraw, Stop; twice as many refusals)")
    args = parser.parse_args()
    server, cache = serve_in_fresh_cache("flood-costs-cache-", 0.0, args.app_dir)
    try:
        url = server.wait_ready(600)
        open_inputs(url, INPUTS + [("translate-en-es", "The cat sat on the mat.")])
        rows = costs(url, server.proc.pid, args.rounds, args.cheap)
    finally:
        server.stop()
    shutil.rmtree(cache, ignore_errors=True)  # gradio's cache of the run, and the server's log (kept if it failed)
    Path(server.log.name).unlink(missing_ok=True)
    print(f"load average after: {loadavg()}\n")
    print("| request | server CPU per request (ms, idle taken off) | wall (ms) | note |\n| --- | --- | --- | --- |")
    for what, cpu, wall, note in rows:
        print(f"| {what} | {cpu:.1f} | {wall:.0f} | {note} |")


if __name__ == "__main__":
    main()
