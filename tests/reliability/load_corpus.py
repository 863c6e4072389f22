"""Load checkpoint directories under a memory cap and report each outcome as a JSON line (run by
test_hostile_checkpoints.py in a subprocess).

    python tests/reliability/load_corpus.py CAP_BYTES CONTROL_DIR CASE_DIR...

The address space is capped before torch is imported, so a load that tries a large allocation fails (a
RuntimeError or MemoryError, not a CheckpointError) instead of exhausting the machine. The control directory, a
valid checkpoint, is loaded first: it proves that the cap leaves room for a real load, and it pays the one-time
costs (imports) so that each case's time is its own. A last line reports whether the cap really stops a 4 GB
allocation.
"""
import json
import resource
import sys
import time

cap = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

import torch  # noqa: E402  (after the cap)

torch.set_num_threads(1)

from transformer.checkpoint import CheckpointError, load_checkpoint  # noqa: E402


def outcome(path: str) -> dict:
    start = time.perf_counter()
    try:
        load_checkpoint(path, device="cpu")
        result = {"outcome": "loaded", "message": ""}
    except CheckpointError as e:
        result = {"outcome": "CheckpointError", "message": str(e)}
    except BaseException as e:  # noqa: BLE001  (any other outcome is what the test reports)
        result = {"outcome": type(e).__name__, "message": str(e)[:500]}
    return {"path": path, "seconds": time.perf_counter() - start, **result}


for path in sys.argv[2:]:
    print(json.dumps(outcome(path)), flush=True)
try:
    torch.empty(2**30, dtype=torch.float32).fill_(1.0)
    capped = False
except (RuntimeError, MemoryError):
    capped = True
print(json.dumps({"path": "<4 GB allocation>", "capped": capped,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}), flush=True)
