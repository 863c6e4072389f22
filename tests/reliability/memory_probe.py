"""Train once through the Train tab's handler in a fresh process set up as the app sets itself up (glibc told to
keep freed memory), and print the resident size before, at the peak and after, in MB, as JSON (run by
test_memory_returned.py)."""
from __future__ import annotations

import json
import os
import resource
import sys


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> int:
    import torch

    torch.set_num_threads(1)
    import app
    from tabs.train.page import run_train

    app.keep_freed_memory()
    app.warm_up()
    start = rss_mb()
    from tests.conftest import page_call

    request = page_call("0123456789abcdef0123456789abcdef")  # the key comes from the page's cookie (issue 30)
    asked = dict(source="task", task="reverse", text="", upload=None, hub="", layers=4, heads=4, d_model=256, lr=1e-3,
                 steps=10, batch_size=256)  # the TrainingRequest's fields, as the Train tab's controls give them
    for _ in run_train(request=request, **asked):
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("MEMORY=" + json.dumps({"start": start, "peak": peak, "end": rss_mb()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
