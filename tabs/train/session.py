"""One browser session's training run for the app's Train tab: train a validated request, stream updates.

No gradio here: `run_training_session` is a plain generator of `SessionUpdate`s, so tests drive it directly and
app.py only maps each update onto its components. The training itself (`train_stream`) is a separate generator of
picklable `TrainingProgress`es that takes plain values and changes nothing in the app's memory, so the Train tab can
run it on a ZeroGPU worker (store.gpu); the session around it keeps the store and the Stop signal.
"""
from __future__ import annotations

import math
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import torch

from visualize.line_chart import training_chart
from transformer import Transformer, TransformerConfig
from transformer.checkpoint import save_checkpoint
from transformer.interpretability.probe import example_attention
from transformer.train import EvalEvent, StepEvent, Trainer, TrainingError

from limits import TRAINING
from store.gpu import for_the_app
from tabs.train.request import TrainingRequest, build_run, training_config
from tabs.train.lifecycle import TabRun, Throttle

SAMPLE_COLUMNS = ["input", "expected", "model output"]


@dataclass
class SessionUpdate:
    curves: str  # the loss chart, an SVG string (visualize.line_chart)
    status: str
    samples: pd.DataFrame | None  # None: unchanged since the previous update
    attention: object  # the last evaluation's AttentionPattern, or None: unchanged since the previous update
    control: object  # the run's StopSignal (tabs.train.stop_signal): setting it stops the run
    step: int = 0
    total: int = 0
    name: str | None = None  # the name this run's model takes in the checkpoint list (reserved at the start)
    done: bool = False
    first_evaluation: int = 0  # on the first update: the step of the first evaluation (when attention appears)


@dataclass
class _History:
    task: bool  # a task's evaluations measure the exact match
    steps: list = field(default_factory=list)
    losses: list = field(default_factory=list)
    val_steps: list = field(default_factory=list)
    val_losses: list = field(default_factory=list)
    exact: list = field(default_factory=list)  # exact match at each evaluation (tasks)
    total: int | None = None  # the run's steps: the x axis's length from the start

    def figure(self, message: str = "") -> str:
        """The live chart (SVG), kept small (it is redrawn at every update): train and validation loss, and a
        task's exact match on the right axis; the learning rate is in the status line."""
        return training_chart(self.steps, self.losses, self.val_steps, self.val_losses,
                              self.exact if self.task else None, title="Training loss", x_max=self.total,
                              message=message)


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
    """One update of a run (picklable: it may come from a ZeroGPU worker). `samples` and `attention` (the
    evaluation example's AttentionPattern) come only with the first update after an evaluation, else None: the
    page redraws them only then. The last update has `outcome` and carries the trained model (weights only: no
    gradients, no optimiser), its tokenizer and info."""

    curves: str  # the loss chart, an SVG string (visualize.line_chart)
    status: str
    samples: pd.DataFrame | None
    attention: object
    step: int
    total: int
    outcome: str | None = None  # "finished", "stopped" or "stopped: <why>" on the last update
    model: object = None
    tokenizer: object = None
    info: dict | None = None


OVERFIT_NOTE = (" · *validation loss rising while the training loss falls: the model is memorising its text "
                "(overfitting); more text, a smaller model or fewer steps help*")


def overfitting(val_losses: list[float], rise: float = 0.05) -> bool:
    """Whether the last of at least three validation losses is `rise` (5 %) above the lowest one before it."""
    return len(val_losses) >= 3 and val_losses[-1] > (1 + rise) * min(val_losses[:-1])


def _status(step: StepEvent | None, evaluation: EvalEvent | None, total: int, history=None) -> str:
    """The live status line: where the run is, then what the last evaluation measured (and a note when the
    validation loss climbs back up)."""
    if step is None:
        return "Starting…"
    parts = [f"**step {step.step:,} / {total:,}**", f"loss {step.loss:.3f}"]
    if evaluation is not None:
        parts.append(f"validation loss {evaluation.val_loss:.3f}")
        if evaluation.exact_match is not None:
            parts.append(f"**exact match {evaluation.exact_match:.0%}**")
    parts += [f"lr {step.lr:.1e}", f"{step.tokens_per_sec:,.0f} tokens/s", f"{step.elapsed:.0f} s"]
    # only text is memorised: a task draws fresh examples every step, and its validation loss near 0 wobbles (0.001 ->
    # 0.002 is +100 %) without meaning anything
    memorising = history is not None and not history.task and overfitting(history.val_losses)
    return " · ".join(parts) + (OVERFIT_NOTE if memorising else "")


