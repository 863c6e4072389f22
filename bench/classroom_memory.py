"""Where a classroom's memory goes: the server's resident size while 20 clients ask for heatmaps (issue 18).

    nice -n 10 python bench/classroom_memory.py                  # 20 clients, 150 s
    nice -n 10 python bench/classroom_memory.py --seconds 60 --clients 10

Starts the app of this checkout in a subprocess on 127.0.0.1 (bench/load.py's driver), opens the five classroom
inputs once, then runs bench/hostile_load.py's classroom (each client: "Show attention", then a redraw at a random
layer and head, without pause) for `--seconds`, and prints the server's resident size every 10 s with the number
of requests so far, then 35 s after the load (past one sweep of the app's memory return). A leak grows with the
requests; a high-water mark does not. Last, the memory mappings that grew by 8 MB or more, with their permissions
and file, to say whose memory it is (glibc's heap, a library's own allocator, a thread's stack).

Found with it: gradio filing updated components under new ids in each session (server.session_state) and pyarrow's
mimalloc pool keeping pandas' freed strings (store.memory.arrow_on_malloc); bench/RESULTS.md has the figures.
"""
from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_load import Tally, classroom, open_inputs, rss_mb, serve_in_fresh_cache  # noqa: E402
from load import INPUTS, loadavg  # noqa: E402


def mappings(pid: int) -> dict[tuple[str, str], int]:
    """Resident MB of each mapping of the process, keyed by (start address, permissions + file)."""
    found, key = {}, None
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        parts = line.split()
        if "-" in parts[0] and not parts[0].endswith(":"):
            key = (parts[0].split("-")[0], " ".join([parts[1], *parts[5:6]]))
        elif parts[0] == "Rss:" and key is not None:
            found[key] = int(parts[1]) // 1024
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=150)
    args = parser.parse_args()
    server, _ = serve_in_fresh_cache("classroom-memory-")
    try:
        url = server.wait_ready(600)
        open_inputs(url, INPUTS)
        pid = server.proc.pid
        start, before = rss_mb(pid), mappings(pid)
        print(f"start: {start:.0f} MB", flush=True)
        tally, t0 = Tally(), time.perf_counter()
        end = t0 + args.seconds
        threads = [threading.Thread(target=classroom, args=(i, url, tally, end), daemon=True)
                   for i in range(args.clients)]
        for t in threads:
            t.start()
        while time.perf_counter() < end:
            time.sleep(10)
            requests = sum(len(v) for v in tally.ms.values())
            rss = rss_mb(pid)
            print(f"{time.perf_counter() - t0:5.0f} s: {requests:6,d} requests, {rss:5.0f} MB ({rss - start:+.0f})",
                  flush=True)
        for t in threads:
            t.join(120)
        time.sleep(35)
        rss, after = rss_mb(pid), mappings(pid)
        print(f"35 s after the load: {rss:.0f} MB ({rss - start:+.0f}); peak {rss_mb(pid, 'VmHWM'):.0f} MB; "
              f"errors {sum(map(len, tally.errors.values()))}; load average {loadavg()}")
        grown = sorted(((mb - before.get(key, 0), key) for key, mb in after.items()), reverse=True)
        for mb, (address, what) in grown:
            if mb >= 8:
                print(f"  {mb:+5d} MB  {address}  {what if ' ' in what else what + ' anonymous'}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
