"""Our encoder-decoder against `transformers`' MarianMTModel with the same weights, interleaved in one process: cached
greedy and beam generation of a Marian-shaped model (opus-mt-en-es's sizes).

    python bench/marian_generation.py                       # greedy and beam 4, 1 thread (a few minutes when idle)
    python bench/marian_generation.py --rounds 2 --new 8    # smoke test

The model is built from a transformers.MarianConfig with opus-mt-en-es's sizes (6 + 6 layers, d_model 512, 8
heads, d_ff 2048, vocabulary 65001, 512 positions, SiLU, embeddings x sqrt(d_model); no download) and transformers'
own random initialisation (speed does not depend on the values), copied into ours with
transformer.pretrained.pretrained_model, the mapping load_pretrained uses. </s> gets a logits bias of -10^4 so
that both sides generate exactly --new tokens. fp32, eval mode, batch 1, a --source-token source, 1 thread by
default. transformers' generate runs with Marian's generation settings (pad banned by bad_words_ids) and the three
that match ours (forced_eos_token_id None, renormalize_logits True, early_stopping False; see
tests/unit/test_pretrained_marian.py); before timing, both sides' logits and generated tokens are checked equal.
Headline figures are median per-round ratios time(transformers) / time(ours): above 1 means ours is faster.
"""
from __future__ import annotations

import argparse
import os

from timing import machine_header  # also puts the repo on sys.path
from versus_hf import speed_versus_transformers

import torch

from transformer.generate import generate
from transformer.pretrained import FAMILIES, pretrained_model

OPUS_MT_EN_ES = dict(vocab_size=65001, d_model=512, encoder_layers=6, decoder_layers=6, encoder_attention_heads=8,
                     decoder_attention_heads=8, encoder_ffn_dim=2048, decoder_ffn_dim=2048,
                     max_position_embeddings=512, activation_function="swish", scale_embedding=True,
                     pad_token_id=65000, decoder_start_token_id=65000, eos_token_id=0, forced_eos_token_id=0)
TARGET = 1.0  # issue 28: ours at least as fast as transformers' generate


def make_models(seed: int = 0):
    """(ours, transformers' MarianMTModel) with identical weights, both in eval mode."""
    import transformers
    from transformers import MarianConfig, MarianMTModel

    transformers.logging.set_verbosity_error()
    torch.manual_seed(seed)
    ref = MarianMTModel(MarianConfig(**OPUS_MT_EN_ES)).eval()
    with torch.no_grad():
        ref.final_logits_bias[0, ref.config.eos_token_id] = -1e4  # never </s>: both sides run the full length
    tensors = {name: t.detach().clone() for name, t in ref.state_dict().items()}  # ours owns its copy
    return pretrained_model(FAMILIES["marian"], ref.config.to_dict(), tensors).eval(), ref


def ours_generate(model, src: torch.Tensor, new: int, beams: int) -> list[int]:
    strategy = "beam" if beams > 1 else "greedy"
    return [s.token_id for s in generate(model, src[0], new, strategy=strategy, num_beams=beams)]


def ref_generate(ref, src: torch.Tensor, new: int, beams: int) -> list[int]:
    out = ref.generate(src, attention_mask=torch.ones_like(src), max_new_tokens=new, do_sample=False,
                       num_beams=beams, bad_words_ids=[[ref.config.pad_token_id]], forced_eos_token_id=None,
                       renormalize_logits=True, early_stopping=False, length_penalty=1.0)
    return out[0, 1:].tolist()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=8, help="interleaved rounds per strategy")
    parser.add_argument("--new", type=int, default=64, help="new tokens per generation")
    parser.add_argument("--source", type=int, default=24, help="source tokens (</s> included)")
    parser.add_argument("--beams", type=int, default=4, help="beams of the beam-search part")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(machine_header("Marian-shaped generation: ours vs transformers (bench/marian_generation.py)"))
    ours, ref = make_models()
    print(f"model     {sum(p.numel() for p in ours.parameters()):,} parameters (shared embedding counted once)")
    src = torch.randint(1, 65000, (1, args.source), generator=torch.Generator().manual_seed(0))
    src[0, -1] = 0  # </s>
    tgt = torch.cat([torch.tensor([[65000]]), src[:, :8]], dim=1)
    with torch.no_grad():
        diff = (ours(src, tgt).logits - ref(input_ids=src, decoder_input_ids=tgt).logits).abs().max().item()
    assert diff < 1e-3, f"logits differ by {diff}"
    print(f"check     max |logit difference| {diff:.2e}")
    for beams in (1, args.beams):
        label = "greedy" if beams == 1 else f"beam {beams}"
        mine, theirs = ours_generate(ours, src, args.new, beams), ref_generate(ref, src, args.new, beams)
        assert mine == theirs, f"{label}: tokens differ\n{mine}\n{theirs}"
        assert len(mine) == args.new, f"{label}: {len(mine)} tokens, not {args.new}"
        print(f"\n{label}: the same {args.new} tokens on both sides; {args.rounds} rounds, 1 warm-up, a "
              f"{args.source}-token source + {args.new} new tokens per call")
        speed_versus_transformers({"ours": lambda: ours_generate(ours, src, args.new, beams),
                                   "transformers": lambda: ref_generate(ref, src, args.new, beams)},
                                  args.rounds, args.new, f"{label}, time(transformers) / time(ours)", TARGET, 50)
    print(f"\nload avg at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
