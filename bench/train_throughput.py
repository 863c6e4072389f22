"""Training throughput of our encoder-decoder against torch.nn.Transformer of the same size.

    python bench/train_throughput.py --rounds 15                       # headline: the library vs the peer
    python bench/train_throughput.py --rounds 15 --dropout-candidates  # + each dropout-mask candidate measured
    python bench/train_throughput.py --rounds 15 --compile             # torch.compile of both, with their eager selves
    python bench/train_throughput.py --profile                         # where the fp32 step's time goes
    python bench/train_throughput.py --rounds 2 --reps 1 --warmup 1    # smoke test

One full training step each: embedding + positional table, 3+3 post-norm layers (d_model 256, 8 heads, d_ff 1024,
dropout 0.1), output projection tied to the embedding, cross-entropy, backward, AdamW step. Source and target
length 64, batch 32, vocabulary 1000, no padding. tokens/s counts target tokens (B * T = 2048 per step).
Ours is the library as it is (its dropout is transformer.dropout); the peer is nn.Transformer with torch's own
nn.Dropout. They run interleaved in this process; the headline is the median of the per-round fp32/fp32 ratio.
"""
from __future__ import annotations

import argparse
import math
import os
import time

from timing import interleave, machine_header, matmul_report, table, verdict  # also puts the repo on sys.path

import torch
import torch.nn.functional as F
from torch import nn

from transformer import Transformer, TransformerConfig, attention
from transformer.dropout import Dropout, dropout, effective_p, keep_mask
from transformer.embeddings import sinusoidal_table
from transformer.layers import SublayerConnection

TARGET = 1.15  # ours >= 1.15x nn.Transformer's fp32 tokens/s (issue 11, row P1)
D_MODEL, N_HEADS, N_LAYERS, D_FF, VOCAB, DROPOUT = 256, 8, 3, 1024, 1000, 0.1
BATCH, SRC_LEN, TGT_LEN = 32, 64, 64


class PeerModel(nn.Module):
    """torch.nn.Transformer with what a user adds around it to get the same model as ours: one embedding shared
    by source and target (scaled by sqrt(d_model)), the sinusoidal table, dropout, an output Linear tied to the
    embedding. nn.Transformer also puts a final LayerNorm after each stack (ours, post-norm, does not)."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D_MODEL)
        self.register_buffer("pe", sinusoidal_table(128, D_MODEL), persistent=False)
        self.dropout = nn.Dropout(DROPOUT)
        self.transformer = nn.Transformer(D_MODEL, N_HEADS, N_LAYERS, N_LAYERS, D_FF, DROPOUT, batch_first=True)
        self.lm_head = nn.Linear(D_MODEL, VOCAB, bias=False)
        self.lm_head.weight = self.embed.weight
        self.register_buffer("causal", nn.Transformer.generate_square_subsequent_mask(TGT_LEN), persistent=False)

    def _embed(self, ids):
        return self.dropout(self.embed(ids) * math.sqrt(D_MODEL) + self.pe[: ids.size(1)])

    def forward(self, src, tgt):
        out = self.transformer(self._embed(src), self._embed(tgt), tgt_mask=self.causal, tgt_is_causal=True)
        return self.lm_head(out)


# --- Experiments (--dropout-candidates): ours with another dropout swapped in. Not library code. ---

class BernoulliDropout(Dropout):
    """torch's mask (F.dropout: bernoulli_, one double per element): what the library's modules used before."""

    def forward(self, x):
        return F.dropout(x, self.p, self.training)


def rand_dropout(x, p, training=True):
    """A float32 torch.rand per element compared with p (one 32-bit draw per element instead of four per 64)."""
    if not training or p == 0.0:
        return x
    return x * torch.rand(x.shape).ge_(p).to(x.dtype).div_(1 - p)


class RandDropout(Dropout):
    def forward(self, x):
        return rand_dropout(x, self.p, self.training)


class FusedResidualSublayer(SublayerConnection):
    """LayerNorm(x + dropout(Sublayer(x))) with the dropout and the residual add in one addcmul (the library mask;
    post-norm only, as config A)."""

    def forward(self, x, sublayer):
        out, weights = sublayer(x)
        p = self.dropout.p
        if not self.training or p == 0.0:
            return self.norm(x + out), weights
        keep = keep_mask(out.shape, p).to(out.dtype)
        return self.norm(torch.addcmul(x, out, keep, value=1 / (1 - effective_p(p)))), weights


LIBRARY_ATTEND = attention.attend


def torch_attend(module, q, k, v, mask, *, is_causal, dropout_p, bias=None, scale=None):
    """The attention of the library before transformer/dropout.py: in training, F.scaled_dot_product_attention with
    dropout_p, which on CPU falls back to its math path and draws the weights' mask with bernoulli_."""
    if module.pattern.wanted() or dropout_p == 0.0 or bias is not None:
        return LIBRARY_ATTEND(module, q, k, v, mask, is_causal=is_causal, dropout_p=dropout_p, bias=bias, scale=scale)
    T, S = q.size(2), k.size(2)
    if is_causal and (mask is not None or S != T):
        causal = attention.causal_mask(T, S, device=q.device)  # (1, 1, T, S)
        mask, is_causal = (causal if mask is None else mask & causal), False
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p, is_causal=is_causal,
                                          scale=scale, enable_gqa=k.size(1) != q.size(1))  # (B, H, T, d_v)


