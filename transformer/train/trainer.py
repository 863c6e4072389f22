"""Training: a Trainer that yields small event records, the paper's schedule and optimiser; its CLI is cli.py.

    python -m transformer.train --task reverse --out checkpoints/reverse
    python -m transformer.train --text data/tinyshakespeare.txt --arch decoder-only --out runs/lm
    torchrun --standalone --nproc_per_node=2 -m transformer.train --task reverse --out runs/reverse

(torchrun: several processes train one model, each on its rows of every batch; see transformer.train.distributed.)
The CLI and the app's Train tab are two consumers of the same `Trainer.run()` event stream.
"""
from __future__ import annotations

import json
import math
import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from torch.nn.parallel import DistributedDataParallel

from ..checkpoint import CheckpointError, load_checkpoint, read_info, recover_checkpoint, save_checkpoint
from ..data import TaskData, TextData
from ..encoding import decoder_length, pair_batch, source_ids, target_tokens
from ..evaluate import greedy_exact_match
from ..generate import generate
from ..model import Transformer
from .distributed import World
from .schedule import SCHEDULES, TrainConfig, learning_rate  # noqa: F401  (SCHEDULES: the trainer's importers)

def loss_share(logits: torch.Tensor, targets: torch.Tensor, pad_id: int, label_smoothing: float,
               n_real: torch.Tensor) -> torch.Tensor:
    """Cross-entropy (with label smoothing, section 5.4) summed over the real (non-pad) tokens of `targets`, divided
    by `n_real`, the count of real target tokens of the whole global batch: the shares of a batch's row slices add up
    to its mean loss, whatever each slice's padding. logits (N, vocab_size), targets (N,)."""
    return F.cross_entropy(logits, targets, ignore_index=pad_id, label_smoothing=label_smoothing,
                           reduction="sum") / n_real


def bf16_pays(d_model: int, device: torch.device) -> bool:
    """Whether bf16 autocast speeds up training: only for wide enough layers, on hardware with bf16 units.
    bench/bf16_training.py measured 2.0x at d_model 256 but 0.8-1.07x at d_model 64-128 (AVX512-BF16 CPU)."""
    if d_model < 256:
        return False
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    return device.type == "cpu" and torch.ops.mkldnn._is_mkldnn_bf16_supported()


@dataclass
class StepEvent:
    step: int
    loss: float
    lr: float
    tokens_per_sec: float
    elapsed: float
    grad_norm: float | None = None  # of the whole batch's gradient, before clipping
    kind: str = "step"


@dataclass
class EvalEvent:
    step: int
    val_loss: float
    elapsed: float
    token_accuracy: float | None = None
    exact_match: float | None = None
    samples: list[tuple[str, str, str]] = field(default_factory=list)  # (input, expected, model output)
    attention: object = None  # what the Trainer's `attention` callback made of one validation example, or None
    kind: str = "eval"


class TrainingError(RuntimeError):
    """Training cannot go on (the loss became NaN or infinite); the message says where."""


