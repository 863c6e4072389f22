"""Training on several processes (torchrun + DistributedDataParallel): who I am, my device, my rows of a batch.

    torchrun --standalone --nproc_per_node=2 -m transformer.train --task reverse --out checkpoints/reverse

torchrun starts one process per rank and tells each, in its environment, its RANK, LOCAL_RANK (its index on its
machine), WORLD_SIZE and where rank 0 listens (MASTER_ADDR, MASTER_PORT). Every rank draws the same global batch
(same seed, same data state) and keeps its rows of it, so a run's result does not depend on how many processes
share it. Rank 0 alone writes checkpoints, the log and the card. Without torchrun everything here is the one
process: rank 0 of a world of 1, and no collective is called.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
import torch.distributed as dist

from ..checkpoint import resolve_device


@dataclass(frozen=True)
class World:
    """This process's place among the processes training one model."""

    rank: int = 0
    world_size: int = 1
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    backend: str | None = None  # "nccl" (CUDA) or "gloo" (CPU) under torchrun; None for one process

    @property
    def is_distributed(self) -> bool:
        return self.world_size > 1

    @property
    def is_writer(self) -> bool:
        """Rank 0 writes checkpoints, the card and the log, and shows the progress bar."""
        return self.rank == 0

    def rows(self, batch_size: int) -> slice:
        """My rows of a global batch: [rank * B/W, (rank + 1) * B/W)."""
        if batch_size % self.world_size:
            raise ValueError(f"a global batch of {batch_size} rows does not split evenly over {self.world_size} "
                             f"processes: use a multiple of {self.world_size}")
        per_rank = batch_size // self.world_size
        return slice(self.rank * per_rank, (self.rank + 1) * per_rank)

    def sum(self, x: torch.Tensor) -> torch.Tensor:
        """x summed over all ranks (a new tensor; x itself for one process)."""
        if not self.is_distributed:
            return x
        x = x.detach().clone()
        dist.all_reduce(x, op=dist.ReduceOp.SUM)
        return x

    def any(self, flag: bool) -> bool:
        """Whether any rank says yes: a decision every rank must take together (stop now?)."""
        if not self.is_distributed:
            return bool(flag)
        return bool(self.sum(torch.tensor(float(flag), device=self.device)) > 0)

    def barrier(self) -> None:
        if self.is_distributed:
            dist.barrier()

    @contextmanager
    def own_random_stream(self) -> Iterator[None]:
        """Draw from a random stream of this rank's own inside the block (its dropout masks).

        Every rank holds the same random state (same seed, same draws), so without this rank 1's rows would get the
        masks rank 0's rows got. The stream is seeded from one draw of the shared state (the same draw on every
        rank) plus the rank: the shared state moves the same way on every rank, and resuming, which restores it,
        stays exact. One process changes nothing."""
        if not self.is_distributed:
            yield
            return
        seed = int(torch.randint(2**62, ()))  # the shared CPU generator: the same number on every rank
        with torch.random.fork_rng(devices=[self.device] if self.device.type == "cuda" else [], device_type="cuda"):
            torch.manual_seed(seed + self.rank)
            yield


def under_torchrun() -> bool:
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def init(device: str | torch.device = "auto") -> World:
    """This process's World. Under torchrun (WORLD_SIZE > 1) join the process group: NCCL on cuda:LOCAL_RANK
    when the device is CUDA (`auto` takes it when present), else gloo on the CPU. Otherwise a world of one on
    `device` (`auto`: CUDA when present)."""
    device = resolve_device(device)
    if not under_torchrun():
        if device.type == "cuda" and device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        return World(device=device)
    rank, world_size, local_rank = (int(os.environ[k]) for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK"))
    if device.type == "cuda":
        if local_rank >= torch.cuda.device_count():
            raise RuntimeError(f"rank {rank} is process {local_rank} on its machine, which has only "
                               f"{torch.cuda.device_count()} CUDA devices: start at most one process per GPU")
        device, backend = torch.device("cuda", local_rank), "nccl"
        torch.cuda.set_device(device)
    elif device.type == "cpu":
        backend = "gloo"
    else:
        raise ValueError(f"device: distributed training runs on cpu or cuda, got {device}")
    if not dist.is_initialized():
        dist.init_process_group(backend, rank=rank, world_size=world_size,
                                device_id=device if backend == "nccl" else None)
    return World(rank, world_size, device, backend)


def close(world: World) -> None:
    """Leave the process group once every rank is done (every rank calls this): rank 0 still measures and writes
    after training, and a rank that tore its group down meanwhile could abort in gloo's teardown."""
    if world.is_distributed and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
