"""Cached greedy generation of a SmolLM2-shaped Llama: ours against `transformers`' LlamaForCausalLM.generate on the
same weights, interleaved in one process (issue 28, "Speed").

    python bench/pretrained_generation.py                      # SmolLM2-135M's shape, 1 thread (a few minutes idle)
    python bench/pretrained_generation.py --layers 4 --rounds 3 --new 16   # smaller stand-in / smoke test

The model is built from a transformers.LlamaConfig with SmolLM2-135M's sizes (30 layers, d_model 576, 9 heads with 3
key/value heads, SwiGLU width 1536, vocabulary 49152, rope_theta 100000, tied embeddings; no download), random
weights from transformers' own initialisation (speed does not depend on the values), copied into ours with
transformer.pretrained.pretrained_model, the mapping load_pretrained uses. fp32, eval mode, batch 1, a 16-token
prompt, --new greedy tokens. Ours: transformer.generate.generate (use_cache=True), which also computes each step's
probability and top 5 for the UI; transformers: generate(do_sample=False) with its dynamic KV cache. Before timing
the script checks that both give the same logits and the same tokens. The headline is the median per-round ratio
time(transformers) / time(ours): above 1 means ours is faster (goal: >= 1).
"""
from __future__ import annotations

import argparse
import os

from timing import machine_header  # also puts the repo on sys.path
from versus_hf import check_same, ours_generate, ref_generate, speed_versus_transformers

import torch

from transformer.pretrained import FAMILIES, pretrained_model

TARGET = 1.0
PROMPT_LEN = 16
SMOLLM2_135M = dict(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                    num_attention_heads=9, num_key_value_heads=3, max_position_embeddings=8192, rope_theta=100000.0,
                    rms_norm_eps=1e-5, tie_word_embeddings=True, bos_token_id=0, eos_token_id=0)


def make_models(layers: int, seed: int = 0):
    """(ours, transformers' LlamaForCausalLM) with identical weights, both in eval mode."""
    import transformers
    from transformers import LlamaConfig, LlamaForCausalLM

    transformers.logging.set_verbosity_error()
    torch.manual_seed(seed)
    ref = LlamaForCausalLM(LlamaConfig(**{**SMOLLM2_135M, "num_hidden_layers": layers})).eval()
    tensors = {name: t.detach().clone() for name, t in ref.state_dict().items()}  # ours owns its copy
    return pretrained_model(FAMILIES["llama"], ref.config.to_dict(), tensors).eval(), ref


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--layers", type=int, default=30, help="decoder layers (SmolLM2-135M: 30)")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (one ratio each)")
    parser.add_argument("--new", type=int, default=64, help="new greedy tokens per generation")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (0: torch's default)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    import transformers

    print(machine_header("ours vs transformers' LlamaForCausalLM, SmolLM2-135M's shape (same weights, fp32, batch 1, "
                         "CPU)"))
    print(f"peer      transformers {transformers.__version__}")
    ours, ref = make_models(args.layers)
    cfg = ours.config
    print(f"model     {cfg.n_decoder_layers} layers, d_model {cfg.d_model}, {cfg.n_heads} heads / {cfg.n_kv_heads} "
          f"kv heads, d_ff {cfg.d_ff}, vocabulary {cfg.vocab_size}: {sum(p.numel() for p in ours.parameters()):,} "
          f"parameters (tied head counted once)")
    prompt = torch.randint(1, cfg.vocab_size, (1, PROMPT_LEN), generator=torch.Generator().manual_seed(0))
    diff = check_same(ours, ref, prompt, args.new)
    print(f"check     max |logit difference| {diff:.2e} on the prompt; greedy tokens equal ({args.new})")
    candidates = {"ours": lambda: ours_generate(ours, prompt, args.new),
                  "transformers": lambda: ref_generate(ref, prompt, args.new)}
    print(f"timing    {args.rounds} rounds, 1 warm-up, {PROMPT_LEN}-token prompt + {args.new} new tokens per call")
    speed_versus_transformers(candidates, args.rounds, args.new,
                              "cached greedy generation, time(transformers) / time(ours)", TARGET, 66)
    print(f"\nload avg at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
