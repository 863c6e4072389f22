"""`python -m transformer.train`: train a model from the command line and write a checkpoint with its card."""
from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from dataclasses import MISSING, fields
from pathlib import Path

import torch
from tqdm import tqdm

from ..checkpoint import load_checkpoint, recover_checkpoint
from ..config import PaperModel, Variants
from ..family_options import FamilyOptions
from ..machine import cpu_name
from ..data import KNOWN_CORPORA, TASKS, text_splits
from ..interpretability.head_metrics import mean_attended_distance
from ..tokenization import BPETokenizer, load_tokenizer
from . import distributed
from .card import card_metrics, model_card
from .compare import COMPARISONS, ComparisonSetup, compare_variants, comparison_variants, markdown_table, rewound
from .run import build_run
from .trainer import TrainConfig, Trainer

# The model's flags, one argument group per config group (the tokenizer gives vocab_size and the special tokens)
MODEL_GROUPS = {"model: the paper's (PaperModel)": PaperModel, "model: later variants (Variants)": Variants,
                "model: outside families' options (FamilyOptions)": FamilyOptions}
MODEL_FLAGS = [f for group in MODEL_GROUPS.values() for f in fields(group) if f.name != "vocab_size"]


def _add_dataclass_flags(group, dataclass_fields, prefix=""):
    for f in dataclass_fields:
        default = f.default if f.default is not MISSING else None
        flag = "--" + prefix + f.name.replace("_", "-")
        if isinstance(default, bool) or "bool" in str(f.type):
            group.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction, default=None,
                               help=f"(default {default})")
        else:
            kind = {int: int, float: float, str: str}.get(type(default), int if f.name.startswith("n_") else str)
            group.add_argument(flag, dest=f.name, type=kind, default=None, help=f"(default {default})")


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m transformer.train", description=__doc__)
    data = p.add_argument_group("data").add_mutually_exclusive_group(required=True)
    data.add_argument("--task", choices=sorted(TASKS), help="a synthetic seq2seq task")
    known = "; ".join(f"{name}: {c.title}" for name, c in KNOWN_CORPORA.items())
    data.add_argument("--text", help="a language model on: a local text file (cut 90/10 into training and "
                      f"validation text), a known corpus ({known}; from the Hugging Face Hub, with its own "
                      "train/validation splits; BPE by default), or a Hub dataset name")
    data.add_argument("--induction", action="store_true", help="a decoder-only model on the induction-head task "
                      "(Olsson et al. 2022): random characters, then the last n of them again (see "
                      "transformer.data.InductionData)")
    p.add_argument("--tokenizer", choices=["char", "bpe"], default=None,
                   help="tokenizer for --text (default char; bpe for a known corpus such as wikitext-2)")
    p.add_argument("--bpe-vocab", type=int, default=512, help="BPE vocabulary size (default 512)")
    p.add_argument("--out", required=True, help="checkpoint directory to write")
    p.add_argument("--log", help="JSONL log of every event (default: <out>.log.jsonl)")
    p.add_argument("--resume", action="store_true", help="continue the run saved in --out")
    p.add_argument("--init-from", help="start from this checkpoint's weights and tokenizer (a second training "
                   "stage); its training record is kept in the new card")
    p.add_argument("--ship", action="store_true", help="drop the optimiser state from the final checkpoint")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: all cores)")
    p.add_argument("--device", default="auto", help="auto (CUDA when present, else CPU), cpu, cuda or cuda:N; under "
                   "torchrun each process takes cuda:LOCAL_RANK (NCCL) or the CPU (gloo)")
    p.add_argument("--compare", choices=sorted(COMPARISONS), help="train the model once per variant, with the same "
                   "data, steps and seed, and print the table (also written to <out>.json): "
                   + "; ".join(f"{k}: {v}" for k, v in COMPARISONS.items())
                   + ". GQA takes --n-kv-heads, else the divisor nearest sqrt(n_heads) (see transformer.train.compare)")
    p.add_argument("--compare-kv-heads", action="store_const", const="kv-heads", dest="compare",
                   help="the same as --compare kv-heads: MHA, GQA and MQA")
    for title, group in MODEL_GROUPS.items():
        _add_dataclass_flags(p.add_argument_group(title), [f for f in fields(group) if f.name != "vocab_size"])
    _add_dataclass_flags(p.add_argument_group("training (TrainConfig)"), fields(TrainConfig))
    args = p.parse_args(argv)
    if args.tokenizer is None:
        args.tokenizer = KNOWN_CORPORA[args.text].tokenizer if args.text in KNOWN_CORPORA else "char"
    return args


