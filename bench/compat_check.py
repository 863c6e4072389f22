"""What server.compat's check of gradio's internals costs the app's start (issue 41, item 6).

    python bench/compat_check.py            # 5 warm runs after the cold one
    python bench/compat_check.py --runs 10

Runs `server.compat.check()` as app.launch does (first, before the page is built: the process's first Blocks), then
builds the page, then runs the check again `--runs` times warm. Prints each time in seconds (wall and this process's
CPU: the check is single-threaded but for gradio's thread pool, so CPU shows its cost on a shared machine) and the
machine's load average.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")


def timed(fn) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    import app
    from server import compat

    cold = timed(compat.check)
    build = timed(app.build_demo)
    warm = sorted(timed(compat.check) for _ in range(runs))
    print(f"check, cold (before the build): {cold[0]:.3f} s wall, {cold[1]:.3f} s CPU")
    print(f"check, warm (median of {runs}): {warm[runs // 2][0]:.3f} s wall, {warm[runs // 2][1]:.3f} s CPU "
          f"(min {warm[0][0]:.3f}, max {warm[-1][0]:.3f} s wall)")
    print(f"build_demo: {build[0]:.2f} s wall; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
