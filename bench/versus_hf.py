"""Our decoder running GPT-2 small against `transformers`' GPT2LMHeadModel with the same weights, interleaved in one
process: a full forward pass, and greedy generation with the KV cache.

    python bench/versus_hf.py                          # the real measurement, 1 thread (1-2 min when idle)
    python bench/versus_hf.py --rounds 2 --new 8       # smoke test

Model: GPT-2 small's sizes (12 layers, d_model 768, 12 heads, d_ff 3072, vocabulary 50257, 1024 positions), random
weights from transformers' own initialisation (speed does not depend on the values), copied into ours with
transformer.pretrained.gpt2_model, the same mapping load_gpt2 uses. fp32, eval mode, no_grad, batch 1.
- forward: logits for a prompt of --prompt tokens. transformers runs with use_cache=False (no cache to build) and
  its default attention (sdpa); ours with return_attention=False (the fused kernel).
- generate: a 16-token prompt and --new greedy tokens. Ours: transformer.generate.generate(use_cache=True), which
  also computes each step's probability and top-5 for the UI. transformers: GPT2LMHeadModel.generate(do_sample=False)
  with its dynamic KV cache. Both must produce the same tokens (checked before timing).
Headline figures are the median per-round ratios time(transformers) / time(ours): above 1 means ours is faster.
"""
from __future__ import annotations

import argparse

from timing import RatioStats, interleave, machine_header, table, verdict  # also puts the repo on sys.path

import torch

from transformer.generate import generate
from transformer.pretrained import gpt2_model

TARGET = 1.0  # ours must not be slower: time(transformers) / time(ours) >= 1
PROMPT_LEN = 16


def make_models(seed: int = 0):
    """(ours, transformers' model) with identical weights, both in eval mode."""
    import transformers
    from transformers import GPT2Config, GPT2LMHeadModel

    transformers.logging.set_verbosity_error()
    torch.manual_seed(seed)
    ref = GPT2LMHeadModel(GPT2Config()).eval()
    tensors = {name: t.detach().clone() for name, t in ref.state_dict().items()}  # ours owns its copy
    ours = gpt2_model(ref.config.to_dict(), tensors).eval()
    return ours, ref


def ours_generate(model, prompt: torch.Tensor, new: int) -> list[int]:
    return [s.token_id for s in generate(model, prompt[0], new, strategy="greedy", use_cache=True)]


def ref_generate(ref, prompt: torch.Tensor, new: int) -> list[int]:
    out = ref.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=new, min_new_tokens=new,
                       do_sample=False, num_beams=1, pad_token_id=50256)
    return out[0, prompt.size(1):].tolist()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds (one ratio each) per benchmark")
    parser.add_argument("--prompt", type=int, default=128, help="tokens in the forward benchmark's input")
    parser.add_argument("--new", type=int, default=32, help="new tokens per generation")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (0: torch's default)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(machine_header("GPT-2 small: ours vs transformers' GPT2LMHeadModel (same weights, fp32, batch 1, CPU)"))
    import transformers

    print(f"peer      transformers {transformers.__version__}")
    ours, ref = make_models()
    n_params = sum(p.numel() for p in ours.parameters())
    print(f"model     {n_params:,} parameters (tied head counted once)")

    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 50256, (1, args.prompt), generator=g)
    prompt = torch.randint(0, 50256, (1, PROMPT_LEN), generator=g)
    with torch.no_grad():  # the properties that make the comparison fair: same numbers, same tokens
        diff = (ours(ids).logits - ref(ids, use_cache=False).logits).abs().max().item()
    assert diff < 1e-3, f"logits differ by {diff}"
    mine, theirs = ours_generate(ours, prompt, args.new), ref_generate(ref, prompt, args.new)
    assert mine == theirs and len(mine) == args.new, f"greedy tokens differ:\n{mine}\n{theirs}"
    print(f"check     max |logit difference| {diff:.2e} on {args.prompt} tokens; greedy tokens equal ({args.new})")

    def forward_ours():
        with torch.no_grad():
            ours(ids)

    def forward_ref():
        with torch.no_grad():
            ref(ids, use_cache=False)

    print(f"\nforward: {args.rounds} rounds, 1 warm-up, 1 call of {args.prompt} tokens per round")
    fwd = interleave({"ours": forward_ours, "transformers": forward_ref}, args.rounds, reps=1, warmup=1)
    print(f"\ngenerate: {args.rounds} rounds, 1 warm-up, {PROMPT_LEN}-token prompt + {args.new} new tokens per call")
    gen = interleave({"ours": lambda: ours_generate(ours, prompt, args.new),
                      "transformers": lambda: ref_generate(ref, prompt, args.new)}, args.rounds, reps=1, warmup=1)

    rows = []
    for name in ("ours", "transformers"):
        f, s = fwd.median(name), gen.median(name)
        rows.append([name, f"{f * 1e3:.0f}", f"{args.prompt / f:,.0f}", f"{s / args.new * 1e3:.1f}",
                     f"{args.new / s:.1f}"])
    print()
    print(table(rows, ["candidate", "forward ms (median)", "forward tokens/s", "generate ms/token", "generate tokens/s"]))
    print()
    for label, res in (("forward", fwd), ("cached greedy generation", gen)):
        stats: RatioStats = res.ratio("transformers", "ours")
        print(f"{label + ', time(transformers) / time(ours)':54s} {stats}  target >= {TARGET}: "
              f"{verdict(stats.median, TARGET)}")


if __name__ == "__main__":
    main()
