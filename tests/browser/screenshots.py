"""Screenshots of every tab of the real app, for the README: `python -m tests.browser.screenshots docs/screenshots`.

Starts the app on 127.0.0.1, opens it in Debian's chromium with every outside request aborted, and runs the same
tour functions as the browser tests (tests/browser/tour.py), saving one PNG per tab: generate.png, attention.png,
positional.png, train.png, model.png. The Train tab trains for --train-seconds before pressing Stop, so the picture
shows a falling loss curve and the first evaluation.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.browser.screenshots", description=__doc__.split("\n")[0])
    parser.add_argument("out_dir", type=Path, help="folder for the PNGs (created if missing)")
    parser.add_argument("--train-seconds", type=float, default=20.0,
                        help="how long the Train tab trains before Stop (default 20)")
    args = parser.parse_args(argv)

    from playwright.sync_api import sync_playwright

    from tests.app_server import serve_app
    from tests.browser import tour

    started = time.perf_counter()
    with serve_app() as url, sync_playwright() as p:
        browser = tour.launch_browser(p)
        try:
            page, guard = tour.new_page(browser)
            tour.open_app(page, url)
            for key, run in tour.TOURS.items():
                seen = run(page, seconds=args.train_seconds) if key == "train" else run(page)
                path = tour.screenshot(page, args.out_dir / f"{key}.png")
                print(f"{path}  ({'; '.join(seen.get('plot_titles', []))})")
            print(f"blocked outside requests: {guard.blocked or 'none'}")
        finally:
            browser.close()
    print(f"took {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
