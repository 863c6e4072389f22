"""One browser session's training run for the app's Train tab: train a validated request, stream updates.

No gradio here: `run_training_session` is a plain generator of `SessionUpdate`s, so tests drive it directly and
app.py only maps each update onto its components. The training itself (`train_stream`) is a separate generator of
picklable `TrainingProgress`es that takes plain values and changes nothing in the app's memory, so the Train tab can
run it on a ZeroGPU worker (tabs.gpu); the session around it keeps the store and the Stop signal.
"""
from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import torch

import visualize as viz
from transformer import Transformer, TransformerConfig
from transformer.checkpoint import save_checkpoint
from transformer.train import Trainer, TrainingError

from .gpu import for_the_app
from .stop_signal import StopSignal
from .train_request import LIMITS, TrainingRequest, build_run, training_config

SAMPLE_COLUMNS = ["input", "expected", "model output"]


@dataclass
class SessionUpdate:
    curves: object
    status: str
    samples: pd.DataFrame
    attention: object
    control: StopSignal
    step: int = 0
    total: int = 0
    name: str | None = None  # the name this run's model takes in the checkpoint list (reserved at the start)
    done: bool = False


@dataclass
class _History:
    steps: list = field(default_factory=list)
    losses: list = field(default_factory=list)
    lrs: list = field(default_factory=list)
    val_steps: list = field(default_factory=list)
    val_losses: list = field(default_factory=list)

    def figure(self):
        return viz.training_curves(self.steps, self.losses, self.val_steps, self.val_losses, self.lrs,
                                   title="Training loss")


def _attention_figure(event):
    """The sharpest head (lowest entropy) of the last layer for the evaluation example, titled by its kind."""
    pattern = event.attention
    if pattern is None:
        return viz.empty_curves("No attention yet")
    layer, head = pattern.sharpest_head(layer=pattern.shape[0] - 1)
    mask = pattern.mask if pattern.kind != "encoder self" else None
    return viz.head_heatmap(pattern.weights[layer, head], pattern.query_tokens, pattern.key_tokens,
                            title=f"{pattern.kind} attention, last layer, head {head} (step {event.step})", mask=mask)


def export_checkpoint(model, tokenizer, info: dict, name: str, folder: Path) -> str:
    """A checkpoint zip of a model trained here, written into `folder` (the app's bounded export folder)."""
    stem = "".join(c if c.isalnum() or c in "-_" else "-" for c in name).strip("-") or "model"
    save_checkpoint(folder / stem, model, tokenizer, task=info.get("task"), training=info.get("training"),
                    metrics=info.get("metrics"))
    archive = shutil.make_archive(str(folder / stem), "zip", folder, stem)
    shutil.rmtree(folder / stem)
    return archive


@dataclass
class TrainingProgress:
    """One update of a run (picklable: it may come from a ZeroGPU worker). The last one has `outcome` and carries
    the trained model (weights only: no gradients, no optimiser), its tokenizer and info."""

    curves: object
    status: str
    samples: pd.DataFrame
    attention: object
    step: int
    total: int
    outcome: str | None = None  # "finished", "stopped" or "stopped: <why>" on the last update
    model: object = None
    tokenizer: object = None
    info: dict | None = None


