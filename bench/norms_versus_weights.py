"""Where the value-weighted norms look most unlike the weights, on the shipped checkpoints (issue 29, item 12).

For every checkpoint, a few inputs (each demo's, and others of the kind the model was trained on), every kind of
attention, layer and head: transformer.interpretability.views.moved_share of the weights and the value-weighted
norms (Kobayashi et al. 2020), in tokens: the share of each row's attention the norms put elsewhere, averaged over
the text queries (0 = the same map, 1 = nothing in common). Also the largest change of one cell. Prints the heads
where they disagree most, overall and per checkpoint, and the demo heads' figures: a demo of the norms switch
should open one of the first.

    python bench/norms_versus_weights.py [--top 12]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from transformer import load_checkpoint  # noqa: E402
from transformer.interpretability.probe import record_attention, record_inside  # noqa: E402
from transformer.interpretability.value_norms import value_weighted_norms  # noqa: E402
from transformer.interpretability.views import displayed_pattern, most_moved_head, moved_share  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ACTS_13_52 = ("The disciples were filled with joy and with the Holy Spirit.",
              "Y los discípulos estaban llenos de gozo, y del Espíritu Santo.")
INPUTS = {  # checkpoint -> [(input, target or "")]; the first of each is its demo's input where it has one
    "reverse": [("attention", ""), ("attentionisallyouneed", "")],
    "sort": [("attention", ""), ("transformer", "")],
    "dates": [("March 3, 2021", ""), ("December 25, 1999", "")],
    "induction": [("kqwzjxtbhmfa" * 2, ""), ("Xq7LbR2mKdZ9wPf" * 2, "")],
    "shakespeare-char": [("To be, or not to be, that is the question", ""),
                         ("ROMEO: But soft, what light through yonder window breaks?", ""),
                         ("First Citizen:\nBefore we proceed any further, hear me speak.", "")],
    "translate-en-es": [ACTS_13_52, ("In the beginning God created the heavens and the earth.", ""),
                        ("Jesus wept.", "")],
}
DEMO_HEADS = [("shakespeare-char", 0, "decoder self", 0, 0), ("induction", 0, "decoder self", 1, 0),
              ("translate-en-es", 0, "cross", 2, 0)]  # the heads the issue measured (largest cell change)


def measure() -> list[dict]:
    """One row per checkpoint, input, kind, layer and head; `picked` on the head of each input that
    transformer.interpretability.views.most_moved_head picks (the largest moved share over its kinds)."""
    rows = []
    for name, inputs in INPUTS.items():
        model, tok, _ = load_checkpoint(ROOT / "checkpoints" / name, device="cpu")
        for i, (text, target) in enumerate(inputs):
            record = record_attention(model, tok, text, target or None)
            inside = record_inside(model, record)
            by_kind = {kind: value_weighted_norms(model, record, inside, kind) for kind in record.patterns}
            picked = most_moved_head(record.patterns, by_kind)[:3]  # what a demo of the norms switch opens
            for kind, pattern in record.patterns.items():
                norms = displayed_pattern(pattern, by_kind[kind])
                moved = moved_share(pattern, norms)  # (L, H)
                rows_ = torch.as_tensor(pattern.query_text, dtype=torch.long)
                cell = (pattern.weights[:, :, rows_] - norms.weights[:, :, rows_]).abs().amax((-2, -1))  # (L, H)
                L, H = moved.shape
                rows += [dict(checkpoint=name, input=i, text=text, kind=kind, layer=layer, head=head,
                              moved=float(moved[layer, head]), cell=float(cell[layer, head]),
                              picked=(kind, layer, head) == picked)
                         for layer in range(L) for head in range(H)]
    return rows


def _line(r: dict) -> str:
    return (f"| {r['checkpoint']} | {r['text'][:40]!r} | {r['kind']} | L{r['layer']}H{r['head']} | "
            f"{r['moved']:.3f} | {r['cell']:.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = measure()
    header = "| checkpoint | input | kind | head | moved share | largest cell change |\n|---|---|---|---|---|---|"
    print(f"Most different, of {len(rows)} heads x inputs:\n{header}")
    for r in sorted(rows, key=lambda r: -r["moved"])[:args.top]:
        print(_line(r))
    print(f"\nMost different per checkpoint:\n{header}")
    for name in INPUTS:
        print(_line(max((r for r in rows if r["checkpoint"] == name), key=lambda r: r["moved"])))
    print(f"\nThe head the demo 'Weights or what moves' opens (most_moved_head of Acts 13:52):\n{header}")
    print(_line(next(r for r in rows if r["checkpoint"] == "translate-en-es" and r["input"] == 0 and r["picked"])))
    print(f"\nThe heads the issue measured (its demo inputs):\n{header}")
    for name, i, kind, layer, head in DEMO_HEADS:
        print(_line(next(r for r in rows if (r["checkpoint"], r["input"], r["kind"], r["layer"], r["head"])
                         == (name, i, kind, layer, head))))


if __name__ == "__main__":
    main()
