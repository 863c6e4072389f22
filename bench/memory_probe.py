"""What the app process holds, read from inside it (bench only, never imported by the app): glibc's heap, Python's
small-object arenas, tracemalloc's largest holders, gradio's sessions and queue, and each malloc_trim the app made.

bench/held_memory.py --probe starts the app as `python -c "import memory_probe; memory_probe.serve(path, trace)"`:
`serve` wraps store.memory.return_freed_memory (before app imports it) to log when each trim runs, what it returns
and the resident size before and after, optionally starts tracemalloc at the first report, launches the app and writes a report (JSON)
to `path` at each SIGUSR1 (`report` names what it holds). The bench reads it: `ask(pid, path)`.
"""
from __future__ import annotations

import ctypes
import gc
import json
import os
import signal
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRIMS: list[dict] = []  # each malloc_trim of the app: when (monotonic s), returned, RSS MB before and after
DEMO = {}
TRACE = {"on": False}


class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                     "fsmblks", "uordblks", "fordblks", "keepcost")]


def mallinfo() -> dict:
    """glibc's heap (mallinfo2), MB: in use by live allocations, free but kept, mmapped blocks, the heap's size."""
    try:
        call = ctypes.CDLL("libc.so.6").mallinfo2
    except (OSError, AttributeError):
        return {}
    call.restype = MallInfo2
    info = call()
    return {"in_use": info.uordblks / 2**20, "free_kept": info.fordblks / 2**20, "mmapped": info.hblkhd / 2**20,
            "heap": info.arena / 2**20, "top_free": info.keepcost / 2**20}


def rss_mb(pid: int | str = "self", field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def pymalloc() -> dict:
    """Python's small-object allocator (sys._debugmallocstats, which writes to fd 2): arenas and their bytes."""
    with tempfile.TemporaryFile("w+") as out:
        saved = os.dup(2)
        os.dup2(out.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        lines = out.read().splitlines()
    wanted = {"# arenas allocated current": "arenas", "# bytes in allocated blocks": "allocated_bytes",
              "# bytes in available blocks": "free_block_bytes", "Total": "total_bytes"}
    found = {}
    for line in lines:
        name, _, value = line.rpartition("=")
        for prefix, key in wanted.items():
            if name.strip().startswith(prefix) and key not in found:
                found[key] = int(value.strip().replace(",", ""))
    return found


def gradio_holds() -> dict:
    """What gradio keeps per session and in its queue: sessions, the bytes of the values they hold (counted as
    server.held_inputs counts them), unread messages, events."""
    demo = DEMO.get("demo")
    if demo is None:
        return {}
    from server.held_inputs import held_value, value_bytes
    holder = demo.state_holder
    held = 0
    for state in list(holder.session_data.values()):
        configs = state.config_values
        held += sum(value_bytes(held_value(configs, key)) for key in list(dict.keys(configs)))
    queue = demo._queue
    messages = sum(m.qsize() for m in getattr(queue, "pending_messages_per_session", {}).values())
    return {"sessions": len(holder.session_data), "held_values_mb": held / 2**20, "unread_messages": messages,
            "events": len(getattr(queue, "event_ids_to_events", {}))}


def large_holders(least: int = 4 << 20, depth: int = 5) -> list[dict]:
    """The str and bytes objects of at least `least` bytes still alive, each with a chain of what refers to it
    (the first referrer of each step that is not a frame or this module's own list): who keeps a request's body."""
    found = []
    for holder in gc.get_objects():
        items = holder.values() if isinstance(holder, dict) else holder if isinstance(holder, (list, tuple)) else (
            [holder.cell_contents] if type(holder).__name__ == "cell" and _filled(holder) else [])
        for item in list(items):
            if isinstance(item, (str, bytes)) and len(item) >= least and all(item is not f["object"] for f in found):
                found.append({"object": item, "mb": len(item) / 2**20, "type": type(item).__name__})
    for entry in found:
        chain, current = [], entry.pop("object")
        for _ in range(depth):
            referrers = [r for r in gc.get_referrers(current)
                         if r is not found and type(r).__name__ not in ("frame", "list_iterator")]
            if not referrers:
                break
            current = referrers[0]
            name = type(current).__name__
            if name == "function":
                name += f" {current.__qualname__}"
            elif name == "dict":
                owner = [r for r in gc.get_referrers(current) if hasattr(r, "__dict__") and r.__dict__ is current]
                name += f" of {type(owner[0]).__qualname__}" if owner else ""
            chain.append(name)
        entry["held_by"] = chain
    return found


def _filled(cell) -> bool:
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


def report(path: str, trim: bool = False, top: int = 15) -> None:
    """Write what the process holds to `path` (JSON); with `trim`, also the resident size after a full collection
    and one more malloc_trim(0) (what the allocator kept that a trim would give back)."""
    import tracemalloc
    gc.collect()
    out = {"at": time.monotonic(), "rss": rss_mb(), "hwm": rss_mb(field="VmHWM"), "glibc": mallinfo(),
           "pymalloc": pymalloc(), "gradio": gradio_holds(), "trims": TRIMS[-6:], "large": large_holders()}
    if tracemalloc.is_tracing():
        current, peak = tracemalloc.get_traced_memory()
        stats = tracemalloc.take_snapshot().statistics("traceback")[:top]
        out["traced"] = {"current_mb": current / 2**20, "peak_mb": peak / 2**20, "top": [
            {"mb": s.size / 2**20, "blocks": s.count,
             "where": [f"{Path(f.filename).name}:{f.lineno}" for f in s.traceback][-8:]} for s in stats]}
    if TRACE["on"] and not tracemalloc.is_tracing():
        tracemalloc.start(12)
    if trim:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        out["rss_after_trim"], out["glibc_after_trim"] = rss_mb(), mallinfo()
    Path(path).write_text(json.dumps(out, indent=1))


def ask(pid: int, path: str, trim: bool = False, timeout: float = 120) -> dict:
    """Signal the app `pid` to write its report to `path` (SIGUSR2: with `trim`), and read it."""
    Path(path).unlink(missing_ok=True)
    os.kill(pid, signal.SIGUSR2 if trim else signal.SIGUSR1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            return json.loads(Path(path).read_text())
        except (OSError, ValueError):
            time.sleep(0.5)
    return {}


def serve(path: str, trace: bool) -> None:
    """Launch the app with the probe in it (trims logged, SIGUSR1 -> report to `path`) and serve until killed."""
    sys.path.insert(0, str(ROOT))
    TRACE["on"] = trace  # tracemalloc starts at the first report: it traces what a phase allocates (and cheaply)
    import store.memory
    trim = store.memory.return_freed_memory

    def logged_trim() -> bool:
        before = rss_mb()
        returned = trim()
        TRIMS.append({"at": time.monotonic(), "returned": returned, "rss_before": before, "rss_after": rss_mb()})
        return returned
    store.memory.return_freed_memory = logged_trim  # before app imports it (server.guard, tabs.train.lifecycle)
    # the report runs on a thread of its own: the signal only starts it (the main thread just sleeps)
    def reporting(trim: bool) -> None:
        try:
            report(path, trim)
        except Exception:  # noqa: BLE001 - the bench shows what failed instead of waiting for a report
            Path(path).write_text(json.dumps({"failed": traceback.format_exc()}))

    for number, trim_too in ((signal.SIGUSR1, False), (signal.SIGUSR2, True)):
        signal.signal(number, lambda *_, t=trim_too: threading.Thread(target=reporting, args=(t,)).start())
    import app
    DEMO["demo"], _ = app.launch(prevent_thread_lock=True, quiet=True)
    while True:
        time.sleep(1)
