"""A class session under load (issue 39): N students behind one address join a class, receive a pushed view, answer
a question and receive the reveal, each polling the class once a second as the page's timer does.

    nice -n 10 python bench/class_session.py --students 40 [--view head|patching|sinusoids]

Starts the app of this checkout in a subprocess on 127.0.0.1 (bench/load.py's driver, with the model's passes
counted), with ATTENTION_LAB_TRUST_FORWARDED=1 and every student's requests carrying one X-Forwarded-For address (a
school behind one NAT), then over loopback only: a teacher session starts a class and computes `reverse` on
"attention" (--view patching: translate-en-es on "Who carries a word?"'s pair and its patching grids; --view
sinusoids: nothing, the matrix is drawn from the Positional tab's two sliders); N student sessions (separate
sessions, so separate browsers) join by the code, then every `--poll` s (the page's gr.Timer) ask /class_stamp and,
when it changed, /class_poll, until the end, each call made as the page makes it (the class's events are not
queued: a POST to run/predict); the teacher pushes the view, asks about the first query row (another view: the demo's
own question), every student answers once it sees the question, the teacher polls too (the projector's split), and reveals once every answer is in. Prints,
per step, p50 / p95 / max in seconds:
- join: a student's /class_join call;
- push -> device: from the push's reply to each student's first poll that returns the figure;
- answer -> projector: from a student's answer's reply to the end of the first teacher's poll sent after it
  (the projector's count then includes it);
- reveal -> device: from the reveal's reply to each student's first poll that returns its right-or-wrong line;
and the bytes a device received for the push and for the reveal (the reply of the poll that brought each), the
refusals and errors, the server's CPU seconds over the session, and the model's forward passes (forward, encode,
decode) per push and during the whole session after the teacher's record. With `--profile PATH`, py-spy's samples
of the server for `--profile-seconds` from the push and from the reveal, to PATH-push.txt and PATH-reveal.txt
(read them with bench/profile_stacks.py). Goals (issue 39, quiet 2-core
machine, 40 students): 0 refused; push -> device p95 <= 1.5 s; answer -> projector p95 <= 1 s; reveal -> device
p95 <= 1.5 s; the push computed once (0 passes: drawn from the teacher's record).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent.parent)]
import load  # noqa: E402
from load import Server, cpu_seconds, loadavg, make_client, percentile  # noqa: E402
from hostile_load import Profile  # noqa: E402
from transformer.interpretability.patching_demos import TRANSLATION_EXAMPLES  # noqa: E402

ADDRESS = "203.0.113.7"  # every student behind one NAT (TEST-NET-3)
VIEW = ("cross", 1, 2, "weights", False, "anti-diagonal")
# "Who carries a word? (translation)": the library's minimal pair (tabs.demos reads the same)
VERSE = next(e[1:] for e in TRANSLATION_EXAMPLES if e[0] == "Gen.24.26")
VIEWS = {  # --view: the teacher's record (checkpoint, input, second input) and the push's view inputs
    "head": dict(ckpt="reverse", text="attention", text_b="", view=VIEW, which="att-one"),
    "patching": dict(ckpt="translate-en-es", text=VERSE[0], text_b=VERSE[1],
                     view=("cross", 0, 0, "weights", False, "entropy"), which="patch-heads"),
    "sinusoids": dict(ckpt="", text="", text_b="", view=VIEW, which="pe-matrix")}
# Counts every pass through a Transformer in the server (forward, encode, decode), written to COUNT_FILE 10x a second
COUNTER = r'''
import os, sys, threading, time
sys.path.insert(0, sys.argv[1])
from transformer.model import Transformer
_count = [0]
for _name in ("forward", "encode", "decode"):
    def _wrap(original):
        def counted(self, *a, **k):
            _count[0] += 1
            return original(self, *a, **k)
        return counted
    setattr(Transformer, _name, _wrap(getattr(Transformer, _name)))
def _write():  # whole or not at all: a reader never sees the file emptied (it read 0 once: "-20 passes")
    while True:
        with open(os.environ["CLASS_BENCH_COUNT"] + ".new", "w") as f:
            f.write(str(_count[0]))
        os.replace(os.environ["CLASS_BENCH_COUNT"] + ".new", os.environ["CLASS_BENCH_COUNT"])
        time.sleep(0.1)
threading.Thread(target=_write, daemon=True).start()
'''


def passes(path: Path) -> int:
    time.sleep(0.25)  # the counter writes 10x a second
    return int(path.read_text() or 0)


class Page:
    """Calls of the class's events as the page makes them: not queued (queue=False), so a POST to run/predict with
    the page's session id and its address, answered in the same request (gradio_client would join the queue)."""

    def __init__(self, url: str, session: str, address: str, timeout: float):
        import httpx

        self.http = httpx.Client(timeout=timeout, headers={"X-Forwarded-For": address})
        self.url, self.session = url, session
        self.received = 0  # the bytes of the last reply
        config = self.http.get(url + "config").json()
        self.functions = {d["api_name"]: d["id"] for d in config["dependencies"] if d.get("api_name")}
        self.inputs = {d["api_name"]: len(d["inputs"]) for d in config["dependencies"] if d.get("api_name")}

    def predict(self, *data, api_name: str):
        api = api_name.lstrip("/")
        data = (list(data) + [None] * self.inputs[api])[:self.inputs[api]]  # an older app: fewer inputs
        reply = self.http.post(self.url + "gradio_api/run/predict", json={
            "data": data, "fn_index": self.functions[api], "session_hash": self.session, "event_data": None,
            "trigger_id": None})
        self.received = len(reply.content)
        answer = reply.json()
        if "error" in answer or "data" not in answer:
            raise RuntimeError(str(answer.get("error") or answer)[:200])
        return tuple(answer["data"])


