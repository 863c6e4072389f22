"""What one demo click costs (issue 26 item 5, issue 29 item 11): in a real chromium at 1280x800 and 390x844, after a
click on "Who reads whom?" (and on "Show attention" with the demo's input), the server calls the page
sets off, the plotly figures it draws, the long main-thread tasks (> 50 ms, PerformanceObserver 'longtask'), the
main thread's CPU time (DevTools' ThreadTime: it grows much less than the long tasks' wall time when other processes
load the machine), the values the page deep-copies (structuredClone calls: tests/browser/click_cost.py) and how
often the server computed each view of the translation record.

    python bench/demo_click_cost.py [--rounds 3]

The counts are asserted by tests/browser/test_translation_demo.py and tests/app/test_view_memo.py; the milliseconds are
only printed here (the tests never assert a time on a shared machine).
"""
from __future__ import annotations

import argparse
import os
import statistics

import timing  # noqa: F401  (puts the repository on sys.path)

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

LABEL = "Who reads whom?"


def counted_functions():
    from transformer.interpretability.analysis import head_scores
    from transformer.interpretability.views import pattern_in_words
    from transformer.translation.gold import aer_per_head, cross_words, verse_of

    return cross_words, verse_of, aer_per_head, head_scores, pattern_in_words


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="clicks of each kind at each size")
    args = parser.parse_args()
    from playwright import sync_api

    from tests.app_server import serve_app
    from tests.browser import click_cost, tour
    from tests.call_counts import counting

    print(timing.machine_header("one demo click: server calls, figures drawn, long tasks"))
    with serve_app() as url, sync_api.sync_playwright() as p:
        browser = tour.launch_browser(p)
        names = click_cost.event_names(url)
        for width, size in tour.SIZES.items():
            page, _ = tour.new_page(browser)
            page.set_viewport_size(size)
            click_cost.watch(page)
            clock = click_cost.cpu_clock(page)
            tour.open_app(page, url)
            for tab in ("generate", "model", "positional", "attention"):  # as a class does: every tab seen once
                tour.visit(page, tab)
            page.wait_for_timeout(3000)  # the page's first heatmap and its load events
            for kind, click in (("demo", click_cost.drawn_after(page, lambda: tour.click_demo(page, LABEL))),
                                ("show", click_cost.drawn_after(page, lambda: page.locator("#att-show").click()))):
                longs, plots, cpus, copies = [], [], [], []
                for r in range(args.rounds):
                    if kind == "demo" and r:  # a demo click on a fresh page state: another demo between
                        click_cost.measure(page, click_cost.drawn_after(page, lambda: tour.click_demo(
                            page, "Reading backwards")), names, quiet_s=1.5)
                    with counting(*counted_functions()) as calls:
                        cost = click_cost.measure(page, click, names, clock=clock)
                    longs.append(cost.long_ms)
                    plots.append(cost.draw_ms)
                    cpus.append(cost.cpu_ms)
                    copies.append(cost.copies)
                    print(f"{width} {kind} click {r + 1}: {cost.describe()}; server computed {dict(calls.total)}, "
                          f"{sum(calls.repeats.values())} of them again on the same input")
                print(f"== {width}x{size['height']} {kind}: long tasks median {statistics.median(longs):.0f} ms "
                      f"(min {min(longs):.0f}, max {max(longs):.0f}) over {len(longs)} clicks; of which in "
                      f"Plotly.react {statistics.median(plots):.0f} ms; main thread CPU median "
                      f"{statistics.median(cpus):.0f} ms; values deep-copied median {statistics.median(copies):.0f}; "
                      f"load average {os.getloadavg()[0]:.1f}")
            page.close()
        browser.close()


if __name__ == "__main__":
    main()
