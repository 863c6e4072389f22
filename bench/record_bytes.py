"""What one attention record holds, and what its views' q, k and v hold beside it (issue 41 item 2's follow-up,
issue 37 item 4): held_bytes (store.record_cache) of a record of a 2,000-character input cut to 64 tokens, as the
Attention tab makes it, and of record_inside of that record (one more pass: every attention layer's q, k and v,
kept apart by tabs.attention.record.INSIDES), on the shipped translate-en-es and shakespeare-char checkpoints and a
GPT-2-small-shaped model (random weights, the shapes are what count). The records are what every session's
gr.State and the shipped records' cache (limits.SHIPPED_RECORDS) keep by count.

    PYTHONPATH=. nice -n 10 python bench/record_bytes.py
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from deeper_views import gpt2_small_shaped  # noqa: E402
from limits import ATTENTION_CAP, SHIPPED_RECORDS  # noqa: E402
from store.catalogue import ModelRef  # noqa: E402
from store.record_cache import held_bytes  # noqa: E402
from transformer.interpretability.probe import record_attention, record_ids, record_inside  # noqa: E402

LONG = ("In the beginning God created the heaven and the earth. " * 40)[:2000]


def main():
    print(f"{'model':30} {'tokens':>7} {'record MB':>10} {'inside MB':>10} {SHIPPED_RECORDS} records MB")
    for name in ["translate-en-es", "shakespeare-char", "GPT-2-small-shaped (random)"]:
        if name.startswith("GPT-2"):
            model, tok = gpt2_small_shaped()
            record = record_ids(model, tok, list(range(1000, 1000 + ATTENTION_CAP)))
        else:
            model, tok, _ = ModelRef(name).load()
            record = record_attention(model, tok, LONG, max_tokens=ATTENTION_CAP)
        record_mb, inside_mb = held_bytes(record) / 1e6, held_bytes(record_inside(model, record)) / 1e6
        print(f"{name:30} {len(record.input_ids):7} {record_mb:10.2f} {inside_mb:10.2f} "
              f"{SHIPPED_RECORDS * record_mb:10.0f}")


if __name__ == "__main__":
    main()
