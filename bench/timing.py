"""Shared timing helpers for the benchmarks: interleaved medians of ratios, machine description, matmul rate.

Every benchmark compares candidates *interleaved in one process*: round after round, each candidate runs a short
block, and the ratio is taken inside a round. A background job that slows the machine for a while slows both
sides of the same round, so the median of the per-round ratios is far steadier than the ratio of two separately
measured averages. The order inside a round alternates (A B, B A, ...) so neither side always runs "warm".
"""
from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/x.py` puts bench/, not the repository, on sys.path
    sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from transformer.machine import cpu_name  # noqa: E402


@dataclass
class Interleaved:
    """Seconds per call of each candidate, one entry per round (rounds are aligned across candidates)."""

    seconds: dict[str, list[float]]

    def median(self, name: str) -> float:
        return statistics.median(self.seconds[name])

    def ratios(self, slow: str, fast: str) -> list[float]:
        """Per-round speed-up of `fast` over `slow`: time(slow) / time(fast), i.e. rate(fast) / rate(slow)."""
        return [s / f for s, f in zip(self.seconds[slow], self.seconds[fast])]

    def ratio(self, slow: str, fast: str) -> "RatioStats":
        return RatioStats.of(self.ratios(slow, fast))


@dataclass
class RatioStats:
    median: float
    low: float  # 25th percentile
    high: float  # 75th percentile
    n: int

    @classmethod
    def of(cls, values: list[float]) -> "RatioStats":
        if len(values) < 2:
            return cls(values[0], values[0], values[0], 1)
        q = statistics.quantiles(values, n=4, method="inclusive")
        return cls(statistics.median(values), q[0], q[2], len(values))

    def __str__(self) -> str:
        return f"{self.median:.3f}x (IQR {self.low:.3f}-{self.high:.3f}, {self.n} rounds)"


def interleave(candidates: dict[str, Callable[[], object]], rounds: int, reps: int = 1, warmup: int = 2,
               log: bool = True) -> Interleaved:
    """Run every candidate `warmup` times, then `rounds` rounds of `reps` calls each, alternating the order.

    Returns the mean seconds per call of each candidate in each round.
    """
    names = list(candidates)
    for name in names:
        for _ in range(warmup):
            candidates[name]()
    seconds: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        order = names if r % 2 == 0 else names[::-1]
        for name in order:
            fn = candidates[name]
            t0 = time.perf_counter()
            for _ in range(reps):
                fn()
            seconds[name].append((time.perf_counter() - t0) / reps)
        if log:
            cells = "  ".join(f"{n}={seconds[n][-1] * 1e3:8.2f}ms" for n in names)
            print(f"  round {r + 1:2d}/{rounds}: {cells}", flush=True)
    return Interleaved(seconds)


def _sustained_gflops(product: Callable[[], object], n: int, seconds: float) -> float:
    """GFLOP/s of an n x n @ n x n `product` (2 n^3 flops), median of ~0.1 s blocks after 3 warm-up calls."""
    for _ in range(3):
        product()
    rates, t_end = [], time.perf_counter() + seconds
    while time.perf_counter() < t_end or len(rates) < 3:
        t0, k = time.perf_counter(), 0
        while time.perf_counter() - t0 < 0.1:
            product()
            k += 1
        rates.append(2 * n ** 3 * k / (time.perf_counter() - t0) / 1e9)
    return statistics.median(rates)


def matmul_gflops(n: int = 2048, dtype: torch.dtype = torch.float32, seconds: float = 1.5) -> float:
    """Sustained rate of an n x n @ n x n matmul in GFLOP/s (2 n^3 flops per product), median of ~0.1 s blocks."""
    a, b = torch.randn(n, n).to(dtype), torch.randn(n, n).to(dtype)
    out = torch.empty(n, n, dtype=dtype)
    return _sustained_gflops(lambda: torch.matmul(a, b, out=out), n, seconds)


def numpy_matmul_gflops(n: int = 2048, seconds: float = 1.5) -> float | None:
    """The same fp32 product through numpy's BLAS (OpenBLAS in numpy's wheels): what the silicon does with a BLAS
    that picks AVX-512 kernels on this CPU. None without numpy."""
    try:
        import numpy as np
    except ImportError:
        return None
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    out = np.empty((n, n), dtype=np.float32)
    return _sustained_gflops(lambda: np.matmul(a, b, out=out), n, seconds)


def matmul_report() -> tuple[float, float, str]:
    """(torch fp32 GFLOP/s, torch bf16 GFLOP/s, a printable summary) for 1024 and 2048 square products."""
    rates = {(n, dt): matmul_gflops(n, dt) for n in (1024, 2048) for dt in (torch.float32, torch.bfloat16)}
    ref = numpy_matmul_gflops(2048)
    lines = [f"matmul    torch {n}x{n}: fp32 {rates[n, torch.float32]:.0f} GFLOP/s, bf16 {rates[n, torch.bfloat16]:.0f} GFLOP/s"
             for n in (1024, 2048)]
    if ref is not None:
        lines.append(f"matmul    numpy 2048x2048 fp32 (its own BLAS, reference only): {ref:.0f} GFLOP/s")
    fp32 = max(rates[n, torch.float32] for n in (1024, 2048))
    bf16 = max(rates[n, torch.bfloat16] for n in (1024, 2048))
    return fp32, bf16, "\n".join(lines)


def background_jobs() -> list[str]:
    """Command lines of the training jobs that share this machine (they skew absolute numbers, not ratios much)."""
    try:
        out = subprocess.run(["pgrep", "-af", "transformer.train"], capture_output=True, text=True).stdout
    except OSError:
        return []
    return [line.split(" ", 1)[1][:120] for line in out.splitlines() if line.strip() and str(os.getpid()) not in line]


def machine_header(title: str) -> str:
    """A few lines describing where and when a benchmark ran."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    lines = [
        f"== {title} ==",
        f"date      {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"cpu       {cpu_name()}, {os.cpu_count()} logical cores, capability {torch.backends.cpu.get_cpu_capability()}",
        f"torch     {torch.__version__}, {torch.get_num_threads()} intra-op threads, python {platform.python_version()}",
        f"load avg  {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
    ]
    jobs = background_jobs()
    lines.append("background " + ("; ".join(jobs) if jobs else "none (no transformer.train running)"))
    return "\n".join(lines)


def table(rows: list[list[str]], header: list[str]) -> str:
    """A plain fixed-width table."""
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    out = [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
    out += [fmt.format(*map(str, r)) for r in rows]
    return "\n".join(out)


def verdict(value: float, target: float, higher_is_better: bool = True) -> str:
    met = value >= target if higher_is_better else value <= target
    return "MET" if met else "NOT MET"
