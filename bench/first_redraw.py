"""What a first redraw of a head costs the server's CPU, in-process (the figures of a head not drawn yet: its heatmap,
its layer's grid once per layer, the overview once), for the app of a checkout:

    nice -n 10 python bench/first_redraw.py                 # this checkout
    nice -n 10 python bench/first_redraw.py /tmp/before     # another (git worktree add --detach /tmp/before REV)

Two classroom inputs of bench/load.py (reverse, shakespeare-char), each record's 2 layers x 4 heads drawn once
through tabs.attention.figure_cache.draw_cached after a warm-up input of each model; CPU time of this process
(time.process_time), so the machine's load moves it little.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

APP = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent).resolve()


def main():
    os.chdir(APP)
    sys.path.insert(0, str(APP))
    os.environ["HF_HUB_OFFLINE"] = "1"
    from tabs.attention.figure_cache import draw_cached
    from tabs.attention.record import attention_record

    def kind_of(record):
        return "cross" if "cross" in record.kinds else record.kinds[0]

    for ckpt, text in [("reverse", "warmup"), ("shakespeare-char", "Warm up")]:
        record = attention_record(ckpt, text, "", "")
        draw_cached(record, kind_of(record), 0, 0, "entropy")
    for ckpt, text in [("reverse", "attention"), ("shakespeare-char", "To be, or not to be")]:
        record, heads, t0 = attention_record(ckpt, text, "", ""), [(layer, head) for layer in range(2)
                                                                    for head in range(4)], time.process_time()
        for layer, head in heads:
            draw_cached(record, kind_of(record), layer, head, "entropy")
        print(f"{ckpt}: {(time.process_time() - t0) / len(heads) * 1e3:.1f} ms of CPU per first redraw of a head "
              f"({len(heads)} heads, 2 layers' grids, 1 overview)")


if __name__ == "__main__":
    main()
