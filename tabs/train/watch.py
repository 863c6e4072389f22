"""The Train tab's "Watch an induction head form": the shipped `induction` recipe trained live, its loss curve and,
on the same time axis, the best previous-token and induction scores at every evaluation (Olsson et al. 2022). The
run comes from transformer.train.induction (its scores from transformer.interpretability.phase_change), the figures
from visualize; the trained model joins this browser's checkpoint list like any model trained here."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import gradio as gr
import numpy as np

from visualize.heatmap_svg import head_heatmap_svg
from visualize.line_chart import phase_change_chart
from transformer.heads import AttentionKind, HeadId
from transformer.interpretability.phase_change import rise_window, steepest_drop
from transformer.interpretability.probe import record_ids
from transformer.train.induction import induction_run, watch_induction

from limits import GPU_SECONDS_MARGIN, TRAINING, WATCH
from store.catalogue import USER_MODELS, checkpoint_choices
from store.gpu import for_the_app, gpu, wall_seconds
from store.sessions import browser_key
from tabs.train.lifecycle import TabRun, Throttle, training_device
from widgets.answers import Answer
from widgets.errors import handler

EXAMPLE = "kqwzjxtbhmfaKQWZJXTBHMFA" * 2  # 24 random distinct characters, then the same again
WATCH_EXPLAINED = ("**Watch an induction head form.** A 2-layer attention-only model (the shipped `induction` "
                   "recipe) learns sequences of random characters that repeat. For a long while the loss stays flat "
                   "near log 62 (random guessing); then, within a few hundred steps, it falls by half just as the "
                   "best induction score (right axis, same chart) jumps: a previous-token head in layer 0 and an induction head "
                   "in layer 1 form together, the phase change of Olsson et al. (2022).")


@dataclass
class _Curves:
    steps: list = field(default_factory=list)
    losses: list = field(default_factory=list)
    eval_steps: list = field(default_factory=list)
    val_losses: list = field(default_factory=list)
    previous: list = field(default_factory=list)
    induction: list = field(default_factory=list)
    total: int | None = None  # the run's steps: the x axis's length from the start

    def window(self):
        return rise_window(self.eval_steps, self.induction)

    def figure(self) -> str:
        """The live chart (SVG): the losses and the two best scores on one time axis, the rise window shaded."""
        return phase_change_chart(self.steps, self.losses, self.eval_steps, self.val_losses,
                                  {"previous token": self.previous, "induction": self.induction},
                                  window=self.window(), title="The induction phase change", x_max=self.total)

    def summary(self) -> str:
        """What the run showed so far: where the score rose and where the loss fell fastest."""
        window = self.window()
        if window is None or len(self.eval_steps) < 2:
            return "the induction score has not reached 0.5 yet"
        a, b = steepest_drop(self.eval_steps, self.val_losses)
        inside = window[0] <= a and b <= window[1]
        return (f"the induction score rose from below 0.1 to 0.5 between steps {window[0]} and {window[1]}; the "
                f"validation loss fell fastest between steps {a} and {b}, "
                + ("inside that window" if inside else "outside that window"))


@dataclass
class WatchProgress:
    """One update of the run (picklable: it may come from a ZeroGPU worker); the last has `outcome` and the model.
    `attention` is the best induction head's map when an evaluation drew a new one since the last update, else
    None (the page redraws it only then)."""

    curves: str  # the live chart, an SVG string (visualize.line_chart)
    status: str
    attention: object
    step: int
    total: int
    outcome: str | None = None
    model: object = None
    tokenizer: object = None
    info: dict | None = None


def _attention_figure(model, tokenizer, head: str, step: int):
    """The current best induction head on random characters repeated twice."""
    head_id = HeadId.parse(head, AttentionKind.DECODER_SELF)
    layer, index = head_id.layer, head_id.head
    model.eval()
    pattern = record_ids(model, tokenizer, tokenizer.encode(EXAMPLE)).patterns[AttentionKind.DECODER_SELF]
    model.train()
    return head_heatmap_svg(pattern.weights[layer, index], pattern.query_tokens, pattern.key_tokens,
                            title=f"best induction head {head} (step {step})", mask=pattern.mask)


def watch_metrics(point, eval_examples: int) -> dict:
    """What the Model tab shows of a watched model: its last evaluation's validation loss and best heads (a
    PhasePoint), and on what they were measured; {} when it stopped before any evaluation."""
    if point is None:
        return {}
    return {"val_loss": round(point.val_loss, 4),
            "previous_token_head": point.previous_token_head, "previous_token_score": round(point.previous_token, 4),
            "induction_head": point.induction_head, "induction_score": round(point.induction, 4),
            "measured_on": f"{eval_examples} validation sequences (loss) and 8 repeated random sequences (heads) "
                           f"at step {point.step}"}


def watch_stream(control, max_seconds: float = TRAINING["seconds"], steps: int = WATCH["steps"], seed: int = 0):
    """Train the induction recipe and yield WatchProgresses: a few a second, one at every evaluation, the last with
    the model. `control.is_set()` stops it after the current step."""
    model, tokenizer, data, train_cfg = induction_run(steps, WATCH["eval_every"], seed, max_seconds,
                                                      training_device())
    curves, status, throttle, outcome = _Curves(total=steps), "Starting…", Throttle(), "finished"
    last_eval = None
    attention = head_heatmap_svg(np.zeros((0, 0)), [], [],
                                 message=f"The best induction head appears at step {WATCH['eval_every']}")
    started = time.perf_counter()
    for event in watch_induction(model, tokenizer, data, train_cfg):
        if event.kind == "step":
            curves.steps.append(event.step)
            curves.losses.append(event.loss)
            status = f"step {event.step}/{steps} · loss {event.loss:.3f} · {event.elapsed:.0f} s"
        else:
            last_eval = event
            curves.eval_steps.append(event.step)
            curves.val_losses.append(event.val_loss)
            curves.previous.append(event.previous_token)
            curves.induction.append(event.induction)
            status += (f" · best previous-token head {event.previous_token_head} {event.previous_token:.2f} · "
                       f"best induction head {event.induction_head} {event.induction:.2f}")
            attention = _attention_figure(model, tokenizer, event.induction_head, event.step)
        if control.is_set():
            outcome = "stopped"
            break
        if throttle.due(force=event.kind == "phase"):
            yield WatchProgress(curves.figure(), status, attention, event.step, steps)
            attention = None
    wall = time.perf_counter() - started
    summary = f"{curves.summary()} ({wall:.0f} s of training)"
    info = {"task": "induction", "metrics": watch_metrics(last_eval, train_cfg.eval_examples),
            "training": {"steps": curves.steps[-1] if curves.steps else 0, "wall_time_s": round(wall, 1),
                         "recipe": "induction"}}
    model.zero_grad(set_to_none=True)
    yield WatchProgress(curves.figure(), summary, attention, info["training"]["steps"], steps, outcome,
                        for_the_app(model), tokenizer, info)


@gpu(duration=lambda control: wall_seconds(TRAINING["seconds"]) + GPU_SECONDS_MARGIN)
@handler
def watch_on_gpu(control):
    """watch_stream on ZeroGPU within the GPU time a call may ask for (its wall-clock limit cut to fit there)."""
    yield from watch_stream(control, max_seconds=wall_seconds(TRAINING["seconds"]))


@dataclass(frozen=True)
class WatchUpdate(Answer):
    """What the watch streams, each field the Train tab's component of its name (widgets.answers): the curves, the
    status, the best induction head's map, the checkpoint list (when the model joins it) and the Stop signal."""

    curves: Any
    status: Any
    heatmap: Any = field(default_factory=gr.update)
    ckpt: Any = field(default_factory=gr.update)
    control: Any = None


@handler
def run_watch(request: gr.Request = None):
    """Stream the run onto the Train tab (curves, status, attention, checkpoint list, Stop signal); the model joins
    this browser's checkpoint list when it ends (finished or stopped). Its lifecycle is Start's and Compare's
    (tabs.train.lifecycle.TabRun): the name reserved with the client's address, Stop, memory returned."""
    key = browser_key(request)
    with TabRun(USER_MODELS, key, "induction", call=request) as run:
        name, control = run.name, run.control
        yield WatchUpdate(_Curves(total=WATCH["steps"]).figure(), f"Starting “{name}”…", control=control)
        for part in watch_on_gpu(control):
            attention = part.attention if part.attention is not None else gr.update()
            if part.outcome is None:
                yield WatchUpdate(part.curves, part.status, attention, control=control)
                continue
            run.keep(part.model, part.tokenizer, part.info)
            status = (f"**Training {part.outcome}** after {part.step} steps: {part.status}. “{name}” is now in the "
                      f"checkpoint list: open it in the Attention tab.")
            yield WatchUpdate(part.curves, status, attention, gr.update(choices=checkpoint_choices(key)), control)
