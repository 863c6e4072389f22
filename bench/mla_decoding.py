"""MLA's cached decoding: in latent space (W^UK absorbed into the queries, as transformer/latent_attention.py does)
against rebuilding every head's keys and values from the cached latents at each step, with MHA as the yardstick.

    python bench/mla_decoding.py [--rounds 5] [--new 256] [--threads 1]

Decoder-only, 4 layers, d_model 256, 8 heads, d_ff 1024, pre-norm GELU, random weights; batch 1, a 16-token
prompt, greedy, never stopping at EOS (transformer.train.compare.decode_seconds). Rounds interleave the three.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import transformer.latent_attention as la  # noqa: E402
from transformer import Transformer, TransformerConfig  # noqa: E402
from transformer.train.compare import decode_seconds  # noqa: E402


def rebuilt(self, q, q_rope, kept, mask, is_causal, bias):
    """The path without absorption: up-project all S cached latents to keys and values at every step."""
    H, S = self.n_heads, kept[0].size(2)
    k = la.split_heads(self.k_up(kept[0][:, 0]), H)  # (B, H, S, d_k)
    v = la.split_heads(self.v_up(kept[0][:, 0]), H)  # (B, H, S, d_k)
    if self.d_rope:
        q = torch.cat([q, q_rope], dim=-1)
        k = torch.cat([k, kept[1].expand(q.size(0), H, S, self.d_rope)], dim=-1)
    return la.attend(self, q, k, v, mask, is_causal=is_causal, dropout_p=0.0, bias=bias)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--new", type=int, default=256)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    models = {}
    for name, kw in (("MHA", {}), ("MLA", dict(attention="mla"))):
        torch.manual_seed(0)
        models[name] = Transformer(TransformerConfig(
            arch="decoder-only", vocab_size=1000, d_model=256, n_heads=8, n_decoder_layers=4, d_ff=1024,
            max_len=1024, norm_first=True, activation="gelu", **kw)).eval()
    prompt = list(range(3, 19))
    absorbed = la.MultiHeadLatentAttention._attend_in_latent_space

    def rate(name, path=absorbed):
        la.MultiHeadLatentAttention._attend_in_latent_space = path
        try:
            tokens, seconds = decode_seconds(models[name], prompt, args.new)
        finally:
            la.MultiHeadLatentAttention._attend_in_latent_space = absorbed
        return tokens / seconds

    rate("MHA"), rate("MLA"), rate("MLA", rebuilt)  # warm-up
    rates = {"MHA": [], "MLA (latent space)": [], "MLA (keys and values rebuilt)": []}
    for _ in range(args.rounds):
        rates["MHA"].append(rate("MHA"))
        rates["MLA (latent space)"].append(rate("MLA"))
        rates["MLA (keys and values rebuilt)"].append(rate("MLA", rebuilt))
    for name, values in rates.items():
        print(f"{name:32s} {statistics.median(values):7.0f} tokens/s (median of {args.rounds})")
    ratio = [a / b for a, b in zip(rates["MLA (latent space)"], rates["MLA (keys and values rebuilt)"])]
    print(f"latent space / rebuilt: {statistics.median(ratio):.2f}x")


if __name__ == "__main__":
    main()
