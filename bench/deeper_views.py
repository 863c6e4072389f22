"""Server time of the Attention tab's deeper views (issue 20) on the shipped checkpoints at up to 64 tokens, and on a
GPT-2-small-shaped model (random weights: the real ones are not on this machine; same shapes, same code path).

Each view is timed as its handler computes it, without the app's caches: the library call (transformer/) and the
figures (visualize/). With one torch thread, the CPU time of the process is what the view costs whatever else the
machine runs (its wall time on a quiet machine); the wall time is printed beside it, with the load average. The
attention record the tab already holds is made once outside the timing; the forward pass a view needs of its own
(value norms, logit lens, the second input) is inside it, and so are the head scores a caption reads. Median of
--rounds runs.

    python bench/deeper_views.py [--rounds 5]
"""
from __future__ import annotations

import argparse
from dataclasses import replace
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

import visualize as viz  # noqa: E402
from transformer import Transformer, TransformerConfig, load_checkpoint  # noqa: E402
from transformer.interpretability.captions import describe_head  # noqa: E402
from transformer.interpretability.logit_lens import logit_lens  # noqa: E402
from transformer.interpretability.probe import record_attention, record_inside  # noqa: E402
from transformer.interpretability.two_inputs import head_divergence  # noqa: E402
from transformer.interpretability.value_norms import value_weighted_norms  # noqa: E402
from transformer.interpretability.views import displayed_pattern  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TEXT = {"reverse": "attentionisallyouneed", "sort": "attentionisallyouneed", "dates": "March 3, 2021",
        "induction": "Xq7LbR2mKdZ9wPfAbCdEfGhIjKlMnOpQXq7LbR2mKdZ9wPfAbCdEfGhIjKlMnOpQ",
        "shakespeare-char": "To be, or not to be, that is the question: whether 'tis nobler in the mind to suffer"}


class NumberedTokens:
    """A stand-in tokenizer for the GPT-2-shaped model: token i is shown as "t<i>", words start every 3 tokens."""

    vocab_size, unk_id = 50257, None

    def id_to_token(self, i: int) -> str:
        return f" t{i}" if i % 3 == 0 else f"t{i}"

    def encode(self, text: str) -> list[int]:
        return [sum(map(ord, w)) * 7 % 50000 + 100 for w in text.split()] * 5  # 70 tokens: cut to 64


def gpt2_small_shaped() -> tuple[Transformer, NumberedTokens]:
    cfg = TransformerConfig(arch="decoder-only", vocab_size=50257, d_model=768, n_heads=12, n_decoder_layers=12,
                            d_ff=3072, dropout=0.0, max_len=1024, pos_encoding="learned", norm_first=True,
                            activation="gelu_tanh", scale_embeddings=False, init="gpt2")
    torch.manual_seed(0)
    return Transformer(cfg).eval(), NumberedTokens()


def median_seconds(fn, rounds: int) -> tuple[float, float]:
    """(median CPU seconds, median wall seconds) of one call."""
    fn()  # warm
    cpu, wall = [], []
    for _ in range(rounds):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - t0)
    return statistics.median(cpu), statistics.median(wall)


def views(model, tok, text: str, text_b: str) -> dict:
    """{view: a function that does what its handler does}."""
    record = record_attention(model, tok, text, max_tokens=64)
    kind = "cross" if "cross" in record.patterns else "decoder self"
    pattern = record.patterns[kind]
    L, H = pattern.shape

    def heatmaps(p):
        mask = p.mask if p.kind != "encoder self" else None
        viz.head_heatmap(p.weights[L - 1, 0], p.query_tokens, p.key_tokens, mask=mask)
        viz.layer_grid(p.weights[L - 1], p.query_tokens, p.key_tokens, mask=mask)
        viz.overview(p.scores()["entropy"], "entropy")

    def norms():
        inside = record_inside(model, record)  # the handler's first view of a record makes it (then kept)
        heatmaps(displayed_pattern(pattern, value_weighted_norms(model, record, inside, kind)))

    def words():
        heatmaps(displayed_pattern(pattern, words=True))

    def caption():
        describe_head(replace(pattern), L - 1, 0)  # a copy: its head scores are computed, not read from a cache

    def lens():
        result = logit_lens(model, tok, record.input_ids, record.target_ids)
        viz.logit_lens_grid(result.top_tokens, result.top_probs, result.rows, result.position_tokens)
        viz.final_token_curve(result.final_probs[:, 0], result.rows, result.final_tokens[0])

    def two_inputs():
        b = record_attention(model, tok, text_b, max_tokens=64).patterns[kind]
        head_divergence(pattern, b)
        viz.head_heatmap(pattern.weights[0, 0], pattern.query_tokens, pattern.key_tokens, mask=pattern.mask)
        viz.head_heatmap(b.weights[0, 0], b.query_tokens, b.key_tokens, mask=b.mask)
        viz.overview(head_divergence(pattern, b), "JS divergence (bits)")

    tokens = len(pattern.query_tokens), len(pattern.key_tokens)
    return {"tokens": tokens, "value norms": norms, "words": words, "caption": caption, "logit lens": lens,
            "two inputs": two_inputs}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    models = [(name, *load_checkpoint(ROOT / "checkpoints" / name, device="cpu")[:2]) for name in sorted(TEXT)]
    models.append(("GPT-2-small-shaped (random)", *gpt2_small_shaped()))
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; median of {args.rounds}; "
          f"CPU ms (wall ms), 1 torch thread", flush=True)
    names = ["value norms", "words", "caption", "logit lens", "two inputs"]
    print("| model | queries x keys | " + " | ".join(names) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in names) + " |")
    worst = 0.0
    for name, model, tok in models:
        text = TEXT.get(name, "The keys to the cabinet is on the table by the door near the window")
        text_b = text[:-1] + ("e" if text[-1] != "e" else "a")
        if name.startswith("GPT-2"):
            text, text_b = ("The keys to the cabinet is on the table by the door near the window",
                            "The keys to the cabinet are on the table by the door near the window")
        with torch.no_grad():
            funcs = views(model, tok, text, text_b)
            seconds = {v: median_seconds(funcs[v], args.rounds) for v in names}
        worst = max([worst] + [seconds[v][0] for v in names if not name.startswith("GPT-2")])
        T, S = funcs["tokens"]
        print(f"| {name} | {T} x {S} | " + " | ".join(f"{seconds[v][0] * 1000:.0f} ({seconds[v][1] * 1000:.0f})"
                                                     for v in names) + " |", flush=True)
    print(f"slowest view on a shipped checkpoint: {worst * 1000:.0f} CPU ms (goal < 1000 ms); load average at end: "
          f"{os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
