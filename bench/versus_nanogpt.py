"""Our decoder-only LM against nanoGPT's own model.py, trained side by side with the same recipe on the same batches.

    python bench/versus_nanogpt.py                                   # P2: 2000 steps, 1 thread (~4 min per model)
    python bench/versus_nanogpt.py --variants ours,ours+gpt2,ours+beta2,ours+gpt2+beta2,ours+nanogpt-recipe
    python bench/versus_nanogpt.py --speed                           # step time only: where ours loses time
    python bench/versus_nanogpt.py --profile                         # torch.profiler, top ops of each step
    python bench/versus_nanogpt.py --steps 20 --rounds 3             # smoke test

The recipe is nanoGPT's "baby GPT on a CPU" from its README (config/train_shakespeare_char.py with --block_size=64
--batch_size=12 --n_layer=4 --n_head=4 --n_embd=128 --max_iters=2000 --lr_decay_iters=2000 --dropout=0.0):
AdamW lr 1e-3, 100 warm-up steps, cosine to 1e-4 at the last step (our `learning_rate`, applied to both), weight
decay 0.1 on every matrix (embeddings included) and none on vectors (both decay the same groups), gradient clipping
at 1.0, fp32. nanoGPT runs with bias=False (train.py's default; the shakespeare_char config does not set it) and
its AdamW (betas (0.9, 0.99) from that config, eps 1e-8). Ours is a decoder-only, pre-norm, GELU, learned-position
Transformer of the same sizes (d_ff = 4 d_model), tied embeddings, trained by our Trainer.

Data: ../shared/data/tinyshakespeare.txt, split 90/10 as TextData does, one CharTokenizer (built on the training
split) for both, so nanoGPT's vocabulary is ours (69 ids). Every step draws one batch and feeds it to every model.
Training is interleaved step by step (the order alternates each step), so a burst of load from other jobs slows
every model alike; the time reported for each model is the sum of its own steps (evaluation excluded).
Score: mean cross-entropy (nats per character) of next-character prediction on the same 200 validation windows of
64 characters (fixed seed), nanoGPT's estimate_loss measure.

nanoGPT's model.py (MIT, karpathy/nanoGPT) is loaded from ../shared/peers with importlib, never copied here.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import os
import time
from pathlib import Path

from timing import ROOT, interleave, machine_header, table  # also puts the repo on sys.path

import torch
import torch.nn.functional as F

from transformer.config import TransformerConfig
from transformer.data import load_text, split_text, text_batch
from transformer.model import Transformer
from transformer.tokenization import CharTokenizer
from transformer.train import TrainConfig, Trainer, learning_rate

PEER = ROOT.parent / "shared" / "peers" / "nanogpt_model.py"
CORPUS = ROOT / "data" / "tinyshakespeare.txt"  # shipped: the README's test command runs in a plain clone
N_LAYERS, N_HEADS, D_MODEL, BLOCK, BATCH = 4, 4, 128, 64, 12
VAL_WINDOWS, VAL_SEED = 200, 1234

# Our model's variants, each a change of options from the library's defaults (the paper's choices).
# gpt2: init="gpt2" (N(0, 0.02), residual projections / sqrt(2 n_layers)); beta2: AdamW beta2 0.99 instead of 0.98;
# noscale: no x sqrt(d_model) on the token embedding; eps8: AdamW eps 1e-8 instead of 1e-9 (set on the optimiser
# here: not a library option). "ours+nanogpt-recipe" is all four, i.e. nanoGPT's recipe in our model.
VARIANTS = {
    "ours": {},
    "ours+gpt2": {"init": "gpt2"},
    "ours+beta2": {"beta2": 0.99},
    "ours+noscale": {"scale_embeddings": False},
    "ours+eps8": {"eps": 1e-8},
    "ours+gpt2+beta2": {"init": "gpt2", "beta2": 0.99},
    "ours+gpt2+noscale": {"init": "gpt2", "scale_embeddings": False},
    "ours+nanogpt-recipe": {"init": "gpt2", "beta2": 0.99, "scale_embeddings": False, "eps": 1e-8},
}


def load_nanogpt():
    spec = importlib.util.spec_from_file_location("nanogpt_model", PEER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def train_config(steps: int) -> TrainConfig:
    return TrainConfig(steps=steps, batch_size=BATCH, schedule="cosine", lr=1e-3, warmup=100, weight_decay=0.1,
                       clip_grad=1.0, bf16=False, block_size=BLOCK, eval_every=10 ** 9, eval_examples=1, seed=0)


class SharedBatch:
    """The Trainer's data source: returns whatever batch the bench drew for this step."""

    def __init__(self):
        self.x = self.y = None

    def train_batch(self, batch_size: int):
        return (self.x,), self.y

    def state(self) -> dict:
        return {}