def _pick(args, dataclass_fields) -> dict:
    return {f.name: getattr(args, f.name) for f in dataclass_fields if getattr(args, f.name) is not None}


def hardware(world: distributed.World | None = None) -> str:
    cpu = cpu_name()
    world = world or distributed.World()
    gpu = f", GPU {torch.cuda.get_device_name(world.device)}" if world.device.type == "cuda" else ""
    processes = f", {world.world_size} processes ({world.backend}, torchrun)" if world.is_distributed else ""
    return (f"{cpu}, {os.cpu_count()} cores, torch {torch.__version__} with {torch.get_num_threads()} threads"
            f"{gpu}{processes}")


def build(args):
    """(model, tokenizer, data, info, validation text or None) from the parsed arguments."""
    train_cfg = TrainConfig(**_pick(args, fields(TrainConfig)))
    model_kw = _pick(args, MODEL_FLAGS)
    if args.resume:
        recover_checkpoint(args.out)  # a save killed between its renames leaves the checkpoint as .<out>.old
    text, tokenizer = None, None  # a task's tokenizer is its characters (transformer.train.run.build_run)
    if args.text:
        text = text_splits(args.text)  # a known corpus's own splits, else a 90/10 cut
        if args.resume or args.init_from:
            tokenizer = load_tokenizer(Path(args.init_from or args.out) / "tokenizer.json")
        elif args.tokenizer == "bpe":
            tokenizer = BPETokenizer.train([text[0]], args.bpe_vocab)  # the tokenizer sees the training split only
    try:  # --seed decides the initial weights and the dropout masks (resume restores them)
        run = build_run(train_cfg, task=args.task, induction=args.induction, text=text, tokenizer=tokenizer, **model_kw)
    except ValueError as e:
        raise SystemExit(f"error: {e}") from None
    model, config, info = run.model, run.model.config, {"task": run.task}
    if args.init_from:
        start, _, previous = load_checkpoint(args.init_from, device="cpu")
        if start.config != config:
            raise SystemExit(f"--init-from {args.init_from}: its config differs from the flags given: "
                             f"{start.config} vs {config}")
        model.load_state_dict(start.state_dict())
        info["previous_stage"] = previous["training"]
    return model, run.tokenizer, run.data, train_cfg, info, text[1] if text else None


def compare_cli(args, command: str, world: distributed.World) -> int:
    """--compare: train the variants of the model (transformer.train.compare), print the table and write it to
    <out>.json, every training event to <out>.log.jsonl."""
    if args.resume or args.init_from or args.ship:
        raise SystemExit("--compare trains fresh models: drop --resume, --init-from and --ship")
    if world.is_distributed:
        raise SystemExit("--compare runs in one process: start it with python -m, not torchrun")
    gqa_kv_heads, args.n_kv_heads = args.n_kv_heads, None  # --n-kv-heads picks the GQA variant
    model, tokenizer, data, train_cfg, info, val_text = build(args)
    try:
        variants = comparison_variants(args.compare, model.config, gqa_kv_heads)
    except ValueError as e:
        raise SystemExit(f"--compare {args.compare}: {e}") from None
    setup = ComparisonSetup(model.config, tokenizer, train_cfg, rewound(data), val_text, mean_attended_distance)
    out, rows, plan, bar = Path(args.out), [], None, None
    log_path = Path(args.log or f"{out}.log.jsonl")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "a", buffering=1) as log:
        for event in compare_variants(setup, variants, device=world.device):
            if event.kind == "plan":
                plan = event
                if event.note:
                    tqdm.write(event.note)
            elif event.kind == "train":
                step, name = event.event, event.variant.name
                if bar is None or bar.desc != name:
                    if bar is not None:
                        bar.close()
                    bar = tqdm(total=train_cfg.steps, unit="step", desc=name)
                record = {f.name: getattr(step, f.name) for f in fields(step) if f.name != "attention"}
                log.write(json.dumps({"variant": name, **record}) + "\n")
                if step.kind == "step":
                    bar.update(1)
                    bar.set_postfix(loss=f"{step.loss:.3f}", tok_s=f"{step.tokens_per_sec:.0f}")
                else:
                    extra = f" exact {step.exact_match:.3f}" if step.exact_match is not None else ""
                    tqdm.write(f"{name} step {step.step}: val loss {step.val_loss:.4f}{extra}")
            else:
                if bar is not None:
                    bar.close()
                    bar = None
                rows.append(event)
    table = markdown_table(rows)
    result = {"command": command, "hardware": hardware(world), "task": info["task"], "train_config": vars(train_cfg),
              "model": {k: v for k, v in model.config.to_dict().items()
                        if k not in ("n_kv_heads", "attention", "kv_latent_dim")},  # per row instead
              "note": plan.note, "rows": [r.to_dict() for r in rows]}
    path = out.parent / f"{out.name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1) + "\n")
    tqdm.write(table)
    tqdm.write(f"wrote {path}")
    return 0


