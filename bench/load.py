"""Under load: a classroom of clients asking for attention heatmaps while trainings run (issue 7, item 7).

    python bench/load.py                                      # the app of this checkout
    python bench/load.py --app-dir /tmp/before                # an old checkout (git worktree add /tmp/before 6d07200)
    python bench/load.py --app-dir /tmp/before --app-dir . --rounds 2   # interleaved: before, after, before, after

Each run starts the app of `--app-dir` in a subprocess on 127.0.0.1 (a free port chosen here), through a tiny driver
that imports that directory's `app` and launches it: `app.launch(**overrides)` in the new code, `app.build_demo()`
plus `demo.launch(theme=app.THEME, css=app.CSS, ...)` in the old one. Then, over loopback only, with gradio_client:

- `--trainings` (2) clients start `/train` (tiny preset, task reverse, `--train-steps` steps, restarted if one ends
  early) and keep it running until the end; the measurement starts once both stream updates;
- `--clients` (20) threads, each with its own session, repeat for `--seconds` (60) with no pause: "Show attention"
  (`/attention`, one of 5 classroom inputs on the reverse and shakespeare-char checkpoints, taken in turn) then a
  redraw at a random layer and head of that model (`/draw_attention` in the new code; `/draw_layer`, what the old
  layer slider called, in the old one; the endpoints are detected with `view_api`).

Bounded: no request starts after the window or past `--max-requests`; each request waits at most `--timeout` s;
whatever still runs `--timeout` s after the window is abandoned, and a watchdog ends everything if a run overruns
its startup, window and grace. Prints a table and one summary line per endpoint (p50/p95/max in ms, count, errors,
and the p95 of the window's second half, once the app's caches are warm), the trainings' progress, the CPU cores
used by the server, by this load generator and by other processes (the machine may be shared), and /proc/loadavg.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Five classroom inputs: a class mostly sends the same few.
INPUTS = [("reverse", "attention"), ("reverse", "transformer"), ("reverse", "helloworld"),
          ("shakespeare-char", "To be, or not to be"), ("shakespeare-char", "ROMEO: But soft, what light")]
WARM_UP = [("reverse", "warmup"), ("shakespeare-char", "Warm up")]  # loads each checkpoint before the window
GOALS_MS = {"attention": 2000.0, "redraw": 1000.0}  # issue 7: p95 under 20 clients + 2 trainings

DRIVER = r'''
import os, sys, threading
app_dir, port, threads, switch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
os.chdir(app_dir)
sys.path.insert(0, app_dir)
os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ["HF_HUB_OFFLINE"] = "1"
if switch > 0:
    sys.setswitchinterval(switch)
if threads > 0:
    import torch
    torch.set_num_threads(threads)
import app
opts = dict(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
if hasattr(app, "launch"):  # new code: app.launch(**overrides) -> (demo, (app, url, share))
    demo, (_, url, _) = app.launch(**opts)
else:  # old code (6d07200): what app.main() did, with our overrides
    getattr(app, "keep_freed_memory", lambda: None)()
    from tabs.train.session import warm_up
    warm_up()
    demo = app.build_demo()
    _, url, _ = demo.launch(ssr_mode=False, theme=app.THEME, css=app.CSS, footer_links=["gradio", "settings"], **opts)
import json, torch
try:  # the training line recorded from here on, in this process (tests.turn_record: the server keeps no record)
    from tests.turn_record import record_turns as turn_record
except ImportError:
    try:  # an older checkout: the server kept its own
        from server.lines import turn_record
    except ImportError:  # an old checkout: no record
        turn_record = None
if turn_record is not None:
    turn_record(demo._queue)
print("READY", url, torch.get_num_threads(), flush=True)
for line in sys.stdin:  # until the load generator closes our stdin (or dies); "turns [[address, session], ...]":
    if line.startswith("turns "):  # the training line's record, and those clients' hashes in it (tests.turn_record)
        runs, keys = [], []
        if turn_record is not None:
            record = turn_record(demo._queue)
            runs, keys = [vars(r) for r in record.snapshot()], [record.key(*c) for c in json.loads(line[6:])]
        print("TURNS", json.dumps({"runs": runs, "keys": keys}), flush=True)
demo.close()
os._exit(0)
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (all its threads), from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def machine_busy_seconds() -> float:
    """CPU seconds spent by everything on the machine (all CPUs, not idle or iowait), from /proc/stat."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return float("nan")


