"""A class behind one address, every student pressing the same demo at once (issue 39, item 6).

    nice -n 10 python bench/class_load.py --students 30 --demo reverse        # one burst of 30
    nice -n 10 python bench/class_load.py --students 30 40 --demo reverse translation --rounds 3
    nice -n 10 python bench/class_load.py --students 30 --profile /tmp/class-prof    # py-spy during each burst

Starts the app of this checkout (or `--app-dir`) in a subprocess on 127.0.0.1 (bench/load.py's driver), with
gradio's cache in a fresh folder and ATTENTION_LAB_TRUST_FORWARDED=1, so that every student's X-Forwarded-For
(`--address`, one school NAT) names the same address, as a Space's proxy would. Then, over loopback only, for each
burst: N students, each its own gradio_client session (made and connected before the burst), wait at a barrier and
press the demo at once: "Show attention" (/attention with the demo's checkpoint, input and target) then the heatmap
of the head it opened (/draw_attention), what an API client does for a demo click. A student's time is from the
barrier to its heatmap. Before the first burst one client presses each demo once (the checkpoints loaded, the
shared caches warm: a class presses a demo the teacher has shown), unless `--cold`; with `--cold` each burst's
input is one the app has not seen (a digit appended), so the burst pays its one computation.

Printed per burst: answered, refused (with the first refusal's words), other errors, p50 / p95 / max of the
students' times, the server's CPU seconds over the burst, how many records the server computed and how many forward
passes its models ran during it (counted in the server: the driver wraps record_ids and Transformer's forward,
encode and decode before the app is imported; read through its stdin), the messages the queue sent the students
(and of them, the places in line: gradio's estimation messages), and the load average (the machine may be shared).
With --timeline, when each endpoint's calls joined the queue, started and ended. Bounded: at most 64 students, each request waits at most `--timeout` s.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent.parent)]
import load  # noqa: E402
from load import Server, cpu_seconds, loadavg, percentile, revision, self_cpu_seconds  # noqa: E402
from hostile_load import Profile  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEMOS = {  # (checkpoint, input, target) of the demo the class presses: tabs/demos.py's
    "reverse": ("reverse", "attention", ""),
    "translation": ("translate-en-es", "The disciples were filled with joy and with the Holy Spirit.",
                    "Y los discípulos estaban llenos de gozo, y del Espíritu Santo."),
}
MOST_STUDENTS = 64

# Counters in the server, installed by the driver before the app is imported (no endpoint serves them)
COUNTING = r'''
import threading
from transformer import model as _model
from transformer.interpretability import probe as _probe
COUNTS, _lock = {"records": 0, "forward": 0, "encode": 0, "decode": 0}, threading.Lock()
def _counted(owner, name, key):
    original = getattr(owner, name)
    def counted(*args, **kwargs):
        with _lock:
            COUNTS[key] += 1
        return original(*args, **kwargs)
    setattr(owner, name, counted)
for _name in ("forward", "encode", "decode"):
    _counted(_model.Transformer, _name, _name)
_counted(_probe, "record_ids", "records")
import functools, time as _time
from gradio import queueing as _queueing
TIMELINE = []  # (what, fn index, time.perf_counter()): when each call joined, started and ended; at most 20,000
def _timed(name):
    original = getattr(_queueing.Queue, name)
    @functools.wraps(original)  # keeps gradio's name and signature (server.compat drives the queue it wraps)
    async def timed(self, *args, **kwargs):
        body, events = kwargs.get("body"), (args[0] if args else kwargs.get("events"))
        index = body.fn_index if body is not None else events[0].fn._id
        if len(TIMELINE) < 20000:
            TIMELINE.append(("join" if name == "push" else "start", index, _time.perf_counter()))
        try:
            return await original(self, *args, **kwargs)
        finally:
            if name == "process_events" and len(TIMELINE) < 20000:
                TIMELINE.append(("end", index, _time.perf_counter()))
    setattr(_queueing.Queue, name, timed)
_timed("push")
_timed("process_events")
COUNTS["messages"] = COUNTS["estimations"] = 0
_send = _queueing.Queue.send_message
@functools.wraps(_send)
def _counted_send(self, event, message, *args, **kwargs):
    with _lock:
        COUNTS["messages"] += 1
        COUNTS["estimations"] += type(message).__name__ == "EstimationMessage"
    return _send(self, event, message, *args, **kwargs)
_queueing.Queue.send_message = _counted_send
'''


def counting_driver() -> str:
    """bench/load.py's driver, with the counters above and a `counts` command on its stdin."""
    driver = load.DRIVER.replace("import app\n", COUNTING + "import app\n", 1)
    return driver.replace('    if line.startswith("turns "):',
                          '    if line.startswith("counts"):\n'
                          '        print("COUNTS", json.dumps(COUNTS), flush=True)\n'
                          '        continue\n'
                          '    if line.startswith("timeline"):\n'
                          '        print("TIMELINE", json.dumps(TIMELINE), flush=True)\n'
                          '        TIMELINE.clear()\n'
                          '        continue\n'
                          '    if line.startswith("turns "):', 1)


