"""The translation model's training step (issue 21, goal 3): ours against torch.nn.Transformer of the same size, on
the same padded batches of real verse pairs.
    python bench/translation_step.py                 # 12 rounds, fp32 and bf16 (about 4 minutes when idle)
    python bench/translation_step.py --rounds 2      # smoke test
The model is checkpoints/translate-en-es's configuration (4+4 pre-norm layers, d_model 256, 4 heads, d_ff 1024,
dropout 0.2, its shared 8,000-token BPE vocabulary), freshly initialised, as `python -m transformer.translation.train`
builds it today: no attention biases (the paper's projections; `attention_bias=False`). A second candidate of ours
has the biases, as nn.Transformer does. Batches: the committed held-out verses (data/bible-en-es, 2,000 pairs) read by
TranslationData, so they are bucketed by length and padded exactly as in training (batch 64, the CLI's default);
each round draws the same batch for every candidate. Loss: cross-entropy with label smoothing 0.1, padding ignored;
AdamW; dropout on. bf16 autocast is how the translation run trained on this CPU (transformer.train.bf16_pays).

The peer: nn.Transformer(norm_first=True) with what a user adds around it for the same model: one shared embedding
x sqrt(d_model), the sinusoidal table, dropout, the output Linear tied to the embedding, key-padding masks on source,
target and memory, and the causal mask.
"""
from __future__ import annotations

import argparse
import json
import math

from timing import ROOT, interleave, machine_header, table  # also puts the repo on sys.path

import torch
import torch.nn.functional as F
from torch import nn

from transformer import Transformer, TransformerConfig
from transformer.checkpoint import read_info
from transformer.embeddings import sinusoidal_table
from transformer.tokenization import tokenizer_from_dict
from transformer.translation.corpus import held_out
from transformer.translation.data import TranslationData

CHECKPOINT = ROOT / "checkpoints" / "translate-en-es"
BATCH = 64
TARGET = 1.2


class PeerModel(nn.Module):
    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.register_buffer("pe", sinusoidal_table(cfg.max_len, cfg.d_model), persistent=False)
        self.dropout = nn.Dropout(cfg.dropout)
        self.transformer = nn.Transformer(cfg.d_model, cfg.n_heads, cfg.n_encoder_layers, cfg.n_decoder_layers,
                                          cfg.d_ff, cfg.dropout, batch_first=True, norm_first=True)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.embed.weight

    def _embed(self, ids):
        return self.dropout(self.embed(ids) * math.sqrt(self.cfg.d_model) + self.pe[: ids.size(1)])

    def forward(self, src, tgt):
        pad = self.cfg.pad_id
        causal = nn.Transformer.generate_square_subsequent_mask(tgt.size(1))
        out = self.transformer(self._embed(src), self._embed(tgt), tgt_mask=causal, tgt_is_causal=True,
                               src_key_padding_mask=src == pad, tgt_key_padding_mask=tgt == pad,
                               memory_key_padding_mask=src == pad)
        return self.lm_head(out)


def make_step(model, forward, batches: list, bf16: bool, pad_id: int):
    """One training step per call; the k-th call of every candidate trains on batches[k], so all see the same."""
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    model.train()
    calls = [0]

    def step():
        (src, tgt_in), tgt_out = batches[calls[0] % len(batches)]
        calls[0] += 1
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            logits = forward(model, src, tgt_in)
        loss = F.cross_entropy(logits.float().flatten(0, 1), tgt_out.flatten(), ignore_index=pad_id,
                               label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    return step


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=12)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--no-bf16", action="store_true")
    args = p.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(machine_header("translation training step: ours vs torch.nn.Transformer"))
    info = read_info(CHECKPOINT)
    tokenizer = tokenizer_from_dict(json.loads((CHECKPOINT / "tokenizer.json").read_text()))
    cfg = TransformerConfig.from_dict({**info["model"], "attention_bias": False})
    test, valid = held_out()
    data = TranslationData(test + valid, [], tokenizer, cfg, seed=0, n_val=0)
    batch = [data.train_batch(BATCH) for _ in range(args.rounds + 2)]  # warm-up and rounds: one each
    pad_share = sum(int((b[0][0] == cfg.pad_id).sum() + (b[1] == cfg.pad_id).sum()) for b in batch) / \
        sum(b[0][0].numel() + b[1].numel() for b in batch)

    torch.manual_seed(0)
    ours = Transformer(cfg)
    ours_bias = Transformer(TransformerConfig.from_dict({**cfg.to_dict(), "attention_bias": True}))
    peer = PeerModel(cfg)
    count = lambda m: sum(t.numel() for t in m.parameters())  # noqa: E731
    print(f"params    ours {count(ours):,}, ours+bias {count(ours_bias):,}, peer {count(peer):,}; "
          f"batch {BATCH} pairs, padded per length bucket ({pad_share:.0%} of positions are padding)")
    ours_fwd = lambda m, s, t: m(s, t).logits  # noqa: E731
    peer_fwd = lambda m, s, t: m(s, t)  # noqa: E731
    candidates = {"ours_fp32": make_step(ours, ours_fwd, batch, False, cfg.pad_id),
                  "ours+bias_fp32": make_step(ours_bias, ours_fwd, batch, False, cfg.pad_id),
                  "peer_fp32": make_step(peer, peer_fwd, batch, False, cfg.pad_id)}
    if not args.no_bf16:
        candidates.update({"ours_bf16": make_step(Transformer(cfg), ours_fwd, batch, True, cfg.pad_id),
                           "peer_bf16": make_step(PeerModel(cfg), peer_fwd, batch, True, cfg.pad_id)})
    names = list(candidates)
    res = interleave(candidates, rounds=args.rounds, reps=1, warmup=2)
    print()
    print(table([[n, f"{res.median(n) * 1e3:.0f}"] for n in names], ["candidate", "ms/step (median)"]))
    print()
    print(f"{'ours fp32 / peer fp32 (headline)':40s} {res.ratio('peer_fp32', 'ours_fp32')}  target >= {TARGET}x")
    print(f"{'ours+bias fp32 / peer fp32':40s} {res.ratio('peer_fp32', 'ours+bias_fp32')}")
    if not args.no_bf16:
        print(f"{'ours bf16 / peer bf16':40s} {res.ratio('peer_bf16', 'ours_bf16')}  target >= {TARGET}x")


if __name__ == "__main__":
    main()
