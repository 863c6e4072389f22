"""`python -m transformer.interpretability.features <checkpoint> --check | --train`: the shipped SAEs' command.

--check  loads every SAE config.json lists (checked: sae_files.load_sae), rebuilds its held-out batches from the
         recorded data (feature_data) and recomputes its metrics (features.measure); prints both and exits 1 when
         one differs from the card by more than TOLERANCE.
--page F --layer L [--kind cross]  prints feature F's page (feature_page) of that layer's SAE: the heads that write
         it, its top held-out contexts, its logit effect.
--train  trains the SAEs of the checkpoint's recipe (RECIPES, by the directory's name) on CPU, saves them beside
         the checkpoint with every feature's top held-out contexts (feature_contexts), and writes their metrics into
         config.json ("features") and the card (README.md).
--contexts  computes and stores every listed SAE's top contexts again (feature_contexts), the SAEs unchanged.
--check also recomputes the stored contexts: its row "stored contexts off" counts the features whose contexts differ.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from tqdm import tqdm

from ..checkpoint import CheckpointError, load_checkpoint, read_info
from ..heads import AttentionKind
from ..machine import cpu_name
from .feature_card import CARD_HEADING, card_section
from .feature_contexts import all_contexts, differing_features, load_contexts, save_contexts
from .feature_data import FeatureData, feature_batches
from .feature_page import feature_page
from .features import AttentionLayer, layer_activations, measure, width
from .sae import SAEConfig
from .sae_files import entry_of, layers_with_sae, load_sae, sae_file_name, save_sae
from .sae_training import SAETraining, train_sae

TOLERANCE = 2e-3  # recomputed metrics may differ from the card by float noise across machines, no more
CONTEXTS_OFF = "stored contexts off"  # --check's row: features whose stored top contexts differ (0 on the card)


@dataclass(frozen=True)
class Recipe:
    """How a shipped checkpoint's SAEs are trained: data, layers (kind, layer), SAE shape, training."""

    data: FeatureData
    layers: tuple[tuple[AttentionKind, int], ...]
    sae: SAEConfig
    training: SAETraining


RECIPES = {
    "induction": Recipe(FeatureData("induction", batch_size=64, train_batches=40, held_out_batches=8, seed=100),
                        ((AttentionKind.DECODER_SELF, 0), (AttentionKind.DECODER_SELF, 1)), SAEConfig(64, 256, "topk", k=4),
                        SAETraining(steps=2000, batch_size=512, lr=3e-3, l1_coefficient=1.0)),  # TopK: no L1
    "shakespeare-char": Recipe(FeatureData("data/tinyshakespeare.txt", block_size=256, batch_size=16,
                                           train_batches=16, held_out_batches=4, seed=100),
                               tuple((AttentionKind.DECODER_SELF, i) for i in range(6)), SAEConfig(256, 512, "topk", k=16),
                               SAETraining(steps=2000, batch_size=512, lr=1e-3, l1_coefficient=1.0)),
    "translate-en-es": Recipe(FeatureData("translation", batch_size=32, train_batches=60, held_out_batches=8, seed=100),
                              tuple((kind, i) for kind in (AttentionKind.DECODER_SELF, AttentionKind.CROSS)
                                    for i in (2, 3)), SAEConfig(256, 512, "topk", k=16),
                              SAETraining(steps=2000, batch_size=512, lr=1e-3, l1_coefficient=1.0)),
}


def train_checkpoint(path: Path, recipe: Recipe) -> list[dict]:
    """Train, save and measure every SAE of `recipe` for the checkpoint at `path`; returns config.json's entries."""
    model, tokenizer, _ = load_checkpoint(path, device="cpu")
    train, held_out = (feature_batches(recipe.data, model, tokenizer, s) for s in ("train", "held-out"))
    entries, hardware = [], f"{cpu_name()}, {os.cpu_count()} cores, torch {torch.__version__} with " \
                            f"{torch.get_num_threads()} thread(s)"
    for kind, i in recipe.layers:
        layer = AttentionLayer(kind, i).check(model)
        start = time.perf_counter()
        x = layer_activations(model, layer, train).x
        with tqdm(total=recipe.training.steps, desc=f"SAE of {layer}", file=sys.stderr) as bar:
            sae = train_sae(x, recipe.sae, recipe.training, lambda step, steps, loss: bar.update(1))
        seconds = time.perf_counter() - start
        save_sae(path, layer, sae)
        acts = layer_activations(model, layer, held_out)
        save_contexts(path, layer, all_contexts(sae, acts, model.config.pad_id, recipe.data.describe("held-out")),
                      model.config.vocab_size)
        metrics = measure(model, sae, layer, held_out, acts)
        entries.append({"file": sae_file_name(layer), "kind": str(layer.kind), "layer": layer.layer,
                        "sae": recipe.sae.to_dict(), "training": recipe.training.to_dict(),
                        "data": recipe.data.to_dict(), "trained_on": recipe.data.describe("train"),
                        "activations": x.size(0), "measured_on": recipe.data.describe("held-out"),
                        "wall_time_s": round(seconds, 1), "hardware": hardware, "metrics": metrics.to_dict()})
    return entries