class Trainer:
    """Trains `model` on `data`; `run()` yields a StepEvent per step and an EvalEvent every eval_every steps.

    Closing the generator (the consumer stops iterating) stops training at once. With `out_dir`, checkpoints
    (with optimiser and random-number state, so `resume=True` continues the same curve) are written there.

    With a distributed `world` (transformer.train.distributed, under torchrun) every rank runs the same Trainer on
    the same data: each step every rank draws the same global batch of cfg.batch_size rows and trains on its rows
    through DistributedDataParallel; rank 0 alone evaluates (yields EvalEvents) and writes checkpoints.

    `attention(model, tokenizer, input_ids, target_ids)`, when given, is called at each evaluation on the first
    validation example (a task: the source with its </s> and the target's ids; a text: the first 48 tokens of the
    first window, target None) and its result is the EvalEvent's `attention` (the app and the CLI pass
    transformer.interpretability.probe.example_attention): the Trainer itself knows nothing of the probe.
    """

    def __init__(self, model: Transformer, tokenizer, data: TaskData | TextData, cfg: TrainConfig,
                 out_dir: str | Path | None = None, resume: bool = False, checkpoint_info: dict | None = None,
                 world: World | None = None, attention: Callable[..., object] | None = None):
        self.model, self.tokenizer, self.data, self.cfg = model, tokenizer, data, cfg
        self.attention = attention
        self.world = world or World(device=model.device)
        self.world.rows(cfg.batch_size)  # a global batch that does not split evenly over the ranks is refused now
        self.ddp = model  # the module training's forward goes through: DDP syncs the gradients in backward
        if self.world.is_distributed:
            if model.device != self.world.device:
                raise ValueError(f"the model is on {model.device}, this rank trains on {self.world.device}: "
                                 f"move it there first")
            self.ddp = DistributedDataParallel(model, device_ids=[model.device] if model.device.type == "cuda"
                                               else None, forward_sync_buffers=False)  # buffers are fixed tables
        self.out_dir = Path(out_dir) if out_dir is not None else None
        self.checkpoint_info = checkpoint_info or {}
        decay = [p for p in model.parameters() if p.dim() > 1]
        no_decay = [p for p in model.parameters() if p.dim() <= 1]
        self.optimizer = torch.optim.AdamW(
            [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
            lr=learning_rate(1, cfg, model.config.d_model), betas=(0.9, cfg.beta2), eps=1e-9,  # section 5.3
            # one fused kernel for every parameter's update (the same arithmetic): on a CPU 0.4 ms a step instead of
            # 1.2 ms for the per-tensor loop at nanoGPT's baby size (bench/versus_nanogpt.py)
            fused=model.device.type in ("cpu", "cuda"))
        self.step, self.tokens_seen, self.elapsed, self.last_checkpoint_step = 0, 0, 0.0, None
        self.bf16 = cfg.bf16 if cfg.bf16 is not None else bf16_pays(model.config.d_model, model.device)
        if resume:
            self._load_state()

    # --- the loop ---------------------------------------------------------------------------------------------

    def _loss(self, inputs, targets) -> torch.Tensor:
        """This rank's share of the global batch's loss, the mean over its real target tokens: the whole mean in
        one process; under torchrun the shares of all ranks add up to it (loss_share)."""
        device, pad_id, world = self.model.device, self.model.config.pad_id, self.world
        rows, global_targets = world.rows(len(targets)), targets
        inputs, targets = [x[rows].to(device) for x in inputs], targets[rows].to(device)  # my rows: (B / W, ...)
        autocast = torch.autocast(device.type, dtype=torch.bfloat16) if self.bf16 else nullcontext()
        with autocast, world.own_random_stream():
            logits = self.ddp(*inputs).logits
        logits, targets = logits.float().flatten(0, 1), targets.flatten()  # (B / W * T, vocab_size), (B / W * T,)
        if not world.is_distributed:  # F's own mean: the same number, computed as one process always has
            return F.cross_entropy(logits, targets, ignore_index=pad_id, label_smoothing=self.cfg.label_smoothing)
        n_real = (global_targets != pad_id).sum()  # of the global batch, which every rank holds
        return loss_share(logits, targets, pad_id, self.cfg.label_smoothing, n_real.to(device))

    def run(self) -> Iterator[StepEvent | EvalEvent]:
        cfg, model, world = self.cfg, self.model, self.world
        start = time.perf_counter() - self.elapsed
        while self.step < cfg.steps:
            model.train()
            t0 = time.perf_counter()
            lr = learning_rate(self.step + 1, cfg, model.config.d_model)
            for group in self.optimizer.param_groups:
                group["lr"] = lr
            inputs, targets = self.data.train_batch(cfg.batch_size)  # the global batch: every rank draws the same
            share = self._loss(inputs, targets)
            loss = world.sum(share.detach()).item()  # the global batch's mean loss, on every rank
            if not math.isfinite(loss):
                where = (f"the last good checkpoint (step {self.last_checkpoint_step}) is in {self.out_dir}"
                         if self.last_checkpoint_step is not None else "no checkpoint was written")
                raise TrainingError(f"the loss became {loss} at step {self.step + 1}; training stopped and "
                                    f"{where}. Try a lower learning rate.")
            self.optimizer.zero_grad(set_to_none=True)
            (share * world.world_size).backward()  # DDP averages the ranks' gradients: their sum is the global one
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip_grad or math.inf)  # inf: no clip
            self.optimizer.step()
            self.step += 1
            n_tokens = int((targets != model.config.pad_id).sum())
            self.tokens_seen += n_tokens
            self.elapsed = time.perf_counter() - start
            yield StepEvent(self.step, loss, lr, n_tokens / (time.perf_counter() - t0), self.elapsed,
                            float(grad_norm))
            last = world.any(self.step == cfg.steps or (cfg.max_seconds and self.elapsed >= cfg.max_seconds))
            if (self.step % cfg.eval_every == 0 or last) and world.is_writer:
                yield self.evaluate()
            if self.out_dir is not None and (last or (cfg.checkpoint_every and self.step % cfg.checkpoint_every == 0)):
                if world.is_writer:
                    self.save(self.out_dir)
                self.last_checkpoint_step = self.step
            if last:
                break

    @torch.no_grad()
    def evaluate(self) -> EvalEvent:
        model, tok, cfg = self.model, self.tokenizer, self.model.config
        model.eval()
        if hasattr(self.data, "evaluate"):  # data that knows how it is measured (translation: transformer.translation)
            return EvalEvent(self.step, elapsed=self.elapsed, **self.data.evaluate(model, tok))
        if isinstance(self.data, TaskData):
            pairs = self.data.val_pairs
            src, tgt_in, target = (t.to(model.device) for t in pair_batch(tok, pairs, cfg))  # (B, S), (B, T), (B, T)
            logits = model(src, tgt_in).logits
            real = target != cfg.pad_id
            val_loss = F.cross_entropy(logits.flatten(0, 1), target.flatten(), ignore_index=cfg.pad_id).item()
            token_acc = float((logits.argmax(-1) == target)[real].float().mean())
            exact, outputs = greedy_exact_match(model, tok, pairs, decoder_length(self.data.task.max_target_len),
                                                batch_size=len(pairs))
            samples = [(s, t, o) for (s, t), o in list(zip(pairs, outputs))[:3]]
            source, target_text = pairs[0]
            attention = self._attention(source_ids(tok, source, cfg), target_tokens(tok, target_text))
            return EvalEvent(self.step, val_loss, self.elapsed, token_acc, exact, samples, attention)
        x, y = (t.to(model.device) for t in self.data.val_batch)
        logits = model(x).logits
        val_loss = F.cross_entropy(logits.flatten(0, 1), y.flatten()).item()
        token_acc = float((logits.argmax(-1) == y).float().mean())
        prompt = x[0, :32].tolist()
        continuation = [s.token_id for s in generate(model, prompt, 64, strategy="sample", temperature=0.8, seed=0)]
        samples = [(tok.decode(prompt), "", tok.decode(continuation))]
        attention = self._attention(x[0, :48].tolist(), None)
        return EvalEvent(self.step, val_loss, self.elapsed, token_acc, None, samples, attention)

    def _attention(self, input_ids: list[int], target_ids: list[int] | None):
        return None if self.attention is None else self.attention(self.model, self.tokenizer, input_ids, target_ids)

    # --- checkpoints ------------------------------------------------------------------------------------------

    def training_info(self) -> dict:
        return {"steps": self.step, "tokens": self.tokens_seen, "wall_time_s": round(self.elapsed, 1), "bf16": self.bf16,
                "world_size": self.world.world_size, "train_config": asdict(self.cfg)}

    def save(self, path: Path, **info) -> Path:
        """A checkpoint directory plus trainer_state.* (optimiser, step, random-number states) for resuming."""
        info = {**self.checkpoint_info, **info}
        info["training"] = {**info.get("training", {}), **self.training_info()}
        tensors, groups = {}, []
        opt = self.optimizer.state_dict()
        for idx, state in opt["state"].items():
            for name, value in state.items():
                tensors[f"optimizer.{idx}.{name}"] = value if torch.is_tensor(value) else torch.tensor(value)
        for group in opt["param_groups"]:
            groups.append({k: v for k, v in group.items()})
        tensors["torch_rng"] = torch.get_rng_state()
        if self.model.device.type == "cuda":  # dropout on the GPU draws from the GPU's generator
            tensors["cuda_rng"] = torch.cuda.get_rng_state(self.model.device)
        meta = {"step": self.step, "tokens": self.tokens_seen, "elapsed": self.elapsed, "param_groups": groups,
                "data": self.data.state()}

        def write_state(tmp: Path):
            save_file({k: v.contiguous() for k, v in tensors.items()}, str(tmp / "trainer_state.safetensors"))
            (tmp / "trainer_state.json").write_text(json.dumps(meta))

        save_checkpoint(path, self.model, self.tokenizer, extra=write_state, **info)
        self.last_checkpoint_step = self.step
        return path

    def _load_state(self):
        if self.out_dir is None:
            raise ValueError("resume=True needs the out_dir of the run to resume")
        if self.world.is_writer:  # a save killed between its renames left the checkpoint as .<name>.old
            recover_checkpoint(self.out_dir)
        self.world.barrier()  # then every rank reads the same checkpoint
        read_info(self.out_dir)
        state_file = self.out_dir / "trainer_state.safetensors"
        if not state_file.is_file():
            raise CheckpointError(f"{self.out_dir}: no trainer_state.safetensors to resume from")
        model, _, _ = load_checkpoint(self.out_dir, device=self.model.device)
        self.model.load_state_dict(model.state_dict())
        tensors = load_file(str(state_file))
        meta = json.loads((self.out_dir / "trainer_state.json").read_text())
        state: dict[int, dict] = {}
        for key, value in tensors.items():
            if key.startswith("optimizer."):
                _, idx, name = key.split(".", 2)
                state.setdefault(int(idx), {})[name] = value
        self.optimizer.load_state_dict({"state": state, "param_groups": meta["param_groups"]})
        torch.set_rng_state(tensors["torch_rng"])
        if "cuda_rng" in tensors and self.model.device.type == "cuda":
            torch.cuda.set_rng_state(tensors["cuda_rng"], self.model.device)
        self.data.load_state(meta["data"])
        self.step, self.tokens_seen, self.elapsed = meta["step"], meta["tokens"], meta["elapsed"]
        self.last_checkpoint_step = self.step