def train_stream(request: TrainingRequest, text: str | None, control, max_seconds: float = LIMITS["seconds"]):
    """Train a validated request (on `text` for a text run) and yield TrainingProgresses: at most a few a second,
    one at every evaluation, and the last with the model. `control.is_set()` stops it after the current step."""
    run = build_run(request, text, max_seconds)
    model, tokenizer, train_cfg, task = run.model, run.tokenizer, run.train_cfg, run.task
    trainer = Trainer(model, tokenizer, run.data, train_cfg)
    history, samples = _History(), pd.DataFrame(columns=SAMPLE_COLUMNS)
    attention = viz.empty_curves(f"Attention appears at the first evaluation (step {train_cfg.eval_every})")
    status, last_yield, event, outcome = "", 0.0, None, "finished"
    try:
        for event in trainer.run():
            if event.kind == "step":
                history.steps.append(event.step)
                history.losses.append(event.loss)
                history.lrs.append(event.lr)
                status = (f"step {event.step}/{train_cfg.steps} · loss {event.loss:.3f} · "
                          f"{event.tokens_per_sec:,.0f} tokens/s · {event.elapsed:.0f} s")
            else:
                history.val_steps.append(event.step)
                history.val_losses.append(event.val_loss)
                extra = f" · exact match {event.exact_match:.0%}" if event.exact_match is not None else ""
                status += f" · validation loss {event.val_loss:.3f}{extra}"
                samples = pd.DataFrame(event.samples, columns=SAMPLE_COLUMNS)
                attention = _attention_figure(event)
            if control.is_set():
                outcome = "stopped"
                break
            if event.kind == "eval" or time.perf_counter() - last_yield > 1 / LIMITS["updates_per_second"]:
                last_yield = time.perf_counter()
                yield TrainingProgress(history.figure(), status, samples, attention, trainer.step, train_cfg.steps)
    except TrainingError as e:
        outcome = f"stopped: {e}"
    info = {"task": task, "metrics": {}, "training": trainer.training_info()}
    del trainer  # the optimiser's state goes with it: only the weights are kept
    model.zero_grad(set_to_none=True)
    yield TrainingProgress(history.figure(), status if event is not None else "", samples, attention,
                           info["training"]["steps"], train_cfg.steps, outcome, for_the_app(model), tokenizer, info)


def run_training_session(request: TrainingRequest, store, key: str, train=train_stream):
    """Train as requested and yield SessionUpdates: at most a few a second, and one at every evaluation.

    The model's name is reserved in `store` (tabs.user_models.UserModels) for browser `key` before training
    starts. Setting the yielded `control` (a StopSignal) stops training after the current step; the model trained
    so far then joins the store, kept for inference only (no gradients, no optimiser). `train` is the training
    generator: train_stream, or the Train tab's @gpu copy of it.
    """
    request = request.validated()
    text = request.corpus() if request.source == "text" else None
    train_cfg = training_config(request)
    name = store.reserve(key, request.task if request.source == "task" else None)
    control, finished = StopSignal(), False
    samples = pd.DataFrame(columns=SAMPLE_COLUMNS)
    attention = viz.empty_curves(f"Attention appears at the first evaluation (step {train_cfg.eval_every})")
    try:
        yield SessionUpdate(viz.empty_curves("Starting…"), f"Starting “{name}”…", samples, attention, control, 0,
                            train_cfg.steps, name)
        for part in train(request, text, control):
            if part.outcome is None:
                yield SessionUpdate(part.curves, part.status, part.samples, part.attention, control, part.step,
                                    part.total, name)
                continue
            dropped = store.put(key, name, part.model, part.tokenizer, part.info)
            finished = True
            training = part.info["training"]
            status = (f"**Training {part.outcome}** after {training['steps']} steps "
                      f"({training['wall_time_s']:.0f} s). “{name}” is now in the checkpoint list"
                      + (f" (the oldest, {', '.join(dropped)}, made room: a browser keeps its last "
                         f"{store.per_browser} models)" if dropped else "") + ". " + part.status)
            yield SessionUpdate(part.curves, status, part.samples, part.attention, control, part.step, part.total,
                                name, done=True)
    finally:
        control.discard()
        if not finished:
            store.release(key, name)


def warm_up():
    """Run two training steps of a tiny model: the first AdamW step in a process costs about a second."""
    cfg = TransformerConfig(vocab_size=8, d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=16)
    model = Transformer(cfg)
    opt = torch.optim.AdamW(model.parameters())
    for _ in range(2):
        x = torch.randint(3, 8, (2, 5))
        model(x, x).logits.sum().backward()
        opt.step()