class Device:
    """A device's page: its session, and what its polls have seen (the time each step was first seen)."""

    def __init__(self, url: str, timeout: float, address: str = ADDRESS):
        self.client = make_client(url, timeout)  # for the queued calls (the teacher's Show attention)
        self.client.headers["X-Forwarded-For"] = address
        self.page = Page(url, self.client.session_hash, address, timeout)
        self.seen, self.answered, self.push, self.first, self.bytes = -1, -1, -1, {}, {}
        self.errors, self.choices, self.stamp = [], None, ""

    def tick(self, code: str, role: str = "student") -> None:
        """A period of the page's timer: the class's stamp (/class_stamp), and the poll when it changed (an app
        without stamps: the poll)."""
        if "class_stamp" not in self.page.functions:
            self.poll(code, role)
            return
        stamp = self.page.predict(code, api_name="/class_stamp")[0]
        if stamp != self.stamp:
            self.stamp = stamp
            self.poll(code, role)

    def poll(self, code: str, role: str = "student") -> tuple:
        out = self.page.predict(code, role, self.seen, self.answered, True, self.push, api_name="/class_poll")
        now = time.perf_counter()
        for name, i in (("seen", 7), ("answered", 8), ("push", 12)):  # what the page's hidden boxes keep
            if i < len(out) and isinstance(out[i], (int, float)):
                setattr(self, name, out[i])
        if isinstance(out[1], dict) and "plot" in out[1] and "figure" not in self.first:
            self.first["figure"], self.bytes["figure"] = now, self.page.received
        if isinstance(out[5], dict) and out[5].get("choices") and "question" not in self.first:
            self.choices = [c[0] for c in out[5]["choices"]]
            self.first["question"] = now
        if isinstance(out[6], str) and ("Right" in out[6] or "Not this time" in out[6]) and "reveal" not in self.first:
            self.first["reveal"], self.bytes["reveal"] = now, self.page.received
        return out


def student_loop(device: Device, code: str, period: float, stop: threading.Event, answers: list):
    """Poll every `period` s; answer once (the first choice) when the question is first seen."""
    while not stop.is_set():
        started = time.perf_counter()
        try:
            device.tick(code)
            if device.choices and not any(a[0] is device for a in answers):
                device.page.predict(code, device.choices[0], api_name="/class_answer")
                answers.append((device, time.perf_counter()))
        except Exception as e:  # noqa: BLE001  (counted and printed)
            device.errors.append(str(e)[:200])
        stop.wait(max(0.0, period - (time.perf_counter() - started)))


def stats(values: list[float]) -> str:
    if not values:
        return "no values"
    return (f"p50 {percentile(values, 50):.2f} s, p95 {percentile(values, 95):.2f} s, max {max(values):.2f} s "
            f"({len(values)})")


