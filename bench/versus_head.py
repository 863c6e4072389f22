"""The working tree's transformer/ against the last commit's, interleaved in one process: the measured effect of
uncommitted performance changes.

    python bench/versus_head.py                  # train step fp32 + bf16, captured forward at batch 1 and 32
    python bench/versus_head.py --rev HEAD~1 --rounds 4   # another revision, smoke test

The committed package is extracted with `git archive` into a temporary directory and imported under another
name, so both versions run side by side on the same weights (same seed, same construction order) and inputs.
"""
from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

from timing import ROOT, interleave, machine_header, table  # also puts the repo on sys.path

import torch

import transformer as work_pkg
from train_throughput import BATCH, SRC_LEN, TGT_LEN, VOCAB, make_step


def load_revision(rev: str, into: Path):
    """Import transformer/ as it is at `rev` under the name `transformer_<rev>`."""
    data = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "transformer"], capture_output=True,
                          check=True).stdout
    tarfile.open(fileobj=BytesIO(data)).extractall(into, filter="data")
    name = "transformer_" + "".join(c if c.isalnum() else "_" for c in rev)
    path = into / "transformer"
    spec = importlib.util.spec_from_file_location(name, path / "__init__.py", submodule_search_locations=[str(path)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def config(pkg, max_len: int):
    return pkg.TransformerConfig(arch="encoder-decoder", d_model=256, n_heads=8, n_encoder_layers=3,
                                 n_decoder_layers=3, d_ff=1024, vocab_size=VOCAB, max_len=max_len, dropout=0.1)


def model(pkg, max_len: int):
    torch.manual_seed(1)
    return pkg.Transformer(config(pkg, max_len))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rev", default="HEAD", help="git revision to compare the working tree against")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    print(machine_header(f"working tree vs {args.rev}: transformer/"))
    with tempfile.TemporaryDirectory() as tmp:
        pkgs = {args.rev: load_revision(args.rev, Path(tmp)), "work": work_pkg}
        torch.manual_seed(0)
        src, tgt = torch.randint(3, VOCAB, (BATCH, SRC_LEN)), torch.randint(3, VOCAB, (BATCH, TGT_LEN + 1))
        rows = []
        for bf16 in (False, True):
            steps = {name: make_step(model(p, 128), lambda m, s, t: m(s, t).logits, src, tgt[:, :-1], tgt[:, 1:], bf16)
                     for name, p in pkgs.items()}
            res = interleave(steps, args.rounds, reps=1, warmup=2, log=False)
            rows.append([f"train step {'bf16' if bf16 else 'fp32'}", f"{res.median(args.rev) * 1e3:.1f}",
                         f"{res.median('work') * 1e3:.1f}", str(res.ratio(args.rev, "work"))])
        for batch in (1, 32):
            s, t = torch.randint(3, VOCAB, (batch, 128)), torch.randint(3, VOCAB, (batch, 128))
            models = {name: model(p, 128).eval() for name, p in pkgs.items()}
            with torch.no_grad():
                a, b = (m(s, t, return_attention=True) for m in models.values())
                same = torch.equal(a.logits, b.logits) and all(
                    torch.equal(x, y) for x, y in zip(a.attention.encoder_self + a.attention.cross,
                                                      b.attention.encoder_self + b.attention.cross))
                fwd = {name: (lambda m: lambda: m(s, t, return_attention=True))(m) for name, m in models.items()}
                res = interleave(fwd, args.rounds, reps=max(1, 32 // batch), warmup=2, log=False)
            rows.append([f"captured forward, batch {batch} (bit-identical: {same})",
                         f"{res.median(args.rev) * 1e3:.1f}", f"{res.median('work') * 1e3:.1f}",
                         str(res.ratio(args.rev, "work"))])
    print()
    print(table(rows, ["what", f"{args.rev} ms", "work ms", "speed-up of work (median per-round ratio)"]))


if __name__ == "__main__":
    main()
