"""A classroom with hostile clients in it (issues 18 and 30): does one client hurt the others?

    nice -n 10 python bench/hostile_load.py --peer          # 20 clients, the floods, 90 s; then the peer window
    nice -n 10 python bench/hostile_load.py --seconds 45    # shorter, no peer
    nice -n 10 python bench/hostile_load.py --seconds 60 --app-dir /tmp/before --profile /tmp/prof   # main's app

Starts the app of this checkout in a subprocess on 127.0.0.1 (bench/load.py's driver), with gradio's cache in a
fresh folder and ATTENTION_LAB_TRUST_FORWARDED=1 (so X-Forwarded-For names a client's address, as on a Space),
then, over loopback only:

1. Eviction, both orders: a class of 3 trains a tiny model each, then `--flood-models` (66) tiny trainings come
   from new sessions (two at a time, as fast as the app runs them); then a flood of 50 first, a second class of
   3, and 18 more. Each student opens their model every 5 s meanwhile (a class uses its models).
2. The window (`--seconds`): `--clients` (20) threads repeat "Show attention" then a heatmap redraw (bench/load.py's
   classroom; its 5 inputs are opened once before, so every window finds them cached); a Stop prober presses Stop
   every 0.5 s from a session with nothing training; one client keeps 16 Show-attention requests of distinct
   2,000-character translate-en-es inputs going (bench/flooders.py); raw training joins from new session ids of
   one address, and from 10 addresses; after 5 s, a class of 5 behind one address and 2 students of their own
   addresses start a short training each, and are timed to their start.
3. A student downloads its model 100 times; the server's resident memory 5 s and 60 s after.
4. With `--peer`: the peer, once the memory is read: the same window again (same length, clients, training floods
   and students) without the attention flooder; honest Show attention's p95 with the flooder is reported as a
   ratio to the peer's (the same machine, the same minute: what the flooder costs, apart from the load).
Goals (issue 30, same run): honest Show attention p95 <= 1 s and 0 refusals; every student's training started,
each within its turn (tests.turn_rule on the server's own record of the training line, read through the driver's
stdin once the window's trainings have run: after its address's earlier runs, at most one run of each other address
started before it); 3/3 models kept in both eviction orders; RSS 60 s after within
+300 MB of the warm start; 0 errors for honest clients. The machine may be shared: the load average is printed, and
the goals table at the end says which goals were met. Also printed: honest Show attention's p95 by 10 s of the
window (when the slow ones started), the server's CPU over the window, and with `--profile PATH`, py-spy's samples
of the server's Python stacks during each window to PATH.txt (bench/profile_stacks.py says where the CPU went; with
`--gil`, only the stacks holding the GIL).
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent.parent)]
from tests.turn_record import Run  # noqa: E402
from tests.turn_rule import check_turns  # noqa: E402
from flooders import Student, attention_flood, training_flood  # noqa: E402
from load import (INPUTS, KINDS, Server, cpu_seconds, loadavg, make_client, opened_kind, percentile,  # noqa: E402
                  revision)

ROOT = Path(__file__).resolve().parent.parent
TINY = ("task", "reverse", "", None, "", 1, 4, 32, 3e-3, 10, 8)


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def folder_mb(root: Path) -> float:
    return sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) / 2**20


class Tally:
    def __init__(self):
        self.ms: dict[str, list[float]] = {}
        self.at: dict[str, list[float]] = {}  # when each of `ms` started (time.perf_counter)
        self.errors: dict[str, list[str]] = {}
        self.lock = threading.Lock()

    def timed(self, what: str, fn, expect_error: str | None = None):
        t0 = time.perf_counter()
        try:
            out = fn()
        except Exception as e:  # noqa: BLE001
            if expect_error and expect_error in str(e):
                out = None
            else:
                with self.lock:
                    self.errors.setdefault(what, []).append(f"{type(e).__name__}: {str(e)[:100]}")
                return None
        with self.lock:
            self.ms.setdefault(what, []).append((time.perf_counter() - t0) * 1e3)
            self.at.setdefault(what, []).append(t0)
        return out

    def by_slice(self, what: str, start: float, seconds: float, slices: int = 6) -> str:
        """p95 / max of `what` by slice of the window that began at `start` (when in the window the slow ones
        started: at the start, as every client connects, or all along)."""
        cut = [[] for _ in range(slices)]
        for t0, ms in zip(self.at.get(what, []), self.ms.get(what, [])):
            if start <= t0 < start + seconds:
                cut[int((t0 - start) / seconds * slices)].append(ms)
        step = seconds / slices
        return ", ".join(f"{i * step:.0f}-{(i + 1) * step:.0f} s: {percentile(ms, 95):.0f} / "
                         f"{max(ms, default=float('nan')):.0f} ms (n={len(ms)})" for i, ms in enumerate(cut))


def classroom(i: int, url: str, tally: Tally, end: float):
    client, rng, n = make_client(url, 120), random.Random(i), i
    while time.perf_counter() < end:
        ckpt, text = INPUTS[n % len(INPUTS)]
        out = tally.timed("attention", lambda: client.predict(ckpt, text, "", api_name="/attention"))
        if out is not None and time.perf_counter() < end:
            kind = opened_kind(out)
            tally.timed("redraw", lambda: client.predict(kind if kind in KINDS else "cross", rng.randrange(2),
                                                         rng.randrange(4), "entropy", api_name="/draw_attention"))
        n += 1


def stop_prober(url: str, tally: Tally, end: float):
    client = make_client(url, 60)
    while time.perf_counter() < end:
        tally.timed("stop", lambda: client.predict(api_name="/stop"), expect_error="Nothing is training")
        time.sleep(0.5)


def serve_in_fresh_cache(prefix: str, switch_interval: float = 0.0, app_dir: Path = ROOT) -> tuple[Server, Path]:
    """The app of `app_dir` (this checkout) started in a subprocess with gradio's cache in a new folder (whose size
    the bench reads), its log beside that folder; the load average is printed first (the machine may be shared).
    `switch_interval` > 0: the server's sys.setswitchinterval (an experiment; CPython's default is 5 ms)."""
    cache = Path(tempfile.mkdtemp(prefix=prefix))
    os.environ["GRADIO_TEMP_DIR"] = str(cache)
    print(f"load average before: {loadavg()}; the app of {app_dir} ({revision(app_dir)})", flush=True)
    return Server(app_dir, 0, switch_interval, cache.parent / f"{cache.name}.log"), cache


def open_inputs(url: str, inputs) -> None:
    """Show attention once for each (checkpoint, text): the checkpoints loaded before anything is measured."""
    warm = make_client(url, 120)
    for ckpt, text in inputs:
        warm.predict(ckpt, text, "", api_name="/attention")


def eviction_flood(url: str, n: int, counts: dict) -> tuple[int, float]:
    """n tiny trainings, each from a new session, two at a time (the app runs two at once): (done, seconds)."""
    t0, done = time.perf_counter(), 0
    for i in range(0, n, 2):
        jobs = [make_client(url, 300).submit(*TINY, api_name="/train") for _ in range(min(2, n - i))]
        for job in jobs:
            try:
                job.result(timeout=300)
                done += 1
            except Exception as e:  # noqa: BLE001
                what = f"flood training {type(e).__name__}"
                counts[what] = counts.get(what, 0) + 1
    return done, time.perf_counter() - t0


def students_with_models(url: str, n: int = 3) -> list:
    students = [make_client(url, 300) for _ in range(n)]
    for s in students:
        s.predict(*TINY, api_name="/train")
    return students


def open_model(tally: Tally, student, what: str = "student model"):
    return tally.timed(what, lambda: student.predict("my reverse model #1", "abc", "", api_name="/attention"))


def keep_using(students: list, tally: Tally, stop: threading.Event) -> threading.Thread:
    """A class uses its models: each student opens theirs every 5 s (what 'eviction by use' keeps)."""
    def run():
        while not stop.wait(5):
            for s in students:
                open_model(tally, s, "student use")
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def wait_idle(pid: int, limit_s: float = 600) -> float:
    """Wait until the server spends under 0.3 s of CPU in 2 s (the trainings the floods queued have run; the class
    still opens its models now and then); seconds waited."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < limit_s:
        before = cpu_seconds(pid)
        time.sleep(2)
        if cpu_seconds(pid) - before < 0.3:
            break
    return time.perf_counter() - t0