def final_metrics(evaluation: EvalEvent | None, task: str | None, eval_examples: int) -> dict:
    """What the Model tab shows of a model trained here: the last evaluation's numbers, and on what they were
    measured (a few validation examples, not the shipped checkpoints' full evaluation)."""
    if evaluation is None:
        return {}
    metrics = {"val_loss": round(evaluation.val_loss, 4),
               "measured_on": f"{eval_examples} validation examples at step {evaluation.step}"}
    if evaluation.exact_match is not None:
        metrics["exact_match"] = round(evaluation.exact_match, 4)
    if task is None:  # a character model: nats per token are nats per character
        metrics["val_nats_per_char"] = metrics["val_loss"]
        metrics["val_bpc"] = round(evaluation.val_loss / math.log(2), 4)
    return metrics


def train_stream(request: TrainingRequest, text: str | None, control, max_seconds: float = TRAINING["seconds"]):
    """Train a validated request (on `text` for a text run) and yield TrainingProgresses: at most
    TRAINING["updates_per_second"] a second (an evaluation waits for the next one), and the last with the model.
    `control.is_set()` stops it after the current step."""
    run = build_run(request, text, max_seconds)
    model, tokenizer, train_cfg, task = run.model, run.tokenizer, run.train_cfg, run.task
    trainer = Trainer(model, tokenizer, run.data, train_cfg, attention=example_attention)
    history = _History(task=task is not None, total=train_cfg.steps)
    samples = attention = None  # of an evaluation not yet sent
    last_step = last_eval = None
    throttle, outcome = Throttle(), "finished"
    try:
        for event in trainer.run():
            if event.kind == "step":
                history.steps.append(event.step)
                history.losses.append(event.loss)
                last_step = event
            else:
                history.val_steps.append(event.step)
                history.val_losses.append(event.val_loss)
                if event.exact_match is not None:
                    history.exact.append(event.exact_match)
                samples, attention, last_eval = pd.DataFrame(event.samples, columns=SAMPLE_COLUMNS), event.attention, \
                    event
            if control.is_set():
                outcome = "stopped"
                break
            if throttle.due():
                yield TrainingProgress(history.figure(), _status(last_step, last_eval, train_cfg.steps, history), samples,
                                       attention, trainer.step, train_cfg.steps)
                samples = attention = None
    except TrainingError as e:
        outcome = f"stopped: {e}"
    info = {"task": task, "metrics": final_metrics(last_eval, task, train_cfg.eval_examples),
            "training": trainer.training_info()}
    del trainer  # the optimiser's state goes with it: only the weights are kept
    model.zero_grad(set_to_none=True)
    yield TrainingProgress(history.figure(), _status(last_step, last_eval, train_cfg.steps, history), samples, attention,
                           info["training"]["steps"], train_cfg.steps, outcome, for_the_app(model), tokenizer, info)


def run_training_session(request: TrainingRequest, store, key: str, train=train_stream, call=None):
    """Train as requested and yield SessionUpdates, at most TRAINING["updates_per_second"] a second.

    The run's lifecycle is a TabRun (tabs.train.lifecycle): the model's name is reserved in `store`
    (store.user_models.UserModels) for browser `key` before training starts, with the address of `call` (the
    gradio request, when there is one: the store makes room from the client holding the most models), whose
    session's Stop stops it. Setting the yielded `control` (a StopSignal) stops training after the current step;
    the model trained so far then joins the store, kept for inference only (no gradients, no optimiser). `train` is
    the training generator: train_stream, or the Train tab's @gpu copy of it. An update's `samples` and `attention`
    are None when no evaluation came since the previous update.
    """
    request = request.validated()
    text = request.corpus() if request.source == "text" else None
    train_cfg = training_config(request)
    with TabRun(store, key, request.task if request.source == "task" else None, call=call) as run:
        name, control = run.name, run.control
        blank = _History(task=request.source == "task", total=train_cfg.steps).figure("Starting…")
        yield SessionUpdate(blank, f"Starting “{name}”…",
                            pd.DataFrame(columns=SAMPLE_COLUMNS), None, control, 0, train_cfg.steps, name,
                            first_evaluation=train_cfg.eval_every)
        for part in train(request, text, control):
            if part.outcome is None:
                yield SessionUpdate(part.curves, part.status, part.samples, part.attention, control, part.step,
                                    part.total, name)
                continue
            dropped = run.keep(part.model, part.tokenizer, part.info)
            training = part.info["training"]
            status = (f"**Training {part.outcome}** after {training['steps']} steps "
                      f"({training['wall_time_s']:.0f} s). “{name}” is now in the checkpoint list"
                      + (f" (the oldest, {', '.join(dropped)}, made room: a browser keeps its last "
                         f"{store.per_browser} models)" if dropped else "") + ". " + part.status)
            yield SessionUpdate(part.curves, status, part.samples, part.attention, control, part.step, part.total,
                                name, done=True)


def warm_up():
    """Run two training steps of a tiny model: the first AdamW step in a process costs about a second."""
    cfg = TransformerConfig(vocab_size=8, d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=16)
    model = Transformer(cfg)
    opt = torch.optim.AdamW(model.parameters())
    for _ in range(2):
        x = torch.randint(3, 8, (2, 5))
        model(x, x).logits.sum().backward()
        opt.step()


