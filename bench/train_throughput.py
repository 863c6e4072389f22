"""Training throughput of our encoder-decoder against torch.nn.Transformer of the same size.

    python bench/train_throughput.py                # the real measurement (~2-3 minutes)
    python bench/train_throughput.py --rounds 2 --reps 1 --warmup 1   # smoke test

One full training step each: embedding + positional table, 3+3 post-norm layers (d_model 256, 8 heads, d_ff 1024,
dropout 0.1), output projection tied to the embedding, cross-entropy, backward, AdamW step. Source and target
length 64, batch 32, vocabulary 1000, no padding. tokens/s counts target tokens (B * T = 2048 per step).
Ours and the peer run interleaved in this process; the headline is the median of the per-round fp32/fp32 ratio.
"""
from __future__ import annotations

import argparse
import math

from timing import interleave, machine_header, matmul_report, table, verdict  # also puts the repo on sys.path

import torch
import torch.nn.functional as F
from torch import nn

from transformer import Transformer, TransformerConfig
from transformer.embeddings import sinusoidal_table

TARGET = 1.1  # ours >= 1.1x nn.Transformer's fp32 tokens/s
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


class RandMaskDropout(nn.Dropout):
    """Experiment (--rand-dropout), not library code: the same Bernoulli(1 - p) keep mask and 1 / (1 - p) scale as
    nn.Dropout, drawn with torch.rand (one 32-bit draw per element) instead of bernoulli_. On non-Intel CPUs ATen's
    bernoulli_ draws a 64-bit double per element serially (its parallel MKL path is Intel-only), on Intel it is
    faster than torch.rand. It also changes the random stream of a seeded run."""

    def forward(self, x):
        if not self.training or not 0.0 < self.p < 1.0:
            return super().forward(x)
        keep = torch.rand(x.shape, device=x.device).ge_(self.p).to(x.dtype).div_(1 - self.p)
        return x * keep


def with_rand_dropout(model: nn.Module) -> nn.Module:
    for module in model.modules():
        if type(module) is nn.Dropout:
            module.__class__ = RandMaskDropout
    return model


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=12, help="interleaved rounds (one ratio each)")
    parser.add_argument("--reps", type=int, default=2, help="training steps per candidate per round")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps per candidate first")
    parser.add_argument("--threads", type=int, default=0, help="torch intra-op threads (0: torch's default)")
    parser.add_argument("--no-bf16", action="store_true", help="skip the bf16 autocast candidates")
    parser.add_argument("--rand-dropout", action="store_true",
                        help="experiment: add candidates of ours whose dropout masks come from torch.rand")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(machine_header("training throughput: ours vs torch.nn.Transformer"))
    fp32, bf16, summary = matmul_report()
    print(summary, flush=True)

    torch.manual_seed(0)
    src = torch.randint(3, VOCAB, (BATCH, SRC_LEN))  # ids 0-2 are pad/bos/eos: no padding anywhere
    tgt = torch.randint(3, VOCAB, (BATCH, TGT_LEN + 1))
    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]
    ours_fwd = lambda m, s, t: m(s, t).logits  # noqa: E731
    peer_fwd = lambda m, s, t: m(s, t)  # noqa: E731
    torch.manual_seed(1)
    ours, ours16 = ours_model(), ours_model()
    peer, peer16 = PeerModel(), PeerModel()
    n_ours = sum(p.numel() for p in ours.parameters())
    n_peer = sum(p.numel() for p in peer.parameters())
    print(f"params    ours {n_ours:,}, peer {n_peer:,}")
    candidates = {
        "ours_fp32": make_step(ours, ours_fwd, src, tgt_in, tgt_out, bf16=False),
        "peer_fp32": make_step(peer, peer_fwd, src, tgt_in, tgt_out, bf16=False),
    }
    if not args.no_bf16:
        candidates["ours_bf16"] = make_step(ours16, ours_fwd, src, tgt_in, tgt_out, bf16=True)
        candidates["peer_bf16"] = make_step(peer16, peer_fwd, src, tgt_in, tgt_out, bf16=True)
    if args.rand_dropout:
        candidates["ours_fp32_randdrop"] = make_step(with_rand_dropout(ours_model()), ours_fwd, src, tgt_in, tgt_out,
                                                     bf16=False)
        if not args.no_bf16:
            candidates["ours_bf16_randdrop"] = make_step(with_rand_dropout(ours_model()), ours_fwd, src, tgt_in,
                                                         tgt_out, bf16=True)
    print(f"timing    {args.rounds} rounds x {args.reps} steps per candidate, {args.warmup} warm-up steps first")
    res = interleave(candidates, args.rounds, args.reps, args.warmup)

    tokens = BATCH * TGT_LEN
    flops = step_flops()
    rows = []
    for name in candidates:
        sec = res.median(name)
        peak = fp32 if "fp32" in name else bf16
        rows.append([name, f"{sec * 1e3:.1f}", f"{tokens / sec:,.0f}", f"{flops / sec / 1e9:.0f}",
                     f"{100 * flops / sec / 1e9 / peak:.0f}%"])
    print()
    print(table(rows, ["candidate", "ms/step (median)", "target tokens/s", "matmul GFLOP/s", "of peak matmul"]))
    print()
    headline = res.ratio("peer_fp32", "ours_fp32")
    ratios = [("ours fp32 / peer fp32  (headline)", headline, f"target >= {TARGET}x: {verdict(headline.median, TARGET)}")]
    if not args.no_bf16:
        ratios += [("ours bf16 / peer fp32", res.ratio("peer_fp32", "ours_bf16"), ""),
                   ("ours bf16 / peer bf16", res.ratio("peer_bf16", "ours_bf16"), ""),
                   ("ours bf16 / ours fp32", res.ratio("ours_fp32", "ours_bf16"), "")]
    if args.rand_dropout:
        ratios += [("EXPERIMENT ours fp32 rand-dropout / peer fp32", res.ratio("peer_fp32", "ours_fp32_randdrop"), ""),
                   ("EXPERIMENT ours fp32 rand-dropout / ours fp32", res.ratio("ours_fp32", "ours_fp32_randdrop"), "")]
        if not args.no_bf16:
            ratios += [("EXPERIMENT ours bf16 rand-dropout / peer bf16",
                        res.ratio("peer_bf16", "ours_bf16_randdrop"), "")]
    for label, stats, note in ratios:
        print(f"{label:46s} {stats}  {note}")


def step_flops() -> float:
    """Matmul flops of one training step (forward x 3 for forward + backward); elementwise work left out."""
    d, f, S, T, B = D_MODEL, D_FF, SRC_LEN, TGT_LEN, BATCH
    enc = N_LAYERS * (4 * d * d + 2 * d * f + 2 * S * d) * S  # projections, FFN, QK^T and AV, per source token
    dec = N_LAYERS * (8 * d * d + 2 * d * f + 2 * T * d + 2 * S * d) * T + d * VOCAB * T
    return 3 * 2 * B * (enc + dec)


if __name__ == "__main__":
    main()