class Ours:
    """Our model trained by our Trainer, one step per `step()`."""

    def __init__(self, name: str, vocab_size: int, tokenizer, steps: int, seed: int):
        options = dict(VARIANTS[name])
        eps, beta2 = options.pop("eps", None), options.pop("beta2", None)
        torch.manual_seed(seed)
        self.model = Transformer(TransformerConfig(
            arch="decoder-only", vocab_size=vocab_size, d_model=D_MODEL, n_heads=N_HEADS, n_decoder_layers=N_LAYERS,
            d_ff=4 * D_MODEL, dropout=0.0, max_len=BLOCK, pos_encoding="learned", norm_first=True,
            activation="gelu", **options))
        cfg = train_config(steps)
        if beta2 is not None:
            cfg.beta2 = beta2
        self.data = SharedBatch()
        self.trainer = Trainer(self.model, tokenizer, self.data, cfg)
        if eps is not None:
            for group in self.trainer.optimizer.param_groups:
                group["eps"] = eps
        self.events = self.trainer.run()

    def step(self, x, y):
        self.data.x, self.data.y = x, y
        return next(self.events).loss

    def logits(self, x):
        return self.model(x).logits


class NanoGPT:
    """nanoGPT's GPT trained by the loop of nanoGPT's train.py (fp32 CPU: no GradScaler, no autocast)."""

    def __init__(self, nanogpt, vocab_size: int, steps: int, seed: int, bias: bool = False):
        torch.manual_seed(seed)
        with contextlib.redirect_stdout(io.StringIO()):  # it prints parameter counts
            self.model = nanogpt.GPT(nanogpt.GPTConfig(block_size=BLOCK, vocab_size=vocab_size, n_layer=N_LAYERS,
                                                       n_head=N_HEADS, n_embd=D_MODEL, dropout=0.0, bias=bias))
            self.optimizer = self.model.configure_optimizers(0.1, 1e-3, (0.9, 0.99), "cpu")
        self.cfg, self.it = train_config(steps), 0

    def step(self, x, y):
        self.model.train()
        self.it += 1
        lr = learning_rate(self.it, self.cfg, D_MODEL)  # the same schedule as ours, step for step
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        _, loss = self.model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return loss.item()  # train.py's log_interval=1 in the README's CPU command: one .item() per step

    def logits(self, x):
        return self.model(x, x)[0]  # with targets, nanoGPT returns logits for every position


@torch.no_grad()
def val_nats(candidate, x, y) -> float:
    candidate.model.eval()
    total = sum(F.cross_entropy(candidate.logits(xb).flatten(0, 1), yb.flatten(), reduction="sum").item()
                for xb, yb in zip(x.split(50), y.split(50)))
    candidate.model.train()
    return total / y.numel()


def build(names, steps, seed):
    text = load_text(CORPUS)
    train_text, val_text = split_text(text)
    tok = CharTokenizer.from_text(train_text)
    train_ids, val_ids = torch.tensor(tok.encode(train_text)), torch.tensor(tok.encode(val_text))
    val_x, val_y = text_batch(val_ids, BLOCK, VAL_WINDOWS, torch.Generator().manual_seed(VAL_SEED))
    nanogpt = load_nanogpt()
    candidates = {}
    for name in names:
        if name == "nanoGPT":
            candidates[name] = NanoGPT(nanogpt, tok.vocab_size, steps, seed)
        elif name == "nanoGPT+bias":
            candidates[name] = NanoGPT(nanogpt, tok.vocab_size, steps, seed, bias=True)
        else:
            candidates[name] = Ours(name, tok.vocab_size, tok, steps, seed)
    return tok, train_ids, (val_x, val_y), candidates


def train_all(candidates, train_ids, val, steps, seed, log_every):
    gen = torch.Generator().manual_seed(seed)
    names = list(candidates)
    seconds = {n: 0.0 for n in names}
    losses = {n: 0.0 for n in names}
    t_start = time.perf_counter()
    for step in range(1, steps + 1):
        x, y = text_batch(train_ids, BLOCK, BATCH, gen)  # one batch per step, fed to every model
        for name in (names if step % 2 else names[::-1]):
            t0 = time.perf_counter()
            losses[name] = candidates[name].step(x, y)
            seconds[name] += time.perf_counter() - t0
        if step % log_every == 0 or step == steps:
            load = os.getloadavg()[0]
            cells = "  ".join(f"{n} {losses[n]:.3f} ({seconds[n]:.0f} s)" for n in names)
            print(f"step {step:5d} [{time.perf_counter() - t_start:.0f} s, load {load:.2f}]  {cells}", flush=True)
    return seconds, {n: val_nats(c, *val) for n, c in candidates.items()}


