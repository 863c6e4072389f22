"""What one device's poll of a class costs the server, step by step (issue 39): 40 students' pages polled one after
another (no two at once, so each figure is one poll's own), as the page's timer does.

    nice -n 10 python bench/class_poll_cost.py [--view head|patching|sinusoids] [--app-dir DIR]

The app of `--app-dir` (default: this checkout; another tree, e.g. `git archive REV | tar -x -C DIR`, to compare)
in a subprocess on 127.0.0.1 (bench/load.py's driver); a teacher starts a class and computes the view
(bench/class_session.py's VIEWS), 40 students join. Then, for each step (nothing new, the push, nothing new, the
question, the answers, nothing new, the reveal, nothing new), every student's page takes one period of its timer
(bench/class_session.Device.tick: /class_stamp, and /class_poll when the stamp changed; an app without stamps: the
poll) and the server's CPU seconds over the 40 are divided by 40. Prints per step: ms of server CPU a device, ms of
wall time a device, and the kB of the last reply a device received.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent.parent)]
import class_session as cs  # noqa: E402
from load import ROOT, Server, cpu_seconds, loadavg  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--view", choices=sorted(cs.VIEWS), default="head")
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--app-dir", type=Path, default=ROOT)
    args = parser.parse_args()
    os.environ["ATTENTION_LAB_TRUST_FORWARDED"] = "1"
    server = Server(args.app_dir.resolve(), 0, 0.0, Path(tempfile.mkdtemp(prefix="class-cost-")) / "server.log")
    url = server.wait_ready(300)
    print(f"app of {args.app_dir} at {url}; view {args.view}; load average {loadavg()}", flush=True)
    try:
        teacher = cs.Device(url, 120, "198.51.100.1")
        code = teacher.page.predict("", api_name="/class_start")[0]
        shown = cs.VIEWS[args.view]
        if shown["text"]:
            teacher.client.predict(shown["ckpt"], shown["text"], "", api_name="/attention")
        if shown["text_b"]:
            teacher.client.predict(shown["text_b"], api_name="/compare_inputs")
            teacher.client.predict(shown["view"][0], 0, 0, "", "", -1, api_name="/patching")
        students = [cs.Device(url, 120) for _ in range(args.students)]
        for student in students:
            student.page.predict(code, api_name="/class_join")

        def each(label: str, call) -> None:
            cpu, wall, received = cpu_seconds(server.proc.pid), time.perf_counter(), 0
            for student in students:
                call(student)
                received += student.page.received
            n = len(students)
            print(f"{label:28s} {1000 * (cpu_seconds(server.proc.pid) - cpu) / n:6.1f} ms CPU a device, "
                  f"{1000 * (time.perf_counter() - wall) / n:6.1f} ms wall, {received / n / 1000:6.1f} kB a device",
                  flush=True)

        def tick(student):
            student.tick(code)

        def answer(student):
            student.page.predict(code, student.choices[0], api_name="/class_answer")
        each("nothing new (first look)", tick)
        teacher.page.predict(code, None, None, None, *shown["view"], shown["which"], None, None, "", "", -1, 128, 100,
                             api_name="/class_push")
        each("push", tick)
        each("nothing new", tick)
        if args.view == "head":
            teacher.page.predict(code, 0, api_name="/class_ask")
        else:
            teacher.page.predict(code, api_name="/class_ask_demo")
        each("question", tick)
        each("answer", answer)
        each("nothing new", tick)
        teacher.page.predict(code, api_name="/class_reveal")
        each("reveal", tick)
        each("nothing new", tick)
        print(f"load average {loadavg()}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
