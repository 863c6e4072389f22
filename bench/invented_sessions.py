"""What a client inventing session ids costs the server (issue 18).

    python bench/invented_sessions.py                     # 3,000 ids, the app's limit (limits.SESSIONS)
    python bench/invented_sessions.py --capacity 10000    # gradio's default: every session kept

Launches the app in this process on 127.0.0.1 and sends `--sessions` component calls, each naming a new session
(a call to a function that does not exist: refused with 404, but gradio has made the session's state by then).
Prints how many sessions the server keeps and how much its resident size grew.
"""
from __future__ import annotations

import argparse
import gc
import sys
import uuid
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main():
    import app
    from limits import SESSIONS

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=3000)
    parser.add_argument("--capacity", type=int, default=SESSIONS, help="state_session_capacity to launch with")
    args = parser.parse_args()
    demo, (_, url, _) = app.launch(server_name="127.0.0.1", server_port=None, prevent_thread_lock=True, quiet=True,
                                   state_session_capacity=args.capacity)
    try:
        component, start = next(iter(demo.blocks)), rss_mb()
        with httpx.Client(timeout=30) as http:
            for _ in range(args.sessions):
                http.post(url + "gradio_api/component_server", json={
                    "session_hash": uuid.uuid4().hex, "component_id": component, "fn_name": "none", "data": None})
        gc.collect()
        print(f"capacity {args.capacity}: {args.sessions:,} invented sessions, "
              f"{len(demo.state_holder.session_data):,} kept, resident size {rss_mb() - start:+.0f} MB")
    finally:
        demo.close()


if __name__ == "__main__":
    main()