class Profile:
    """What the server spends its CPU on during a window: its CPU seconds, and with `path`, py-spy's samples of its
    Python stacks (raw format, by thread, without pausing it) to that file."""

    def __init__(self, pid: int, seconds: float, path: str | None, gil: bool = False):
        self.pid, self.before = pid, cpu_seconds(pid)
        self.spy = subprocess.Popen(["py-spy", "record", "--pid", str(pid), "--duration", str(int(seconds)),
                                     "--rate", "50", "--format", "raw", "--threads", "--nonblocking", "-o", path]
                                    + (["--gil"] if gil else []),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) if path else None

    def report(self, seconds: float, label: str = "") -> float:
        """Print and return the server's CPU seconds over the window."""
        spent = cpu_seconds(self.pid) - self.before
        print(f"{label}server CPU over the window: {spent / seconds:.2f} cores", flush=True)
        if self.spy is not None:
            self.spy.wait()
        return spent


def window(url: str, args, tally: Tally, counts: dict, flooder: bool, pid: int | None = None,
           label: str = "") -> list:
    """`args.seconds` of the classroom, the Stop prober, the training floods, the students (and, if `flooder`, the
    attention flooder); every thread joined. The students, timed. With the server's `pid`, its CPU over
    the window (and with `args.profile`, py-spy's samples to PATH`label`.txt)."""
    tally.window_start, end = time.perf_counter(), time.perf_counter() + args.seconds
    profile = Profile(pid, args.seconds, args.profile and f"{args.profile}{label}.txt", args.gil) if pid else None
    threads = [threading.Thread(target=classroom, args=(i, url, tally, end), daemon=True)
               for i in range(args.clients)]
    threads += [threading.Thread(target=stop_prober, args=(url, tally, end), daemon=True)]
    threads += attention_flood(url, end, counts) if flooder else []
    threads += [training_flood(url, end, counts, ["203.0.113.1"], "sessions flood"),
                training_flood(url, end, counts, [f"203.0.113.{10 + i}" for i in range(10)], "10-address flood")]
    for t in threads:
        t.start()
    time.sleep(5)  # the floods fill the training line first
    students = [Student(url, "198.51.100.7") for _ in range(5)] + [Student(url, f"192.0.2.{i}") for i in (1, 2)]
    time.sleep(max(0.0, end - time.perf_counter()))
    if profile is not None:
        tally.server_cpu = profile.report(args.seconds, label)
    for t in threads:
        t.join(args.seconds + 180)
    for s in students:
        s.thread.join(600)
    return students