def write_entries(path: Path, entries: list[dict]) -> None:
    """Put `entries` into config.json's "features" and the card's SAE section (replacing any earlier one)."""
    info = read_info(path)
    info["features"] = entries
    _replace(path / "config.json", json.dumps(info, indent=2) + "\n")
    card = (path / "README.md").read_text(encoding="utf-8")
    card = card.split("\n" + CARD_HEADING)[0].rstrip("\n") + "\n\n" + card_section(path.name, entries)
    _replace(path / "README.md", card)


def _replace(file: Path, text: str) -> None:
    tmp = file.with_name(f".{file.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, file)


def check_checkpoint(path: Path) -> list[tuple[str, str, float, float]]:
    """(layer, metric, recorded, recomputed) for every metric of every SAE the checkpoint lists."""
    model, tokenizer, info = load_checkpoint(path, device="cpu")
    rows = []
    for layer in tqdm(layers_with_sae(info), desc="checking SAEs", file=sys.stderr):
        entry = entry_of(info, layer)
        sae = load_sae(path, info, layer.check(model), width(model))
        if not isinstance(entry.get("metrics"), dict):
            raise CheckpointError(f"config.json: the SAE of {layer} records no metrics")
        held_out = feature_batches(FeatureData.from_dict(entry.get("data")), model, tokenizer, "held-out")
        acts = layer_activations(model, layer, held_out)
        fresh = measure(model, sae, layer, held_out, acts).to_dict()
        rows += [(str(layer), k, float(v), float(fresh[k])) for k, v in entry["metrics"].items()]
        stored = load_contexts(path, layer, sae.config.n_features, model.config.vocab_size)
        rows.append((str(layer), CONTEXTS_OFF, 0.0,
                     float(differing_features(stored, all_contexts(sae, acts, model.config.pad_id)))))
    return rows


def store_contexts(path: Path) -> list[Path]:
    """Compute and store every listed SAE's top held-out contexts (feature_contexts); returns the files written."""
    model, tokenizer, info = load_checkpoint(path, device="cpu")
    written = []
    for layer in tqdm(layers_with_sae(info), desc="contexts", file=sys.stderr):
        sae = load_sae(path, info, layer.check(model), width(model))
        data = FeatureData.from_dict(entry_of(info, layer).get("data"))
        acts = layer_activations(model, layer, feature_batches(data, model, tokenizer, "held-out"))
        written.append(save_contexts(path, layer, all_contexts(sae, acts, model.config.pad_id,
                                                               data.describe("held-out")), model.config.vocab_size))
    return written


def page_lines(path: Path, layer: AttentionLayer, feature: int) -> list[str]:
    """Feature `feature`'s page of `layer`'s shipped SAE, its contexts from the recorded held-out batches, in words."""
    model, tokenizer, info = load_checkpoint(path, device="cpu")
    sae = load_sae(path, info, layer.check(model), width(model))
    entry = entry_of(info, layer)
    held_out = layer_activations(model, layer, feature_batches(FeatureData.from_dict(entry["data"]), model,
                                                               tokenizer, "held-out"))
    return feature_page(model, sae, layer, feature, held_out).describe(tokenizer)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m transformer.interpretability.features",
                                     description="Train or check the SAEs shipped beside a checkpoint.")
    parser.add_argument("checkpoint", type=Path, help="a checkpoint directory, e.g. checkpoints/induction")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="recompute every shipped SAE's metrics against its card")
    mode.add_argument("--train", action="store_true", help="train the SAEs of the checkpoint's recipe and ship them")
    mode.add_argument("--contexts", action="store_true", help="compute and store every SAE's top held-out contexts")
    mode.add_argument("--page", type=int, metavar="F", help="print feature F's page (with --layer)")
    parser.add_argument("--layer", type=int, default=0, help="the layer of --page")
    parser.add_argument("--kind", default=str(AttentionKind.DECODER_SELF), help="the attention kind of --page")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    try:
        if args.train:
            recipe = RECIPES.get(args.checkpoint.resolve().name)
            if recipe is None:
                parser.error(f"no SAE recipe for {args.checkpoint.name}: one of {', '.join(RECIPES)}")
            entries = train_checkpoint(args.checkpoint, recipe)
            write_entries(args.checkpoint, entries)
            print(json.dumps(entries, indent=1))
            return 0
        if args.contexts:
            print("\n".join(str(p) for p in store_contexts(args.checkpoint)))
            return 0
        if args.page is not None:
            print("\n".join(page_lines(args.checkpoint, AttentionLayer(args.kind, args.layer), args.page)))
            return 0
        rows = check_checkpoint(args.checkpoint)
    except (CheckpointError, ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not rows:
        print(f"{args.checkpoint} ships no SAE", file=sys.stderr)
        return 2
    bad = 0
    for layer, name, recorded, fresh in rows:
        ok = name == "positions" and recorded == fresh or abs(recorded - fresh) <= TOLERANCE
        bad += not ok
        print(f"{layer:18} {name:20} card {recorded:10.4f}  now {fresh:10.4f}  {'ok' if ok else 'DIFFERS'}")
    print(f"{len(rows) - bad} of {len(rows)} metrics as the card says")
    return 1 if bad else 0

