"""Where a server's CPU went, from py-spy's raw samples (bench/hostile_load.py --profile writes them):

    python bench/profile_stacks.py /tmp/prof.txt [--top 12] [--where 'gradio/queueing.py']

py-spy samples (without --idle) only the threads running Python on a CPU at that moment; each sample is one line
`thread (ID): NAME;frame;frame;... COUNT`. Printed: the samples by thread kind (the event loop, gradio's worker
threads, ...), by what the app was doing (the first matching rule of WHAT, read from the stack's root), and the
functions most often on top of the stack (self) and on it at all (total) in each of the largest parts; with
`--where`, only the samples whose stack holds that text.
"""
from __future__ import annotations

import argparse
import re
from collections import Counter

# what a sample was doing: the first rule whose text is in its stack (from the root) names it
WHAT = [("training", ("tabs/train/", "transformer/train/")),
        ("Show attention: greedy decoding of a translation", ("record_attention.<locals>.<listcomp>",)),
        ("Show attention: the record's forward pass", ("compute_attention", "compute_and_draw", "record_on_gpu")),
        ("redraw (figures)", ("draw_", "visualize/")),
        ("a new session's copy of the page's config (gradio's SessionState)", ("SessionState.__init__",)),
        ("the page's config for a new Client (/config)", ("App.create_app.<locals>.get_config",)),
        ("looking for matplotlib and bokeh (gradio, per call)", ("MatplotlibBackendMananger", "Plot.get_config")),
        ("gradio's queue and SSE", ("gradio/queueing.py", "gradio/routes.py", "gradio/route_utils.py")),
        ("the app's admission (server/)", ("server/",)),
        ("HTTP (uvicorn, starlette)", ("uvicorn/", "starlette/", "h11", "httptools")),
        ("the event loop itself", ("asyncio/",))]


def samples(path: str):
    """(thread name, frames from the root, count) per line of a py-spy raw file."""
    for line in open(path):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        head, _, rest = stack.partition(";")
        name = re.sub(r"^thread \(\w+\):\s*", "", head) or "?"
        yield name, rest.split(";") if rest else [], int(count)


def kind_of(frames: list[str]) -> str:
    text = ";".join(frames)
    return next((what for what, marks in WHAT if any(m in text for m in marks)), "other")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path")
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--where", default="", help="only samples whose stack holds this text")
    args = parser.parse_args()
    threads, kinds, own, on = Counter(), Counter(), {}, {}
    for name, frames, n in samples(args.path):
        if args.where and args.where not in ";".join(frames):
            continue
        kind = kind_of(frames)
        threads[re.sub(r"[-_ ]?\d+$", "", name)] += n
        kinds[kind] += n
        if frames:
            own.setdefault(kind, Counter())[frames[-1]] += n
            for frame in set(frames):
                on.setdefault(kind, Counter())[frame] += n
    total = sum(kinds.values()) or 1
    print(f"{total} samples{' whose stack holds ' + repr(args.where) if args.where else ''}")
    print("by thread: " + ", ".join(f"{name} {n / total:.0%}" for name, n in threads.most_common()))
    print("by what the app was doing:")
    for kind, n in kinds.most_common():
        print(f"  {n / total:6.1%}  {kind}")
    for kind, n in kinds.most_common(4):
        print(f"\n{kind} ({n / total:.0%}): on top of the stack")
        for frame, m in own[kind].most_common(args.top):
            print(f"  {m / total:6.1%}  {frame}")
        print("  on the stack at all")
        for frame, m in on[kind].most_common(args.top):
            print(f"  {m / total:6.1%}  {frame}")


if __name__ == "__main__":
    main()
