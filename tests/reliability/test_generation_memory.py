"""Generation is bounded by an estimate, as training is: beam width x length x model (transformer.memory).

Regression (issue 30, item 8): four concurrent beam-8 generations of 400 tokens added ~700 MB to the server, and
nothing bounded what one generation could take."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from transformer import TransformerConfig
from transformer.memory import check_generation_memory, generation_bytes

ROOT = Path(__file__).resolve().parents[2]

PEAK = r'''
import json, sys
import torch
torch.set_num_threads(1)
from transformer import Transformer, TransformerConfig
from transformer.generate import generate

def kb(field):
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith(field + ":"))

def run(model, prompt, new, beams):
    with torch.no_grad():
        for _ in generate(model, prompt, new, strategy="beam", num_beams=beams):
            pass

cfg = TransformerConfig.from_dict(json.loads(sys.argv[1]))
prompt, new, beams = (int(a) for a in sys.argv[2:5])
torch.manual_seed(0)
model = Transformer(cfg).eval()
run(model, list(range(4, 12)), 4, 2)  # a short warm-up: start-up allocations do not count
open("/proc/self/clear_refs", "w").write("5")  # the peak (VmHWM) starts again from here
base = kb("VmRSS") * 1024
run(model, [4 + i % (cfg.vocab_size - 4) for i in range(prompt)], new, beams)
print(kb("VmHWM") * 1024 - base)
'''


def measured_peak(cfg: TransformerConfig, prompt: int, new: int, beams: int) -> int:
    out = subprocess.run([sys.executable, "-c", PEAK, json.dumps(cfg.to_dict()), str(prompt), str(new), str(beams)],
                         cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert out.returncode == 0, out.stderr[-2000:]
    return int(out.stdout.split()[-1])


@pytest.mark.parametrize("arch, layers, d_model, heads, vocab, max_len, prompt, new, beams", [
    ("decoder-only", 4, 256, 8, 2000, 1024, 600, 400, 8),  # a long prompt: its (T x T) scores dominate
    ("decoder-only", 6, 384, 6, 512, 512, 16, 400, 8),  # the cache dominates
    ("encoder-decoder", 3, 256, 8, 8000, 512, 300, 200, 8)])
def test_generation_memory_estimate_is_an_upper_bound_of_the_measured_peak(arch, layers, d_model, heads, vocab,
                                                                          max_len, prompt, new, beams):
    """Invariant: the estimate is above the peak RSS growth of a real beam search (after a warm-up), and not so
    loose that it refuses generations that fit (within 4x + 200 MB)."""
    cfg = TransformerConfig(arch=arch, vocab_size=vocab, d_model=d_model, n_heads=heads, d_ff=4 * d_model,
                            dropout=0.0, n_encoder_layers=layers if arch == "encoder-decoder" else 0,
                            n_decoder_layers=layers, max_len=max_len)
    measured, estimate = measured_peak(cfg, prompt, new, beams), generation_bytes(cfg, prompt, new, beams)
    print(f"measured {measured / 2**20:.0f} MB, estimate {estimate / 2**20:.0f} MB")
    assert measured <= estimate + (64 << 20) and estimate <= 4 * measured + (200 << 20)


def test_a_generation_over_the_budget_is_refused_with_what_to_lower():
    """GPT-2 small's shape, 8 beams of 400 tokens after a 1,000-token prompt: about 2 GiB by the estimate."""
    gpt2 = TransformerConfig(arch="decoder-only", vocab_size=50257, d_model=768, n_heads=12, d_ff=3072,
                             n_decoder_layers=12, max_len=1024)
    with pytest.raises(ValueError, match="lower the beams"):
        check_generation_memory(gpt2, 1000, 400, 8, 512 << 20)
    check_generation_memory(gpt2, 20, 100, 1, 512 << 20)  # a greedy continuation of a short prompt fits