class CountingServer(Server):
    def __init__(self, *args, **kwargs):
        original, load.DRIVER = load.DRIVER, counting_driver()
        try:
            super().__init__(*args, **kwargs)
        finally:
            load.DRIVER = original

    def ask(self, command: str):
        """The driver's answer to `command` on its stdin: "counts" (the counters) or "timeline" (emptied)."""
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        for line in self.proc.stdout:
            if line.startswith(command.upper() + " "):
                return json.loads(line.split(" ", 1)[1])
        raise RuntimeError(f"the app ended before answering (see {self.log.name})")

    def counts(self) -> dict:
        return self.ask("counts")


def timeline(events: list, t0: float, names: dict) -> list[str]:
    """Per endpoint of a burst (started at `t0`), when its calls joined the queue, started and ended: first, median
    and last, in seconds after the students were let go."""
    by = {}
    for what, index, t in events:
        by.setdefault(names.get(index, str(index)), {}).setdefault(what, []).append(t - t0)
    return [f"    {name:<16}" + "; ".join(f"{what} {min(ts):.2f} / {percentile(ts, 50):.2f} / {max(ts):.2f} s "
                                       f"(n={len(ts)})" for what in ("join", "start", "end") if (ts := times.get(what)))
            for name, times in by.items()]


def student_client(url: str, address: str, timeout: float):
    from gradio_client import Client

    return Client(url, verbose=False, download_files=False, analytics_enabled=False, ssl_verify=False,
                  headers={"X-Forwarded-For": address}, httpx_kwargs={"timeout": timeout})


def press(client, demo: tuple, timeout: float):
    """One demo click of an API client: Show attention, then the heatmap of the head it opened."""
    out = load.call(client, "/attention", demo, timeout)
    kind = load.opened_kind(out)
    layer, head = (load.value(x) for x in out[3:5])
    return load.call(client, "/draw_attention", (kind, layer, head, "anti-diagonal"), timeout)


