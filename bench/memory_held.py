"""What holds the server's memory after bench/hostile_load.py's load (issue 30, item 8): each of the app's stores
emptied in turn, and the resident size it gave back.

    nice -n 10 python bench/memory_held.py --seconds 45

The app runs in this process (tests.app_server.launch_local on 127.0.0.1, loopback only), so its stores can be
emptied; hostile_load's eviction floods, then its window with the attention flooder, run against it. After the load
(the queue drained, gc and malloc_trim), each store is emptied and the drop in resident size printed: the shipped
records, the caches of what is computed from a record (store.record_cache), the Marian comparisons, gradio's unread
messages of sessions nobody listens to, gradio's session states, the stored models. What is left above the warm
start is what no store holds: the allocator's pages kept from the load's peaks (and this process's clients').
"""
from __future__ import annotations

import argparse
import ctypes
import gc
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
os.environ["ATTENTION_LAB_TRUST_FORWARDED"] = "1"  # the floods' X-Forwarded-For addresses (loopback only)

import hostile_load as hostile  # noqa: E402
from memory_probe import mallinfo  # noqa: E402
from load import INPUTS  # noqa: E402


def settled_mb() -> float:
    """Resident MB after a full collection and glibc's malloc_trim."""
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    return hostile.rss_mb(os.getpid())


def heap() -> str:
    """glibc's heap (mallinfo2): MB in use by live allocations, MB free but kept, mmapped blocks; Python objects."""
    info = mallinfo()
    if not info:
        return "n/a"
    return (f"glibc heap: {info['in_use']:.0f} MB in use, {info['free_kept']:.0f} MB free but kept, "
            f"{info['mmapped']:.0f} MB mmapped; {len(gc.get_objects()):,} Python objects tracked")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=45)
    parser.add_argument("--clients", type=int, default=20)
    args = parser.parse_args()
    from tests.app_server import launch_local

    demo, url = launch_local()
    hostile.open_inputs(url, INPUTS + [("translate-en-es", "The cat sat on the mat.")])
    warm = settled_mb()
    print(f"warm: {heap()}", flush=True)
    tally, counts, using = hostile.Tally(), {}, threading.Event()
    hostile.keep_using(hostile.students_with_models(url), tally, using)  # hostile_load's eviction, both orders
    hostile.eviction_flood(url, 66, counts)
    hostile.eviction_flood(url, 50, counts)
    hostile.keep_using(hostile.students_with_models(url), tally, using)
    hostile.eviction_flood(url, 18, counts)
    after_floods = settled_mb()
    hostile.window(url, args, tally, counts, flooder=True)
    queue, deadline = demo._queue, time.monotonic() + 600
    while (len(queue) or any(queue.active_jobs)) and time.monotonic() < deadline:
        time.sleep(2)
    using.set()
    time.sleep(6)
    after = settled_mb()
    print(f"resident MB: warm {warm:.0f}, after the eviction floods {after_floods:.0f} ({after_floods - warm:+.0f}), "
          f"after the window {after:.0f} ({after - warm:+.0f}); flooders' answers {counts}")

    from store import catalogue
    from tabs.attention import beside, figure_cache, lens, patching, record, views

    def caches():
        held = {name: (len(c._entries), f"{c.bytes / 2**20:.1f} MiB") for name, c in (
            ("figures", figure_cache.FIGURES), ("views", views.VIEWS), ("lenses", lens.LENSES), ("patchings", patching.PATCHINGS))}
        for c in (figure_cache.FIGURES, views.VIEWS, lens.LENSES, patching.PATCHINGS):
            c.__init__(c.size, c.max_bytes)
        return held

    def models():
        browsers = catalogue.USER_MODELS._browsers
        held = f"{sum(len(b.finished()) for b in browsers.values())} models of {len(browsers)} browsers"
        browsers.clear()
        return held

    stores = [("shipped records", lambda: (len(record.SHARED_RECORDS), record.SHARED_RECORDS.clear())[0]),
              ("record caches (entries, bytes)", caches),
              ("Marian comparisons", lambda: [f.cache_clear() for f in vars(beside).values()
                                              if hasattr(f, "cache_clear")] and "cleared"),
              ("unread messages (sessions)", lambda: (len(queue.pending_messages_per_session),
                                                      queue.pending_messages_per_session.clear())[0]),
              ("session states", lambda: (len(demo.state_holder.session_data),
                                          demo.state_holder.session_data.clear())[0]),
              ("stored models", models)]
    for name, empty in stores:
        before = settled_mb()
        held = empty()
        print(f"{name:>32}: {held} -> gave back {before - settled_mb():.0f} MB")
    print(f"left above the warm start, held by no store: {settled_mb() - warm:+.0f} MB; {heap()}")
    demo.close()
    os._exit(0)  # the flood's clients' threads


if __name__ == "__main__":
    main()