def swap(model: nn.Module, old: type, new: type) -> nn.Module:
    for module in model.modules():
        if type(module) is old:
            module.__class__ = new
    return model


def patched(step, **attrs):
    """The step with transformer.attention's functions (attend, dropout) replaced while it runs."""
    def run():
        saved = {name: getattr(attention, name) for name in attrs}
        for name, value in attrs.items():
            setattr(attention, name, value)
        try:
            return step()
        finally:
            for name, value in saved.items():
                setattr(attention, name, value)
    return run


def dropout_candidates(src, tgt_in, tgt_out) -> dict:
    """fp32 steps of ours with the library's dropout replaced, each on its own model with the same init."""
    def step(model):
        return make_step(model, ours_fwd, src, tgt_in, tgt_out, bf16=False)
    return {
        # everything as before transformer/dropout.py: torch's masks in the modules and inside F.sdpa
        "ours_fp32_before": patched(step(swap(ours_model(), Dropout, BernoulliDropout)), attend=torch_attend),
        # the library's modules, attention as before: what moving the weights' dropout to our path is worth
        "ours_fp32_torch_attn": patched(step(ours_model()), attend=torch_attend),
        "ours_fp32_rand": patched(step(swap(ours_model(), Dropout, RandDropout)), dropout=rand_dropout),
        "ours_fp32_fused_residual": step(swap(ours_model(), SublayerConnection, FusedResidualSublayer)),
    }


# --- The measurement ---

def ours_model() -> nn.Module:
    cfg = TransformerConfig(arch="encoder-decoder", d_model=D_MODEL, n_heads=N_HEADS, n_encoder_layers=N_LAYERS,
                            n_decoder_layers=N_LAYERS, d_ff=D_FF, vocab_size=VOCAB, max_len=128, dropout=DROPOUT)
    return Transformer(cfg)


