"""What the sparse features of issue 42 cost: each shipped SAE's training time, and one "features at a position"
computation (transformer.interpretability.feature_page.features_at: one forward of the model reading the layer's z,
one SAE encode) on the shipped models, at their longest input. The goal of the issue: under 0.5 s a click on 2 cores.

Per model and layer: the SAE's load time (checked: sae_files.load_sae), then the median wall and CPU seconds of
--rounds `features_at` calls, and once the page of the first feature found there computed as the library does it
(feature_page: its top contexts need the layer's activations on the held-out batches, one pass of the model over
them). Training: the wall time each card records (activations + training, measured by
`python -m transformer.interpretability.features <ckpt> --train`); with --retrain, each SAE is trained again here
from its recipe and timed. The load average is printed with the figures.

With --section, instead: the cost of one click of the Attention tab's section "What the heads write"
(tabs.attention.features.draw_features, as the page calls it: the record's forward reading the layer's z, the SAE's
encode, the active features with their logit effects, the stored contexts, the table and both figures) on each
shipped model's first SAE layer and last, on a held-out input: a click on a new input (its reading not cached) and a
click at another position of the same input (cached), median wall and CPU seconds of --rounds; and the CPU seconds of
the click's reading (the record's forward up to the layer and the encode) and of its active features (their logit
effects) alone.

    python bench/features.py [--rounds 20] [--threads 2] [--models induction shakespeare-char] [--retrain]
    python bench/features.py --section [--rounds 10] [--threads 2]
"""
from __future__ import annotations

import argparse
import copy
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from patching import timed  # noqa: E402
from transformer import load_checkpoint  # noqa: E402
from transformer.interpretability.feature_cli import RECIPES  # noqa: E402
from transformer.interpretability.feature_data import feature_batches  # noqa: E402
from transformer.interpretability.analysis import repeated_sequences  # noqa: E402
from transformer.interpretability.feature_page import feature_page, features_at  # noqa: E402
from transformer.interpretability.features import layer_activations, width  # noqa: E402
from transformer.interpretability.sae_files import entry_of, layers_with_sae, load_sae  # noqa: E402
from transformer.interpretability.sae_training import train_sae  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def longest_input(model, tokenizer, name: str) -> tuple[torch.Tensor, ...]:
    """The model's arguments for its longest input, batch of 1: for induction max_len / 2 random distinct characters
    twice, else the longest row of its first held-out batch (a verse pair for the translation model)."""
    if name == "induction":
        return (repeated_sequences(model, seq_len=model.config.max_len // 2, n_seqs=1, seed=0).cpu(),)
    inputs = feature_batches(RECIPES[name].data, model, tokenizer, "held-out")[0][0]
    row = int((inputs[-1] != model.config.pad_id).sum(-1).argmax())
    return tuple(t[row:row + 1, :model.config.max_len] for t in inputs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--models", nargs="+", default=list(RECIPES))
    parser.add_argument("--retrain", action="store_true", help="train every SAE again here and time it")
    parser.add_argument("--section", action="store_true", help="time a click of the app's section instead")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.section:
        return section_clicks(args.models, args.rounds)
    print(f"torch {torch.__version__}, {args.threads} threads, load average {os.getloadavg()[0]:.1f}")
    print("| model | layer | input tokens | load SAE s | features at a position: wall s | CPU s | "
          "a feature's page with its held-out pass: wall s | card: train s |"
          + (" retrained here: s |" if args.retrain else ""))
    for name in args.models:
        path = ROOT / "checkpoints" / name
        model, tokenizer, info = load_checkpoint(path, device="cpu")
        inputs = longest_input(model, tokenizer, name)
        position = int((inputs[-1] != model.config.pad_id).sum()) - 1  # the decoder's (or only stream's) last token
        train = feature_batches(RECIPES[name].data, model, tokenizer, "train") if args.retrain else None
        held_out = feature_batches(RECIPES[name].data, model, tokenizer, "held-out")
        for layer in layers_with_sae(info):
            start = time.perf_counter()
            sae = load_sae(path, info, layer, width(model))
            load = time.perf_counter() - start
            wall, cpu = timed(lambda: features_at(model, sae, layer, inputs, position), args.rounds)
            start = time.perf_counter()
            f = features_at(model, sae, layer, inputs, position)
            feature_page(model, sae, layer, f[0][0], layer_activations(model, layer, held_out))
            page = time.perf_counter() - start
            entry = entry_of(info, layer)
            row = (f"| {name} | {layer} | {' + '.join(str(t.size(1)) for t in inputs)} | {load:.3f} | {wall:.3f} | {cpu:.3f} | {page:.2f} | "
                   f"{entry['wall_time_s']} |")
            if train is not None:
                start = time.perf_counter()
                train_sae(layer_activations(model, layer, train).x, RECIPES[name].sae, RECIPES[name].training)
                row += f" {time.perf_counter() - start:.1f} |"
            print(row, flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


SECTION_INPUTS = {"induction": "kqwzjxtbhmfakqwzjxtbhmfa", "shakespeare-char": "To be, or not to be, that is the question",
                  "translate-en-es": "And you shall keep my commandments, and do them."}


def section_clicks(models: list[str], rounds: int) -> None:
    """The section's cost per click (the module's docstring), with the load average, and CPU seconds of two of its
    parts: the reading (the model's forward up to the layer's z and the SAE's encode: reading_on_gpu) and the
    active features at the position with their logit effects (active_on_gpu)."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    from store.catalogue import ModelRef
    from tabs.attention.features import active_on_gpu, draw_features, reading_on_gpu
    from tabs.attention.record import attention_record

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, load average {os.getloadavg()[0]:.1f}")
    print("| model | layer | positions | a click on a new input: wall s | CPU s | another position: wall s | CPU s | "
          "of a click: the reading, CPU s | the active features, CPU s |")
    for name in models:
        model, _, info = load_checkpoint(ROOT / "checkpoints" / name, device="cpu")
        record = attention_record(name, SECTION_INPUTS[name], "", None)
        for layer in [layers_with_sae(info)[0], layers_with_sae(info)[-1]]:
            T = len(record.patterns[str(layer.kind)].query_tokens)
            click = lambda r, t: draw_features(name, r, str(layer.kind), layer.layer, t, None, 1280)  # noqa: E731
            # a copy of the record is a new input to the section's cache (tabs.attention.features.READINGS)
            new_wall, new_cpu = timed(lambda: click(copy.copy(record), T - 1), rounds)
            other_wall, other_cpu = timed(lambda: click(record, T // 2), rounds)
            read = lambda: reading_on_gpu(ModelRef(name), record, str(layer.kind), layer.layer)  # noqa: E731
            _, read_cpu = timed(read, rounds)
            f_t = read()[T - 1]
            _, active_cpu = timed(lambda: active_on_gpu(ModelRef(name), str(layer.kind), layer.layer, f_t), rounds)
            print(f"| {name} | {layer} | {T} | {new_wall:.3f} | {new_cpu:.3f} | {other_wall:.3f} | {other_cpu:.3f} | "
                  f"{read_cpu:.3f} | {active_cpu:.3f} |", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")

if __name__ == "__main__":
    main()
