"""What a client inventing root URLs costs the server (issue 37, item 3).

    python bench/config_roots.py                        # 200 invented roots, the app's budget (limits.CONFIG_ROOTS)
    python bench/config_roots.py --per-minute 100000    # no budget: every invented root is built (as before)

Launches the app in this process on 127.0.0.1 and sends `--roots` `GET /config`, each with a new X-Forwarded-Host
(gradio builds a config for each root it has not kept: a deep copy of the whole page), then one honest GET from the
same address. Prints
how many were built and refused, the CPU seconds of this process over the run (the server's, with the client's few
ms), and the honest answer's root.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main():
    import app
    from limits import CONFIG_ROOTS
    from server import guard

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--roots", type=int, default=200)
    parser.add_argument("--per-minute", type=int, default=CONFIG_ROOTS["per_address_per_minute"])
    args = parser.parse_args()
    guard.CONFIG_ROOTS = {**CONFIG_ROOTS, "per_address_per_minute": args.per_minute}
    demo, (_, url, _) = app.launch(server_name="127.0.0.1", server_port=None, prevent_thread_lock=True, quiet=True)
    try:
        with httpx.Client(timeout=60) as http:
            http.get(url + "config")  # the honest root, kept
            cpu, wall, statuses = time.process_time(), time.perf_counter(), []
            for i in range(args.roots):
                statuses.append(http.get(url + "config", headers={"X-Forwarded-Host": f"r{i}.example"}).status_code)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            honest = http.get(url + "config")
            honest = honest.json().get("root") if honest.status_code == 200 else f"{honest.status_code} (loopback is " \
                "one address: its budget is the flood's; on a Space an honest client has an address of its own)"
        print(f"budget {args.per_minute}/min per address: {args.roots} invented roots, {statuses.count(200)} built, "
              f"{statuses.count(429)} refused (429), "
              f"other {len(statuses) - statuses.count(200) - statuses.count(429)}; "
              f"CPU {cpu:.2f} s ({1000 * cpu / args.roots:.1f} ms per request) in {wall:.1f} s; "
              f"honest root after: {honest}")
    finally:
        demo.close()


if __name__ == "__main__":
    main()