def make_step(model: nn.Module, forward, src, tgt_in, tgt_out, bf16: bool):
    """A closure doing one training step: forward (optionally under bf16 autocast), loss, backward, AdamW."""
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    model.train()

    def step():
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            logits = forward(model, src, tgt_in)
        loss = F.cross_entropy(logits.float().flatten(0, 1), tgt_out.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    return step


def ours_fwd(m, s, t):
    return m(s, t).logits


def peer_fwd(m, s, t):
    return m(s, t)


def load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def report(candidates: dict, res, ratios: list, fp32: float, bf16: float) -> None:
    tokens, flops = BATCH * TGT_LEN, step_flops()
    rows = []
    for name in candidates:
        sec = res.median(name)
        peak = bf16 if "bf16" in name else fp32
        rows.append([name, f"{sec * 1e3:.1f}", f"{tokens / sec:,.0f}", f"{flops / sec / 1e9:.0f}",
                     f"{100 * flops / sec / 1e9 / peak:.0f}%"])
    print()
    print(table(rows, ["candidate", "ms/step (median)", "target tokens/s", "matmul GFLOP/s", "of peak matmul"]))
    print()
    for label, slow, fast, note in ratios:
        print(f"{label:54s} {res.ratio(slow, fast)}  {note}")


class LabelledDropout(Dropout):
    def forward(self, x):
        with torch.profiler.record_function("dropout"):
            return super().forward(x)


class LabelledBernoulliDropout(BernoulliDropout):
    def forward(self, x):
        with torch.profiler.record_function("dropout"):
            return super().forward(x)


def labelled_dropout(x, p, training=True):
    with torch.profiler.record_function("dropout"):
        return dropout(x, p, training)


def profile(src, tgt_in, tgt_out, n: int = 3) -> None:
    """Share of self CPU time per kind of op over n fp32 steps (after one warm-up): ours, and ours as before
    transformer/dropout.py. "dropout, forward" is the CPU time inside every dropout call of the forward pass
    (record_function "dropout"; before, the attention weights' dropout inside F.sdpa is not in it)."""
    torch.manual_seed(1)
    steps = {"ours_fp32": patched(make_step(swap(ours_model(), Dropout, LabelledDropout), ours_fwd, src, tgt_in,
                                            tgt_out, bf16=False), dropout=labelled_dropout),
             "ours_fp32_before": patched(make_step(swap(ours_model(), Dropout, LabelledBernoulliDropout), ours_fwd,
                                                   src, tgt_in, tgt_out, bf16=False), attend=torch_attend)}
    kinds = {"matmul (mm, addmm, bmm)": ("aten::mm", "aten::addmm", "aten::bmm"),
             "mask draws (aten::bernoulli_, aten::random_)": ("aten::bernoulli_", "aten::random_"),
             "  of which aten::bernoulli_": ("aten::bernoulli_",)}
    for name, step in steps.items():
        step()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            t0 = time.perf_counter()
            for _ in range(n):
                step()
            wall = time.perf_counter() - t0
        events = prof.key_averages()
        total = sum(e.self_cpu_time_total for e in events)
        print(f"\nprofile   {name}: {n} steps, {wall / n * 1e3:.0f} ms/step under the profiler, "
              f"{torch.get_num_threads()} threads, load avg {load()}")
        for kind, ops in kinds.items():
            share = sum(e.self_cpu_time_total for e in events if e.key in ops) / total
            print(f"  {kind:48s} {100 * share:5.1f}%")
        inside = sum(e.cpu_time_total for e in events if e.key == "dropout")
        print(f"  {'dropout, forward (all its ops)':48s} {100 * inside / total:5.1f}%")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds (one ratio each)")
    parser.add_argument("--reps", type=int, default=2, help="training steps per candidate per round")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps per candidate first")
    parser.add_argument("--threads", type=int, default=0, help="torch intra-op threads (0: torch's default)")
    parser.add_argument("--no-bf16", action="store_true", help="skip the bf16 autocast candidates")
    parser.add_argument("--dropout-candidates", action="store_true",
                        help="experiment: add fp32 candidates of ours with other dropouts: all of torch's (before), "
                             "torch's for the attention weights only, torch.rand masks, dropout fused with the residual")
    parser.add_argument("--compile", action="store_true",
                        help="instead: time torch.compile of both models (fp32) interleaved with their eager selves")
    parser.add_argument("--profile", action="store_true",
                        help="instead: profile 3 fp32 steps of ours and of ours as before transformer/dropout.py")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(machine_header("training throughput: ours vs torch.nn.Transformer"))
    torch.manual_seed(0)
    src = torch.randint(3, VOCAB, (BATCH, SRC_LEN))  # ids 0-2 are pad/bos/eos: no padding anywhere
    tgt = torch.randint(3, VOCAB, (BATCH, TGT_LEN + 1))
    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]
    torch.manual_seed(1)
    if args.profile:
        profile(src, tgt_in, tgt_out)
        return
    fp32, bf16, summary = matmul_report()
    print(summary, flush=True)
    if args.compile:
        compiled(src, tgt_in, tgt_out, args, fp32, bf16)
        return
    ours, peer = ours_model(), PeerModel()
    print(f"params    ours {sum(p.numel() for p in ours.parameters()):,}, "
          f"peer {sum(p.numel() for p in peer.parameters()):,}")
    candidates = {"ours_fp32": make_step(ours, ours_fwd, src, tgt_in, tgt_out, bf16=False),
                  "peer_fp32": make_step(peer, peer_fwd, src, tgt_in, tgt_out, bf16=False)}
    ratios = [("ours fp32 / peer fp32  (headline)", "peer_fp32", "ours_fp32", f"target >= {TARGET}x")]
    if not args.no_bf16:
        candidates["ours_bf16"] = make_step(ours_model(), ours_fwd, src, tgt_in, tgt_out, bf16=True)
        candidates["peer_bf16"] = make_step(PeerModel(), peer_fwd, src, tgt_in, tgt_out, bf16=True)
        ratios += [("ours bf16 / peer fp32", "peer_fp32", "ours_bf16", ""),
                   ("ours bf16 / peer bf16", "peer_bf16", "ours_bf16", ""),
                   ("ours bf16 / ours fp32", "ours_fp32", "ours_bf16", "")]
    if args.dropout_candidates:
        torch.manual_seed(1)
        candidates.update(dropout_candidates(src, tgt_in, tgt_out))
        ratios += [("EXPERIMENT ours / before (torch's masks everywhere)", "ours_fp32_before", "ours_fp32", ""),
                   ("EXPERIMENT before / peer fp32", "peer_fp32", "ours_fp32_before", ""),
                   ("EXPERIMENT ours / ours with torch's attention dropout", "ours_fp32_torch_attn", "ours_fp32", ""),
                   ("EXPERIMENT torch.rand masks / peer fp32", "peer_fp32", "ours_fp32_rand", ""),
                   ("EXPERIMENT torch.rand masks / ours", "ours_fp32", "ours_fp32_rand", ""),
                   ("EXPERIMENT fused residual / peer fp32", "peer_fp32", "ours_fp32_fused_residual", ""),
                   ("EXPERIMENT fused residual / ours", "ours_fp32", "ours_fp32_fused_residual", "")]
    print(f"timing    {args.rounds} rounds x {args.reps} steps per candidate, {args.warmup} warm-up steps first, "
          f"load avg {load()}", flush=True)
    res = interleave(candidates, args.rounds, args.reps, args.warmup)
    print(f"done      load avg {load()}")
    report(candidates, res, ratios, fp32, bf16)
    headline = res.ratio("peer_fp32", "ours_fp32").median
    print(f"\nheadline  ours fp32 / peer fp32 {headline:.3f}x, target >= {TARGET}x: {verdict(headline, TARGET)}")