def burst(server: CountingServer, clients: list, demo: tuple, args, label: str) -> dict:
    """Every client presses `demo` at once; their times, refusals and errors, and what the server spent."""
    times, refused, errors, lock = [], [], [], threading.Lock()
    barrier = threading.Barrier(len(clients) + 1)

    def one(client):
        barrier.wait()
        t0 = time.perf_counter()
        try:
            press(client, demo, args.timeout)
        except Exception as e:  # noqa: BLE001  (counted and shown)
            words = f"{type(e).__name__}: {str(e)[:160]}"
            with lock:
                (refused if "waiting" in words or "full" in words else errors).append(words)
            return
        with lock:
            times.append(time.perf_counter() - t0)

    threads = [threading.Thread(target=one, args=(c,), daemon=True) for c in clients]
    for t in threads:
        t.start()
    server.ask("timeline")
    before, cpu0, own0, load0 = server.counts(), cpu_seconds(server.proc.pid), self_cpu_seconds(), loadavg()
    profile = Profile(server.proc.pid, args.profile_seconds, f"{args.profile}{label}.txt") if args.profile else None
    t0 = time.perf_counter()
    barrier.wait()
    for t in threads:
        t.join(2 * args.timeout + 5)
    wall = time.perf_counter() - t0
    cpu, own, after = cpu_seconds(server.proc.pid) - cpu0, self_cpu_seconds() - own0, server.counts()
    steps = timeline(server.ask("timeline"), t0, args.names)
    if profile is not None:
        profile.spy.wait()
    return {"answered": len(times), "refused": len(refused), "errors": len(errors),
            "first_refusal": refused[:1], "first_error": errors[:1], "p50": percentile(times, 50),
            "p95": percentile(times, 95), "max": max(times, default=float("nan")), "wall": wall,
            "cpu": cpu, "students_cpu": own, "timeline": steps, "loadavg": f"{load0} -> {loadavg()}",
            **{k: after[k] - before[k] for k in after}}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--students", type=int, nargs="+", default=[30, 40])
    p.add_argument("--demo", choices=sorted(DEMOS), nargs="+", default=["reverse", "translation"])
    p.add_argument("--rounds", type=int, default=1, help="bursts of each size and demo")
    p.add_argument("--address", default="198.51.100.20", help="the class's one address (X-Forwarded-For)")
    p.add_argument("--cold", action="store_true", help="each burst asks for an input the app has not seen")
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("--app-dir", type=Path, default=ROOT)
    p.add_argument("--profile", help="py-spy's samples of the server during each burst to PATH<burst>.txt")
    p.add_argument("--timeline", action="store_true", help="when each endpoint's calls joined, started, ended")
    p.add_argument("--profile-seconds", type=float, default=8)
    args = p.parse_args()
    if max(args.students) > MOST_STUDENTS:
        p.error(f"at most {MOST_STUDENTS} students")
    cache = Path(tempfile.mkdtemp(prefix="class-load-cache-"))
    os.environ.update(GRADIO_ANALYTICS_ENABLED="False", GRADIO_TEMP_DIR=str(cache),
                      ATTENTION_LAB_TRUST_FORWARDED="1")  # loopback only: the address is the header's
    log = Path(tempfile.mkdtemp(prefix="class-load-logs-")) / "server.log"
    print(f"{args.app_dir} ({revision(args.app_dir)}); {os.cpu_count()} CPUs; loadavg {loadavg()}; server log {log}")
    server = CountingServer(args.app_dir.resolve(), 0, 0, log)
    try:
        url = server.wait_ready(180)
        config = httpx.get(url + "config", timeout=30).json()
        args.names = {d["id"]: d.get("api_name") or str(d["id"]) for d in config["dependencies"]}
        if not args.cold:
            warm = student_client(url, "192.0.2.99", args.timeout)
            for name in args.demo:
                press(warm, DEMOS[name], args.timeout)
        print(f"{'demo':<12}{'students':>9}{'answered':>9}{'refused':>8}{'errors':>7}{'p50 s':>7}{'p95 s':>7}"
              f"{'max s':>7}{'CPU s':>7}{'theirs':>7}{'records':>8}{'forward':>8}{'encode':>7}{'decode':>7}"
              f"{'messages':>9}{'of which places':>16}  loadavg")
        n = 0
        for _ in range(args.rounds):
            for name in args.demo:
                for students in args.students:
                    n += 1
                    ckpt, text, target = DEMOS[name]
                    demo = (ckpt, f"{text}{n}" if args.cold else text, target)
                    clients = [student_client(url, args.address, args.timeout) for _ in range(students)]
                    r = burst(server, clients, demo, args, f"-{name}-{students}-{n}")
                    print(f"{name:<12}{students:>9}{r['answered']:>9}{r['refused']:>8}{r['errors']:>7}"
                          f"{r['p50']:>7.2f}{r['p95']:>7.2f}{r['max']:>7.2f}{r['cpu']:>7.1f}{r['students_cpu']:>7.1f}"
                          f"{r['records']:>8}"
                          f"{r['forward']:>8}{r['encode']:>7}{r['decode']:>7}{r['messages']:>9}{r['estimations']:>16}"
                          f"  {r['loadavg']}", flush=True)
                    for words in r["first_refusal"] + r["first_error"]:
                        print(f"    e.g. {words}")
                    if args.timeline:
                        print("\n".join(r["timeline"]))
                    time.sleep(2)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