def stats_bytes(values: list[int]) -> str:
    return f"p50 {percentile(values, 50) / 1000:.1f} kB, max {max(values) / 1000:.1f} kB" if values else "none"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--poll", type=float, default=1.0, help="seconds between a device's polls (the page's)")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--view", choices=sorted(VIEWS), default="head",
                        help="what the teacher shows: the Attention tab's head (reverse), a patching demo's heads "
                             "grid (Who carries a word?) or the Sinusoid waves' matrix; the question is the row's, "
                             "else the demo's own")
    parser.add_argument("--profile", help="py-spy's samples of the server from the push and from the reveal to "
                                          "PATH-push.txt and PATH-reveal.txt")
    parser.add_argument("--profile-seconds", type=float, default=4)
    args = parser.parse_args()
    os.environ["ATTENTION_LAB_TRUST_FORWARDED"] = "1"
    count_file = Path(tempfile.mkdtemp(prefix="class-bench-")) / "passes"
    os.environ["CLASS_BENCH_COUNT"] = str(count_file)
    load.DRIVER = COUNTER + load.DRIVER
    server = Server(load.ROOT, 0, 0.0, count_file.with_name("server.log"))
    url = server.wait_ready(180)
    print(f"app at {url}; load average {loadavg()}; {args.students} students behind {ADDRESS}")
    try:
        teacher = Device(url, args.timeout, "198.51.100.1")
        code = teacher.page.predict("", api_name="/class_start")[0]
        shown = VIEWS[args.view]
        if shown["text"]:  # queued, as the page's: the record, then the pair's grids
            teacher.client.predict(shown["ckpt"], shown["text"], "", api_name="/attention")
        if shown["text_b"]:
            teacher.client.predict(shown["text_b"], api_name="/compare_inputs")
            teacher.client.predict(shown["view"][0], 0, 0, "", "", -1, api_name="/patching")
        cpu0, passes0 = cpu_seconds(server.proc.pid), passes(count_file)
        devices, joins, refused = [Device(url, args.timeout) for _ in range(args.students)], [], []

        def join(device):
            started = time.perf_counter()
            try:
                device.page.predict(code, api_name="/class_join")
                joins.append(time.perf_counter() - started)
            except Exception as e:  # noqa: BLE001
                refused.append(str(e)[:200])
        threads = [threading.Thread(target=join, args=(d,)) for d in devices]
        [t.start() for t in threads]
        [t.join() for t in threads]
        stop, answers = threading.Event(), []
        loops = [threading.Thread(target=student_loop, args=(d, code, args.poll, stop, answers)) for d in devices]
        [t.start() for t in loops]
        time.sleep(2 * args.poll)
        before_push = passes(count_file)

        def spy(step: str) -> Profile | None:
            return Profile(server.proc.pid, args.profile_seconds, f"{args.profile}-{step}.txt") if args.profile \
                else None
        profiles = [spy("push")]
        teacher.page.predict(code, None, None, None, *shown["view"], shown["which"], None, None, "", "", -1, 128, 100,
                             api_name="/class_push")
        pushed_at = time.perf_counter()
        deadline = pushed_at + 30
        while time.perf_counter() < deadline and not all("figure" in d.first for d in devices):
            time.sleep(0.05)
        push_passes = passes(count_file) - before_push
        if args.view == "head":
            teacher.page.predict(code, 0, api_name="/class_ask")
        else:
            teacher.page.predict(code, api_name="/class_ask_demo")
        projector = []  # (sent, replied) of each teacher's poll
        deadline = time.perf_counter() + 30
        while time.perf_counter() < deadline and len(answers) < len(devices):
            sent = time.perf_counter()
            teacher.tick(code, "teacher")
            projector.append((sent, time.perf_counter()))
            time.sleep(max(0.0, args.poll - (time.perf_counter() - sent)))
        sent = time.perf_counter()
        teacher.tick(code, "teacher")
        projector.append((sent, time.perf_counter()))
        profiles.append(spy("reveal"))
        teacher.page.predict(code, api_name="/class_reveal")
        revealed_at = time.perf_counter()
        deadline = revealed_at + 30
        while time.perf_counter() < deadline and not all("reveal" in d.first for d in devices):
            time.sleep(0.05)
        stop.set()
        [t.join() for t in loops]
        [p.spy.wait() for p in profiles if p is not None]
        cpu = cpu_seconds(server.proc.pid) - cpu0
        session_passes = passes(count_file) - passes0
        seen_answers = [next(r for s, r in projector if s >= at) - at for _, at in answers
                        if any(s >= at for s, _ in projector)]
        errors = [e for d in devices for e in d.errors]
        print(f"join:                 {stats(joins)}; refused {len(refused)}" + (f": {refused[:2]}" if refused else ""))
        print(f"push -> device:       {stats([d.first['figure'] - pushed_at for d in devices if 'figure' in d.first])}")
        print(f"answer -> projector:  {stats(seen_answers)}; answers {len(answers)} of {len(devices)}")
        revealed = [d.first["reveal"] - revealed_at for d in devices if "reveal" in d.first]
        print(f"reveal -> device:     {stats(revealed)}")
        print("bytes a device received: " + "; ".join(
            f"{step} {stats_bytes([d.bytes[s] for d in devices if s in d.bytes])}"
            for step, s in (("push", "figure"), ("reveal", "reveal"))))
        print(f"errors: {len(errors)}" + (f" (first: {errors[0]})" if errors else ""))
        print(f"server CPU: {cpu:.1f} s over the session; model passes: {push_passes} for the push, "
              f"{session_passes} in the whole session after the teacher's record; load average {loadavg()}")
        teacher.page.predict(code, api_name="/class_end")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