def main(argv=None):
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    command = "python -m transformer.train " + shlex.join(sys.argv[1:] if argv is None else argv)
    world = distributed.init(args.device)  # under torchrun: join the other processes
    try:
        if args.compare:
            return compare_cli(args, command, world)
        return train(args, command, world)
    finally:
        distributed.close(world)


def train(args, command: str, world: distributed.World) -> int:
    """Train, log and write the checkpoint with its card. Under torchrun every rank trains; rank 0 alone logs,
    measures the final metrics and writes."""
    if args.resume and world.is_distributed:  # rank 0 repairs a killed save before any rank reads the checkpoint
        if world.is_writer:
            recover_checkpoint(args.out)
        world.barrier()
    model, tokenizer, data, train_cfg, info, val_text = build(args)
    model.to(world.device)
    previous_stage = info.pop("previous_stage", None)
    info["training"] = {"command": command, "hardware": hardware(world)}
    if previous_stage:
        info["training"]["previous_stage"] = previous_stage
    out = Path(args.out)
    try:
        world.rows(train_cfg.batch_size)
    except ValueError as e:
        raise SystemExit(f"--batch-size: {e}") from None
    trainer = Trainer(model, tokenizer, data, train_cfg, out_dir=out, resume=args.resume, checkpoint_info=info,
                      world=world)
    if not world.is_writer:
        for _ in trainer.run():  # the other ranks train their rows; rank 0 reports
            pass
        return 0
    log_path = Path(args.log or f"{out}.log.jsonl")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    # line-buffered: each record reaches the file as it is written, so a killed run keeps every step it logged
    with open(log_path, "a", buffering=1) as log, tqdm(total=train_cfg.steps, initial=trainer.step, unit="step") as bar:
        for event in trainer.run():
            record = {f.name: getattr(event, f.name) for f in fields(event) if f.name != "attention"}
            log.write(json.dumps(record) + "\n")
            if event.kind == "step":
                bar.update(1)
                bar.set_postfix(loss=f"{event.loss:.3f}", lr=f"{event.lr:.2e}", tok_s=f"{event.tokens_per_sec:.0f}")
            else:
                extra = f" exact {event.exact_match:.3f}" if event.exact_match is not None else ""
                tqdm.write(f"step {event.step}: val loss {event.val_loss:.4f}{extra} | {event.samples[0]}")
    tqdm.write("measuring final metrics ...")
    start = time.perf_counter()
    model.eval()
    info["metrics"] = card_metrics(model, tokenizer, args, val_text)
    info["training"].update(trainer.training_info())
    full = {**info, "model": model.config.to_dict()}
    card = model_card(out.name, args, full, command)
    if args.ship:
        from ..checkpoint import save_checkpoint

        save_checkpoint(out, model, tokenizer, task=info["task"], training=info["training"],
                        metrics=info["metrics"], card=card)
    else:
        trainer.save(out, metrics=info["metrics"], card=card)
    tqdm.write(f"metrics ({time.perf_counter() - start:.0f} s): {json.dumps(info['metrics'])}")
    tqdm.write(f"wrote {out}")
    return 0
