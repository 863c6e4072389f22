"""Does bf16 autocast pay for training on this CPU? Training-step time with and without it, interleaved, for the
Train tab's presets and the shipped language model's size.

    python bench/bf16_training.py [--threads N]
"""
import argparse
import statistics

import torch

import timing  # noqa: F401  (puts the repository on sys.path)
from timing import interleave  # noqa: E402
from transformer import Transformer, TransformerConfig  # noqa: E402
from transformer.train import TrainConfig, Trainer  # noqa: E402

SIZES = {  # name: (model config, batch, sequence length)
    "Train tab tiny (enc-dec 1+1, d 64)": (dict(arch="encoder-decoder", d_model=64, n_heads=4, n_encoder_layers=1,
                                                 n_decoder_layers=1, d_ff=256), 64, 16),
    "Train tab small (enc-dec 2+2, d 128)": (dict(arch="encoder-decoder", d_model=128, n_heads=4, n_encoder_layers=2,
                                                   n_decoder_layers=2, d_ff=512), 64, 16),
    "shakespeare-char (dec 6, d 256)": (dict(arch="decoder-only", d_model=256, n_heads=8, n_decoder_layers=6,
                                             d_ff=1024), 64, 128),
}


class RandomData:
    def __init__(self, cfg, batch, length):
        self.cfg, self.batch, self.length = cfg, batch, length

    def train_batch(self, batch_size):
        x = torch.randint(3, self.cfg.vocab_size, (self.batch, self.length))
        return ((x, x) if self.cfg.is_encoder_decoder else (x,)), x


def step_fn(model_kw, batch, length, bf16):
    torch.manual_seed(0)
    cfg = TransformerConfig(vocab_size=64, max_len=length, dropout=0.0, **model_kw)
    trainer = Trainer(Transformer(cfg), None, RandomData(cfg, batch, length),
                      TrainConfig(steps=10**9, eval_every=10**9, schedule="constant", lr=1e-3, bf16=bf16))
    events = trainer.run()
    return lambda: next(events)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--rounds", type=int, default=8)
    args = p.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    for name, (kw, batch, length) in SIZES.items():
        reps = 10 if kw["d_model"] < 256 else 2
        result = interleave({"fp32": step_fn(kw, batch, length, False), "bf16": step_fn(kw, batch, length, True)},
                            rounds=args.rounds, reps=reps, log=False)
        speedup = statistics.median(result.ratios("fp32", "bf16"))
        print(f"{name:40s} fp32 {result.median('fp32') * 1e3:7.1f} ms/step   bf16 {result.median('bf16') * 1e3:7.1f} "
              f"ms/step   bf16 speed-up {speedup:.2f}x")


if __name__ == "__main__":
    main()