def compiled(src, tgt_in, tgt_out, args, fp32: float, bf16: float) -> None:
    """torch.compile (inductor) of both models, interleaved with their eager selves. Under compile,
    transformer.dropout hands over to F.dropout, whose mask inductor generates itself, for both models."""
    print("\ncompile   torch.compile of ours and of the peer (default mode), fp32", flush=True)
    candidates = {}
    for name, model, fwd in [("ours", ours_model(), ours_fwd), ("peer", PeerModel(), peer_fwd)]:
        candidates[f"{name}_fp32_eager"] = make_step(model, fwd, src, tgt_in, tgt_out, bf16=False)
        step = make_step(torch.compile(ours_model() if name == "ours" else PeerModel()), fwd, src, tgt_in,
                         tgt_out, bf16=False)
        t0 = time.perf_counter()
        try:
            step()
        except (RuntimeError, OSError, ImportError) as error:  # no C++ compiler, an inductor failure: say so
            print(f"compile   skipped: torch.compile failed on {name}: {type(error).__name__}: {error}"[:400])
            return
        print(f"compile   {name}: first step (compiling) {time.perf_counter() - t0:.1f} s", flush=True)
        candidates[f"{name}_fp32_compiled"] = step
    print(f"timing    {args.rounds} rounds x {args.reps} steps per candidate, load avg {load()}", flush=True)
    res = interleave(candidates, args.rounds, args.reps, args.warmup)
    print(f"done      load avg {load()}")
    report(candidates, res, [("compiled ours / compiled peer", "peer_fp32_compiled", "ours_fp32_compiled", ""),
                             ("compiled ours / eager peer", "peer_fp32_eager", "ours_fp32_compiled", ""),
                             ("compiled ours / eager ours", "ours_fp32_eager", "ours_fp32_compiled", ""),
                             ("compiled peer / eager peer", "peer_fp32_eager", "peer_fp32_compiled", ""),
                             ("eager ours / eager peer", "peer_fp32_eager", "ours_fp32_eager", "")], fp32, bf16)


def step_flops() -> float:
    """Matmul flops of one training step (forward x 3 for forward + backward); elementwise work left out."""
    d, f, S, T, B = D_MODEL, D_FF, SRC_LEN, TGT_LEN, BATCH
    enc = N_LAYERS * (4 * d * d + 2 * d * f + 2 * S * d) * S  # projections, FFN, QK^T and AV, per source token
    dec = N_LAYERS * (8 * d * d + 2 * d * f + 2 * T * d + 2 * S * d) * T + d * VOCAB * T
    return 3 * 2 * B * (enc + dec)


if __name__ == "__main__":
    main()