def latencies(tally: Tally, label: str = "") -> None:
    for what in ("stop", "attention", "redraw", "student use", "download"):
        ms = tally.ms.get(what, [])
        if ms or what in ("stop", "attention", "redraw"):
            print(f"{label}{what:>12}: n={len(ms):4d} p50={percentile(ms, 50):7.0f} ms p95={percentile(ms, 95):7.0f} "
                  f"ms max={max(ms, default=float('nan')):7.0f} ms errors={len(tally.errors.get(what, []))}")


def refusals(tally: Tally) -> int:
    return sum("waiting" in e or "full" in e for e in tally.errors.get("attention", []))


def started_in_turn(record: tuple[list[dict], list], students: list, label: str = "") -> tuple[int, int]:
    """Each student's run in the server's record of the training line (`record`: Server.turns for the students) and
    whether it started within its turn (tests.turn_rule), printed with its place told, what it joined behind, its
    wait and its run; every run of the record is checked and counted too. (students within their turn, started.)"""
    runs = [Run(**{**r, "running": tuple(r["running"]), "line": tuple(r["line"])}) for r in record[0]]
    verdicts, by_client = check_turns(runs), {(r.address, r.browser): r for r in runs}
    address_of = {r.number: r.address for r in runs}
    within = 0
    for s, key in zip(students, record[1]):
        run = by_client.get(key)
        turn = verdicts[run.number] if run is not None else None
        within += bool(turn and turn.ok)
        behind = (f"{len(run.running)} running and {len(run.ahead)} waiting of "
                  f"{len({address_of.get(n) for n in run.running + run.ahead})} addresses" if run else "no run")
        print(f"{label}student {s.address:>13}: told place {s.rank}, joined behind {behind}; waited {s.wait:5.1f} s, "
              f"ran {s.run_time:4.1f} s; within its turn: {turn.ok if turn else None} ({turn.why if turn else ''}) "
              f"error={s.error}")
    judged = [v for v in verdicts.values() if v.ok is not None]
    print(f"{label}every run in the record ({len(runs)}): {sum(v.ok for v in judged)}/{len(judged)} of those started "
          f"within their turn")
    return within, sum(s.started is not None and s.error is None for s in students)


