"""What a teacher waits for: cold start of `python app.py` and the server round trip of a heatmap redraw.

    python bench/app_latency.py
(browser-side redraw and time to the first training point are printed by the browser tests:
 python -m pytest tests/browser -q)
"""
import os
import statistics
import subprocess
import sys
import time
import urllib.request

import timing  # noqa: F401  (puts the repository on sys.path)

PORT = 7871


def wait_until_serving(url: str, limit_s: float = 60) -> float:
    start = time.perf_counter()
    while time.perf_counter() - start < limit_s:
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                if r.status == 200:
                    return time.perf_counter() - start
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"the app did not answer within {limit_s} s")


def main():
    from gradio_client import Client

    env = {**os.environ, "GRADIO_SERVER_PORT": str(PORT), "GRADIO_ANALYTICS_ENABLED": "False"}
    url = f"http://127.0.0.1:{PORT}/"
    start = time.perf_counter()
    server = subprocess.Popen([sys.executable, str(timing.ROOT / "app.py")], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        wait_until_serving(url)
        print(f"cold start (python app.py -> first page served): {time.perf_counter() - start:.1f} s")
        client = Client(url, verbose=False)
        t0 = time.perf_counter()
        client.predict("reverse", "attention", "", api_name="/attention")
        print(f"first attention request (loads the checkpoint): {(time.perf_counter() - t0) * 1e3:.0f} ms")
        for api, args in (("/draw_head", ("cross", 0, 1)), ("/draw_layer", ("cross", 1, 0)),
                          ("/draw_overview", ("cross", "entropy"))):
            times = []
            for i in range(10):
                t0 = time.perf_counter()
                client.predict(*args, api_name=api)
                times.append(time.perf_counter() - t0)
            print(f"{api:15s} server round trip: median {statistics.median(times) * 1e3:.0f} ms of 10")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