def self_cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def percentile(values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return float("nan")
    s = sorted(values)
    pos = (len(s) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def revision(app_dir: Path) -> str:
    try:
        rev = subprocess.run(["git", "-C", str(app_dir), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10, check=False).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(app_dir), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=False).stdout.strip()
        return rev + ("+uncommitted" if dirty else "") if rev else "not a git checkout"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


@dataclass
class Samples:
    ms: dict = field(default_factory=lambda: {"attention": [], "redraw": []})
    late: dict = field(default_factory=lambda: {"attention": [], "redraw": []})  # started in the window's 2nd half
    errors: dict = field(default_factory=lambda: {"attention": [], "redraw": []})
    lock: threading.Lock = field(default_factory=threading.Lock)
    started: int = 0

    def reserve(self, cap: int) -> bool:
        with self.lock:
            if self.started >= cap:
                return False
            self.started += 1
            return True

    def add(self, what: str, ms: float | None, error: str | None = None, late: bool = False):
        with self.lock:
            if error is None:
                self.ms[what].append(ms)
                if late:
                    self.late[what].append(ms)
            else:
                self.errors[what].append(error)


class Server:
    """The app of `app_dir`, served on 127.0.0.1 by the driver above in a subprocess."""

    def __init__(self, app_dir: Path, torch_threads: int, switch_interval: float, log: Path):
        self.port = free_port()
        self.driver = Path(tempfile.mkdtemp(prefix="load-driver-")) / "driver.py"
        self.driver.write_text(DRIVER)
        self.log = open(log, "w")  # noqa: SIM115  (the server writes to it until stop())
        env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen([sys.executable, str(self.driver), str(app_dir), str(self.port),
                                      str(torch_threads), str(switch_interval)], cwd=app_dir, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True)
        self.url, self.torch_threads = None, None

    def wait_ready(self, limit_s: float) -> str:
        result = {}

        def read():
            for line in self.proc.stdout:
                if line.startswith("READY "):
                    _, result["url"], result["threads"] = line.split()
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(limit_s)
        if "url" not in result:
            self.stop()
            raise RuntimeError(f"the app did not start within {limit_s:.0f} s (see {self.log.name})")
        self.url, self.torch_threads = result["url"], int(result["threads"])
        return self.url

    def turns(self, clients: list[tuple[str, str]]) -> tuple[list[dict], list[tuple[str, str]]]:
        """The training line's record as the server keeps it (tests.turn_record: its runs as dicts), and the hashes
        it keeps each (address, session) of `clients` as; asked through the driver's stdin, no endpoint."""
        self.proc.stdin.write(f"turns {json.dumps(clients)}\n")
        self.proc.stdin.flush()
        for line in self.proc.stdout:
            if line.startswith("TURNS "):
                answer = json.loads(line[6:])
                return answer["runs"], [tuple(k) for k in answer["keys"]]
        raise RuntimeError(f"the app ended before answering (see {self.log.name})")

    def stop(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self.log.close()


def make_client(url: str, timeout: float):
    from gradio_client import Client

    # ssl_verify=False: plain http on loopback; otherwise gradio_client loads the CA bundle into a new SSL context
    # for every request (~40 ms of CPU each, more than the server spends on a cached redraw).
    return Client(url, verbose=False, download_files=False, analytics_enabled=False, ssl_verify=False,
                  httpx_kwargs={"timeout": timeout})


def endpoints(client) -> set[str]:
    return set(client.view_api(print_info=False, return_format="dict")["named_endpoints"])


def call(client, api: str, args: tuple, timeout: float):
    job = client.submit(*args, api_name=api)
    try:
        return job.result(timeout=timeout)
    except BaseException:
        job.cancel()
        raise


def redraw_call(api: str, kind, layer: int, head: int) -> tuple:
    return (kind, layer, head, "entropy") if api == "/draw_attention" else (kind, layer, head)


def value(x):
    """gradio_client gives a component update either as its value or as a dict holding one."""
    return x.get("value") if isinstance(x, dict) else x


KINDS = ("cross", "encoder self", "decoder self")


def opened_kind(out) -> str:
    """The attention kind /attention opened on (the outputs differ between versions: find the kind radio's value)."""
    for x in out if isinstance(out, (list, tuple)) else ():
        if value(x) in KINDS:
            return value(x)
    return "cross"


def model_shapes(app_dir: Path) -> dict:
    """(layers, heads) of each classroom checkpoint, from its config.json: the redraws pick any layer and head."""
    shapes = {}
    for ckpt in {c for c, _ in INPUTS}:
        try:
            m = json.loads((app_dir / "checkpoints" / ckpt / "config.json").read_text())["model"]
            shapes[ckpt] = (max(m.get("n_decoder_layers", 1), m.get("n_encoder_layers", 0), 1), m.get("n_heads", 1))
        except (OSError, KeyError, ValueError):
            shapes[ckpt] = (2, 4)
    return shapes


def classroom_client(i: int, client, redraw_api: str, samples: Samples, window: dict, args, barrier, shapes):
    rng = random.Random(i)  # the same choices in every run
    try:
        barrier.wait()
    except threading.BrokenBarrierError:
        return
    window_end, half = window["end"], window["end"] - args.seconds / 2
    n = i  # each client starts on another input and moves through the five
    while time.perf_counter() < window_end and samples.reserve(args.max_requests):
        ckpt, text = INPUTS[n % len(INPUTS)]
        t0 = time.perf_counter()
        try:
            out = call(client, "/attention", (ckpt, text, ""), args.timeout)
            samples.add("attention", (time.perf_counter() - t0) * 1e3, late=t0 >= half)
        except Exception as e:  # noqa: BLE001  (any failure is counted and shown)
            samples.add("attention", None, f"{type(e).__name__}: {str(e)[:120]}")
            n += 1
            continue
        if time.perf_counter() >= window_end or not samples.reserve(args.max_requests):
            break
        kind = opened_kind(out)
        t0 = time.perf_counter()
        layers, heads = shapes[ckpt]
        try:  # a layer/head slider move to any layer and head of the model
            call(client, redraw_api, redraw_call(redraw_api, kind, rng.randrange(layers), rng.randrange(heads)),
                 args.timeout)
            samples.add("redraw", (time.perf_counter() - t0) * 1e3, late=t0 >= half)
        except Exception as e:  # noqa: BLE001
            samples.add("redraw", None, f"{type(e).__name__}: {str(e)[:120]}")
        n += 1


class Training:
    """One client keeping a /train run going (restarted if it ends early) until `stop` is set."""

    def __init__(self, url: str, steps: int, timeout: float):
        self.client = make_client(url, timeout)
        self.steps, self.updates, self.runs, self.status, self.error = steps, 0, 0, "", None
        self.finished_steps = 0  # steps of the runs that ended before the current one
        self.streaming = threading.Event()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        tiny = ("task", "reverse", "", None, "", 1, 4, 64, 3e-3, self.steps, 64)  # the tiny preset, longer
        while not self.stop.is_set():
            job = self.client.submit(*tiny, api_name="/train")
            self.runs += 1
            seen = 0
            while not self.stop.wait(0.25):
                outs = job.outputs()
                if len(outs) > seen:
                    seen = len(outs)
                    self.status = str(value(outs[-1][1])) if len(outs[-1]) > 1 else ""
                    if seen >= 2:
                        self.streaming.set()
                if job.done():
                    break
            self.updates += seen
            if not self.stop.is_set():  # a run that ended: count its steps, the next one starts at 0
                self.finished_steps += self._current()
                self.status = ""
            if not job.done():
                job.cancel()
            elif not self.stop.is_set():
                exc = job.exception()
                if exc is not None:
                    self.error = f"{type(exc).__name__}: {str(exc)[:160]}"
                    self.streaming.set()
                    return

    def _current(self) -> int:
        m = re.findall(r"(?:step|after) (\d+)", self.status)
        return int(m[-1]) if m else 0

    def step(self) -> int:
        """Steps trained so far by this client's runs (from the status line the Train tab streams)."""
        return self.finished_steps + self._current()


def run_once(app_dir: Path, args, log_dir: Path) -> dict:
    result = {"app_dir": str(app_dir), "revision": revision(app_dir),
              "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "loadavg_before": loadavg()}
    t_start = time.perf_counter()
    limit = 2 * args.start_timeout + args.seconds + args.timeout + 60

    def overrun():
        print(f"load.py: the run overran {limit:.0f} s; stopping", file=sys.stderr, flush=True)
        server.proc.kill()
        os._exit(3)

    watchdog = threading.Timer(limit, overrun)
    watchdog.daemon = True
    server = Server(app_dir, args.torch_threads, args.switch_interval, log_dir / f"server-{len(os.listdir(log_dir))}.log")
    trainings, threads = [], []
    watchdog.start()
    try:
        url = server.wait_ready(args.start_timeout)
        result["startup_s"] = round(time.perf_counter() - t_start, 1)
        result["server_torch_threads"] = server.torch_threads
        probe = make_client(url, args.timeout)
        names = endpoints(probe)
        redraw_api = args.redraw or ("/draw_attention" if "/draw_layer" not in names else "/draw_layer")
        missing = {"/attention", "/train", redraw_api} - names
        if missing:
            raise RuntimeError(f"the app has no {', '.join(sorted(missing))}; it has {', '.join(sorted(names))}")
        result["redraw_api"] = redraw_api
        for ckpt, text in WARM_UP:  # load both checkpoints (and the first figures) before the window
            out = call(probe, "/attention", (ckpt, text, ""), args.start_timeout)
            call(probe, redraw_api, redraw_call(redraw_api, opened_kind(out), 0, 0), args.start_timeout)

        trainings = [Training(url, args.train_steps, args.timeout) for _ in range(args.trainings)]
        for t in trainings:
            t.thread.start()
        deadline = time.perf_counter() + args.start_timeout
        for t in trainings:
            t.streaming.wait(max(0.0, deadline - time.perf_counter()))
        errors = [t.error for t in trainings if t.error] + \
                 ["a training did not stream updates in time" for t in trainings if not t.streaming.is_set()]
        if errors:
            raise RuntimeError("; ".join(errors))
        clients = [make_client(url, args.timeout) for _ in range(args.clients)]

        samples, shapes = Samples(), model_shapes(app_dir)
        barrier = threading.Barrier(args.clients + 1)
        window = {}
        for i, client in enumerate(clients):
            th = threading.Thread(target=lambda i=i, c=client: classroom_client(
                i, c, redraw_api, samples, window, args, barrier, shapes), daemon=True)
            th.start()
            threads.append(th)
        steps0 = [t.step() for t in trainings]
        result["loadavg_start"] = loadavg()
        cpu0, own0, all0 = cpu_seconds(server.proc.pid), self_cpu_seconds(), machine_busy_seconds()
        t0 = time.perf_counter()
        window["end"] = t0 + args.seconds
        barrier.wait()
        if not threads:  # --clients 0: the trainings alone, for reference
            time.sleep(args.seconds)
        for th in threads:
            th.join(max(0.0, window["end"] + args.timeout - time.perf_counter()))
        elapsed = time.perf_counter() - t0
        cpu1, own1, all1 = cpu_seconds(server.proc.pid), self_cpu_seconds(), machine_busy_seconds()
        result["loadavg_end"] = loadavg()
        result["abandoned_clients"] = sum(th.is_alive() for th in threads)
        steps1 = [t.step() for t in trainings]
        result["elapsed_s"] = round(elapsed, 1)
        result["server_cores"] = round((cpu1 - cpu0) / elapsed, 2)
        result["loadgen_cores"] = round((own1 - own0) / elapsed, 2)
        result["other_cores"] = round(max(0.0, all1 - all0 - (cpu1 - cpu0) - (own1 - own0)) / elapsed, 2)
        result["server_cpu_ms_per_request"] = (round((cpu1 - cpu0) * 1e3 / samples.started, 1) if samples.started
                                               else None)
        result["training_steps_per_s"] = [round(max(0, b - a) / elapsed, 1) for a, b in zip(steps0, steps1)]
        result["training_runs"] = [t.runs for t in trainings]
        result["training_errors"] = [t.error for t in trainings if t.error]
        for what in ("attention", "redraw"):
            ms, errs = samples.ms[what], samples.errors[what]
            result[what] = {"count": len(ms), "errors": len(errs), "p50": percentile(ms, 50),
                            "p95": percentile(ms, 95), "max": max(ms) if ms else float("nan"),
                            "p95_2nd_half": percentile(samples.late[what], 95),
                            "per_s": len(ms) / elapsed, "first_errors": sorted(set(errs))[:3]}
        result["requests"] = samples.started
        return result
    finally:
        watchdog.cancel()
        for t in trainings:
            t.stop.set()
        for t in trainings:
            t.thread.join(10)
        server.stop()
        result["loadavg_after"] = loadavg()


def print_run(r: dict):
    print(f"\n== {r['app_dir']} ({r['revision']}), {r['date']}; redraw = {r.get('redraw_api')}; "
          f"server torch threads {r.get('server_torch_threads')}")
    print(f"loadavg: before launch {r['loadavg_before']} | window start {r.get('loadavg_start')} | "
          f"window end {r.get('loadavg_end')} | after {r['loadavg_after']}")
    print(f"window {r['elapsed_s']} s, {r['requests']} requests started; CPU cores busy: server "
          f"{r['server_cores']} ({r['server_cpu_ms_per_request'] or '-'} ms per request, trainings included), load "
          f"generator {r['loadgen_cores']}, other processes {r['other_cores']}; trainings {r['training_steps_per_s']} "
          f"steps/s (runs {r['training_runs']}){'; ' + str(r['training_errors']) if r['training_errors'] else ''}"
          + (f"; {r['abandoned_clients']} clients abandoned" if r["abandoned_clients"] else ""))
    print(f"{'endpoint':<16}{'count':>7}{'errors':>8}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'req/s':>7}"
          f"{'p95 2nd half':>14}")
    for what, label in (("attention", "Show attention"), ("redraw", "redraw")):
        s = r[what]
        print(f"{label:<16}{s['count']:>7}{s['errors']:>8}{s['p50']:>9.0f}{s['p95']:>9.0f}{s['max']:>9.0f}"
              f"{s['per_s']:>7.1f}{s['p95_2nd_half']:>14.0f}")
    for what, label in (("attention", "Show attention (/attention)"), ("redraw", f"redraw ({r['redraw_api']})")):
        s, goal = r[what], GOALS_MS[what]
        verdict = "MET" if s["count"] and not s["errors"] and s["p95"] <= goal else "MISSED"
        print(f"{label}: p50 {s['p50']:.0f} ms, p95 {s['p95']:.0f} ms, max {s['max']:.0f} ms, n={s['count']}, "
              f"errors={s['errors']}; goal p95 <= {goal:.0f} ms: {verdict}"
              + (f"  e.g. {s['first_errors']}" if s["first_errors"] else ""))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--app-dir", action="append", type=Path, help="checkout whose app.py to serve (repeatable)")
    p.add_argument("--rounds", type=int, default=1, help="run every --app-dir this many times, interleaved")
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--trainings", type=int, default=2)
    p.add_argument("--seconds", type=float, default=60, help="measuring window (capped at 600)")
    p.add_argument("--max-requests", type=int, default=5000, help="cap on requests started in a window")
    p.add_argument("--timeout", type=float, default=60, help="per request, and the grace after the window")
    p.add_argument("--train-steps", type=int, default=5000, help="steps of each /train run (the app caps 5000)")
    p.add_argument("--start-timeout", type=float, default=180)
    p.add_argument("--redraw", help="redraw endpoint to use instead of the detected one (e.g. /draw_attention)")
    p.add_argument("--torch-threads", type=int, default=0, help="experiment: torch.set_num_threads in the server")
    p.add_argument("--switch-interval", type=float, default=0, help="experiment: sys.setswitchinterval (s)")
    p.add_argument("--json", type=Path, help="append each run's result as a JSON line to this file")
    args = p.parse_args()
    args.seconds = min(args.seconds, 600)
    app_dirs = [d.resolve() for d in (args.app_dir or [ROOT])]
    for d in app_dirs:
        if not (d / "app.py").is_file():
            p.error(f"{d} has no app.py")
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    log_dir = Path(tempfile.mkdtemp(prefix="load-logs-"))
    print(f"{args.clients} clients, {args.trainings} trainings, {args.seconds:.0f} s window, "
          f"<= {args.max_requests} requests; {os.cpu_count()} CPUs; server logs in {log_dir}")
    results = []
    for _ in range(args.rounds):
        for d in app_dirs:
            r = run_once(d, args, log_dir)
            print_run(r)
            results.append(r)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(r) + "\n")
    if len(results) > 1:
        print("\nall runs (ms)")
        print(f"{'app dir':<22}{'rev':<22}{'att p50':>8}{'att p95':>8}{'red p50':>8}{'red p95':>8}{'n att':>6}"
              f"{'n red':>6}{'err':>5}  loadavg start/end")
        for r in results:
            a, w = r["attention"], r["redraw"]
            print(f"{str(r['app_dir'])[-21:]:<22}{r['revision'][:21]:<22}{a['p50']:>8.0f}{a['p95']:>8.0f}"
                  f"{w['p50']:>8.0f}{w['p95']:>8.0f}{a['count']:>6}{w['count']:>6}{a['errors'] + w['errors']:>5}"
                  f"  {r['loadavg_start']} / {r['loadavg_end']}")


if __name__ == "__main__":
    main()