def goals_table(rows: list[tuple[str, str, str, bool | None]]) -> str:
    """The goals, one row each: (figure, value, goal, met: True, False, or None for a figure without a goal)."""
    lines = ["| figure | value | goal | met |", "| --- | --- | --- | --- |"]
    lines += [f"| {figure} | {value} | {goal} | {'' if met is None else ('yes' if met else '**no**')} |"
              for figure, value, goal, met in rows]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=90)
    parser.add_argument("--flood-models", type=int, default=66)
    parser.add_argument("--downloads", type=int, default=100)
    parser.add_argument("--peer", action="store_true",
                        help="then the same window without the attention flooder, for the ratio of the p95s")
    parser.add_argument("--app-dir", type=Path, default=ROOT, help="the checkout whose app is served (git worktree "
                        "add /tmp/before main: the bench of this checkout against another's app)")
    parser.add_argument("--switch-interval", type=float, default=0.0,
                        help="experiment: the server's sys.setswitchinterval in s (CPython's default: 0.005)")
    parser.add_argument("--profile", metavar="PATH", help="py-spy's samples of the server during each window to "
                        "PATH.txt (PATHpeer.txt for the peer's): bench/profile_stacks.py attributes them")
    parser.add_argument("--gil", action="store_true", help="with --profile: only the samples of the thread holding "
                        "the GIL (py-spy --gil: what the event loop and the other threads wait for)")
    args = parser.parse_args()
    os.environ["ATTENTION_LAB_TRUST_FORWARDED"] = "1"  # the X-Forwarded-For addresses below (loopback only)
    server, cache = serve_in_fresh_cache("hostile-load-cache-", args.switch_interval, args.app_dir)
    tally, counts, using, peer, peer_counts = Tally(), {}, threading.Event(), Tally(), {}
    peer_students, peer_load = [], "n/a"
    try:
        url = server.wait_ready(600)  # a busy shared machine can take minutes to import torch and gradio
        open_inputs(url, INPUTS + [("translate-en-es", "The cat sat on the mat.")])
        start_rss = rss_mb(server.proc.pid)
        class_first = students_with_models(url)  # eviction, the class first: then a flood of new sessions
        keep_using(class_first, tally, using)
        flood_done, flood_s = eviction_flood(url, args.flood_models, counts)
        flood_first, _ = eviction_flood(url, args.flood_models - 16, counts)  # the flood first: then a class
        class_second = students_with_models(url)
        keep_using(class_second, tally, using)
        eviction_flood(url, 18, counts)
        window_load = loadavg()
        students = window(url, args, tally, counts, True, server.proc.pid)
        window_load = f"{window_load} -> {loadavg()}"
        drained = wait_idle(server.proc.pid)  # what the floods left queued has run: the load is over
        turns = server.turns([(s.address, s.session) for s in students])  # before the ring moves on
        using.set()
        kept = [sum(open_model(tally, s) is not None for s in group) for group in (class_first, class_second)]
        disk_before = folder_mb(cache)
        for _ in range(args.downloads):
            tally.timed("download", lambda: class_first[0].predict("my reverse model #1", api_name="/download_model"))
        disk_after = folder_mb(cache)
        time.sleep(5)
        soon_rss = rss_mb(server.proc.pid)
        time.sleep(55)  # 60 s after the load: past a sweep of the disk budget's thread, which returns freed memory
        peak_rss, end_rss = rss_mb(server.proc.pid, "VmHWM"), rss_mb(server.proc.pid)
        if args.peer:  # the same window without the attention flooder, on the same server, right after
            peer_load = loadavg()
            peer_students = window(url, args, peer, peer_counts, False, server.proc.pid, "peer")
            peer_load = f"{peer_load} -> {loadavg()}"
            wait_idle(server.proc.pid)
            peer_turns = server.turns([(s.address, s.session) for s in peer_students])
    finally:
        server.stop()
    print(f"load average after: {loadavg()}; during the window {window_load}, the peer's {peer_load}; the floods' "
          f"queued trainings ran {drained:.0f} s after the window")
    print(f"eviction flood: {flood_done} tiny trainings from new sessions in {flood_s:.0f} s; flood first: "
          f"{flood_first} before a class of 3, then 18 more")
    latencies(tally)
    print("honest Show attention p95 / max by 10 s of the window: "
          + tally.by_slice("attention", tally.window_start, args.seconds, max(1, round(args.seconds / 10))))
    print(f"honest Show attention refusals: {refusals(tally)} (goal 0); p95 goal <= 1000 ms")
    within, started = started_in_turn(turns, students)
    print(f"students' trainings started: {started}/{len(students)}, within their turn: {within}/{len(students)}")
    errors = sum(map(len, tally.errors.values()))
    print(f"errors seen by honest clients: {errors} {({k: v[:2] for k, v in tally.errors.items()})}")
    print(f"students whose model is kept: class first {kept[0]}/3, flood first {kept[1]}/3")
    print(f"flooders' answers: {counts}")
    print(f"server RSS: warm start {start_rss:.0f} MB, peak {peak_rss:.0f} MB, 5 s after the load {soon_rss:.0f} MB, "
          f"60 s after {end_rss:.0f} MB (end - start {end_rss - start_rss:+.0f} MB; goal <= +300)")
    print(f"app folder: {disk_before:.0f} MB before {args.downloads} downloads, {disk_after:.0f} MB after "
          f"(goal <= 1024 MB)")
    ms = tally.ms.get("attention", [])
    p95 = percentile(ms, 95)
    rows = [(f"honest Show attention p50 / p95 / max (n={len(ms)})",
             f"{percentile(ms, 50):.0f} / {p95:.0f} / {max(ms, default=float('nan')):.0f} ms", "p95 <= 1000 ms",
             p95 <= 1000),
            ("honest Show attention refusals", str(refusals(tally)), "0", refusals(tally) == 0),
            ("honest Show attentions answered per server CPU second (the load apart)",
             f"{len(ms) / getattr(tally, 'server_cpu', float('nan')):.1f}", "", None)]
    if args.peer:
        print("\nthe peer: the same window without the attention flooder")
        latencies(peer, "peer ")
        print("peer honest Show attention p95 / max by 10 s of the window: "
              + peer.by_slice("attention", peer.window_start, args.seconds, max(1, round(args.seconds / 10))))
        peer_within, peer_started = started_in_turn(peer_turns, peer_students, "peer ")
        print(f"peer: refusals {refusals(peer)}, errors {sum(map(len, peer.errors.values()))}, students started "
              f"{peer_started}/{len(peer_students)}, within their turn {peer_within}/{len(peer_students)}, training "
              f"floods' answers {peer_counts}")
        bare = percentile(peer.ms.get("attention", []), 95)
        rows += [("honest Show attention p95 without the flooder (the peer)", f"{bare:.0f} ms", "", None),
                 ("p95 with the flooder / without", f"{p95 / bare:.2f}", "", None)]
    rows += [("heatmap redraw p95 / Stop p95", f"{percentile(tally.ms.get('redraw', []), 95):.0f} / "
              f"{percentile(tally.ms.get('stop', []), 95):.0f} ms", "", None),
             ("students' trainings started", f"{started}/{len(students)}", "all", started == len(students)),
             ("students' trainings started within their turn (tests.turn_rule on the server's record)",
              f"{within}/{len(students)}", "all", within == len(students)),
             ("models kept: class first / flood first", f"{kept[0]}/3 / {kept[1]}/3", "3/3 both", kept == [3, 3]),
             ("errors seen by honest clients", str(errors), "0", errors == 0),
             ("server RSS: warm start, peak, 60 s after", f"{start_rss:.0f}, {peak_rss:.0f}, {end_rss:.0f} MB "
              f"({end_rss - start_rss:+.0f})", "<= +300", end_rss - start_rss <= 300),
             ("app folder after the downloads", f"{disk_after:.0f} MB", "<= 1024 MB", disk_after <= 1024)]
    print(f"\ngoals (load average during the window {window_load}):\n{goals_table(rows)}")


if __name__ == "__main__":
    main()
