"""`python -m transformer.translation.train`: the English->Spanish model on the Bible corpus, as the paper trains.

The paper's recipe, sized for a 2-core CPU: a shared BPE vocabulary (section 5.1), Adam with beta2 0.98 (5.3),
label smoothing 0.1 (5.4), residual dropout, and the average of the last checkpoints (section 6.1: "averaging the
last 5 checkpoints"). Pre-norm instead of the paper's post-norm: it trains without a long warm-up at a short
budget. Progress goes to a tqdm bar and a JSONL log; the shipped checkpoint gets its card from
`python -m transformer.translation.evaluate`.
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from collections import deque
from dataclasses import asdict, fields
from pathlib import Path

import torch
from tqdm import tqdm

from ..checkpoint import load_checkpoint, save_checkpoint
from ..train.cli import hardware
from ..config import TransformerConfig
from ..train.run import seeded_model
from ..tokenization import BPETokenizer
from ..train import TrainConfig, Trainer
from . import TASK
from .bible import CorpusMissing, read_pairs
from .corpus import DATA_DIR, held_out, training_pairs
from .data import TranslationData



def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m transformer.translation.train", description=__doc__)
    p.add_argument("--out", default="checkpoints/translate-en-es", help="checkpoint directory to write")
    p.add_argument("--bpe-vocab", type=int, default=8000, help="shared English+Spanish BPE vocabulary size")
    p.add_argument("--d-model", type=int, default=256)
    p.add_argument("--n-heads", type=int, default=4)
    p.add_argument("--layers", type=int, default=4, help="encoder layers = decoder layers")
    p.add_argument("--d-ff", type=int, default=1024)
    p.add_argument("--dropout", type=float, default=0.2)
    p.add_argument("--max-len", type=int, default=256)
    p.add_argument("--steps", type=int, default=9000)
    p.add_argument("--batch-size", type=int, default=64, help="verse pairs per batch")
    p.add_argument("--lr", type=float, default=7e-4, help="peak learning rate (cosine schedule)")
    p.add_argument("--warmup", type=int, default=800)
    p.add_argument("--max-minutes", type=float, default=110, help="stop after this much training time")
    p.add_argument("--average", type=int, default=5, help="average this many last snapshots (0: none)")
    p.add_argument("--average-every", type=int, default=400, help="steps between the averaged snapshots")
    p.add_argument("--eval-every", type=int, default=500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--init-from", help="continue from this checkpoint's weights and tokenizer (a second stage with "
                   "a fresh schedule); the card keeps the first stage's command and time")
    p.add_argument("--sword-path", default="/usr/share/sword", help="where the SWORD modules are installed")
    return p.parse_args(argv)


def average_state(states: list[dict]) -> dict:
    """The element-wise mean of several state dicts of one model (section 6.1's checkpoint averaging)."""
    return {k: sum(s[k].float() for s in states) / len(states) if states[0][k].is_floating_point() else states[-1][k]
            for k in states[0]}


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    command = "python -m transformer.translation.train " + shlex.join(sys.argv[1:] if argv is None else argv)
    try:
        pairs = list(read_pairs(args.sword_path))
    except CorpusMissing as e:
        raise SystemExit(str(e)) from None
    train_pairs = training_pairs(pairs)
    test, valid = held_out()
    tqdm.write(f"{len(train_pairs)} training verse pairs ({len(test)} test and {len(valid)} validation verses held "
               f"out, from {DATA_DIR})")
    previous = None
    if args.init_from:
        start, tokenizer, previous_info = load_checkpoint(args.init_from, device="cpu")
        previous = previous_info["training"]
    else:
        tokenizer = BPETokenizer.train([p.en for p in train_pairs] + [p.es for p in train_pairs], args.bpe_vocab)
    config = TransformerConfig(arch="encoder-decoder", vocab_size=tokenizer.vocab_size, d_model=args.d_model,
                               n_heads=args.n_heads, n_encoder_layers=args.layers, n_decoder_layers=args.layers,
                               d_ff=args.d_ff, dropout=args.dropout, max_len=args.max_len, norm_first=True)
    train_cfg = TrainConfig(steps=args.steps, batch_size=args.batch_size, schedule="cosine", lr=args.lr,
                            warmup=args.warmup, label_smoothing=0.1, eval_every=args.eval_every, eval_examples=300,
                            max_seconds=args.max_minutes * 60, seed=args.seed)
    model = seeded_model(config, args.seed)  # the initial weights and dropout masks
    if previous is not None:
        if start.config != config:
            raise SystemExit(f"--init-from {args.init_from}: its config differs from the flags: {start.config}")
        model.load_state_dict(start.state_dict())
    data = TranslationData(train_pairs, valid, tokenizer, config, args.seed, train_cfg.eval_examples)
    trainer = Trainer(model, tokenizer, data, train_cfg)
    out = Path(args.out)
    log_path = Path(f"runs/{out.name}.log.jsonl")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    snapshots: deque[dict] = deque(maxlen=max(args.average, 1))
    best = None
    with open(log_path, "w", buffering=1) as log, tqdm(total=train_cfg.steps, unit="step") as bar:
        for event in trainer.run():
            log.write(json.dumps({f.name: getattr(event, f.name) for f in fields(event) if f.name != "attention"})
                      + "\n")
            if event.kind == "step":
                bar.update(1)
                bar.set_postfix(loss=f"{event.loss:.3f}", lr=f"{event.lr:.1e}", tok_s=f"{event.tokens_per_sec:.0f}")
                if args.average and event.step % args.average_every == 0:
                    snapshots.append({k: v.detach().clone() for k, v in model.state_dict().items()})
            else:
                tqdm.write(f"step {event.step} ({event.elapsed / 60:.1f} min, epoch {data.epoch}): val loss "
                           f"{event.val_loss:.4f}, token accuracy {event.token_accuracy:.3f} | "
                           f"{event.samples[0][2][:120]}")
                best = event
    final_val = best.val_loss if best else None
    averaged = None
    if args.average and len(snapshots) > 1:
        final_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        model.load_state_dict(average_state(list(snapshots)))
        model.eval()
        averaged = data.evaluate(model, tokenizer)["val_loss"]
        tqdm.write(f"average of the last {len(snapshots)} snapshots: val loss {averaged:.4f} (final {final_val:.4f})")
        if final_val is not None and averaged > final_val:
            model.load_state_dict(final_state)
    training = {**trainer.training_info(), "command": command, "hardware": hardware(),
                "train_pairs": len(train_pairs), "train_pairs_dropped_too_long": data.dropped, "epochs": data.epoch,
                "val_loss_final": final_val, "val_loss_averaged": averaged,
                "averaged": bool(averaged is not None and (final_val is None or averaged <= final_val)),
                "averaged_snapshots": [trainer.step - i * args.average_every for i in range(len(snapshots))][::-1],
                "data": "World English Bible (sword-text-web) -> Reina-Valera 1909 (sword-text-sparv)"}
    if previous is not None:  # the whole run, both stages: what the card states
        training["previous_stage"] = previous
        training["total_wall_time_s"] = round(previous.get("total_wall_time_s", previous["wall_time_s"])
                                              + training["wall_time_s"], 1)
    model.eval()
    save_checkpoint(out, model, tokenizer, task=TASK, training=training, metrics={})
    tqdm.write(f"wrote {out} ({time.strftime('%H:%M:%S')}); now: python -m transformer.translation.evaluate {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