def speed(candidates, train_ids, rounds, reps):
    """ms per training step on one fixed batch, interleaved (bench/timing.interleave)."""
    x, y = text_batch(train_ids, BLOCK, BATCH, torch.Generator().manual_seed(0))
    fns = {name: (lambda c=c: c.step(x, y)) for name, c in candidates.items()}
    for name, c in list(candidates.items()):
        if isinstance(c, Ours):  # the same model and optimiser step without the Trainer around them
            fns[name + " (raw loop)"] = lambda c=c: raw_step(c, x, y)
    return interleave(fns, rounds=rounds, reps=reps, warmup=3)


def raw_step(c: Ours, x, y):
    """One step of our model in nanoGPT's loop: what the Trainer costs on top of this is its own overhead."""
    model, opt = c.model, c.trainer.optimizer
    model.train()
    loss = F.cross_entropy(model(x).logits.flatten(0, 1), y.flatten())
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss.item()


def profile(candidates, train_ids, steps: int = 20):
    from torch.profiler import ProfilerActivity, profile as torch_profile

    x, y = text_batch(train_ids, BLOCK, BATCH, torch.Generator().manual_seed(0))
    for name, c in candidates.items():
        for _ in range(3):
            c.step(x, y)
        with torch_profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(steps):
                c.step(x, y)
        print(f"\n--- {name}: {steps} steps ---")
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=18))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--variants", default="ours,ours+nanogpt-recipe",
                   help=f"our variants, comma-separated, trained beside nanoGPT: {', '.join(VARIANTS)}")
    p.add_argument("--peer-bias", action="store_true", help="also train nanoGPT with bias=True")
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads for every model (default 1)")
    p.add_argument("--seed", type=int, default=0, help="weights of every model and the batch order")
    p.add_argument("--log-every", type=int, default=250)
    p.add_argument("--speed", action="store_true", help="only time steps on one fixed batch")
    p.add_argument("--rounds", type=int, default=15, help="--speed: interleaved rounds")
    p.add_argument("--profile", action="store_true", help="only profile 20 steps of each model")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    names = ["nanoGPT"] + (["nanoGPT+bias"] if args.peer_bias else []) + args.variants.split(",")
    unknown = [n for n in names[1:] if n not in VARIANTS and n != "nanoGPT+bias"]
    if unknown:
        raise SystemExit(f"unknown variants {unknown}; known: {', '.join(VARIANTS)}")
    print(machine_header("decoder-only LM: ours vs nanoGPT (bench/versus_nanogpt.py)"))
    print(f"recipe    {N_LAYERS} layers x {N_HEADS} heads x {D_MODEL}, block {BLOCK}, batch {BATCH}, {args.steps} "
          f"steps, lr 1e-3 cosine to 1e-4 (100 warm-up), wd 0.1, clip 1.0, fp32, dropout 0, seed {args.seed}")
    tok, train_ids, val, candidates = build(names, args.steps, args.seed)
    params = {n: sum(p.numel() for p in c.model.parameters()) for n, c in candidates.items()}
    print("params    " + ", ".join(f"{n} {v:,}" for n, v in params.items()) + f"; vocabulary {tok.vocab_size}")
    if args.profile:
        return profile(candidates, train_ids)
    if args.speed:
        result = speed(candidates, train_ids, args.rounds, reps=5)
        rows = [[n, f"{result.median(n) * 1e3:.1f}", str(result.ratio(n, "nanoGPT"))] for n in result.seconds]
        print(table(rows, ["candidate", "ms/step (median)", "time / nanoGPT's (median of rounds)"]))
        return
    seconds, nats = train_all(candidates, train_ids, val, args.steps, args.seed, args.log_every)
    load = os.getloadavg()
    ref = "nanoGPT"
    rows = [[n, f"{nats[n]:.4f}", f"{seconds[n]:.1f}", f"{seconds[n] / seconds[ref]:.3f}x",
             f"{nats[n] - nats[ref]:+.4f}"] for n in names]
    print(f"\nload avg at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; training interleaved step by step, "
          f"{args.threads} thread(s) each")
    print(table(rows, ["model", f"val nats/char ({VAL_WINDOWS} windows)", "train s", "time / nanoGPT's",
                       "nats - nanoGPT's"]))


if __name__ == "__main__":
    main()
