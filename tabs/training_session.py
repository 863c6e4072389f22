"""One browser session's training run for the app's Train tab: validate the request, train, stream updates.

No gradio here: `run_training_session` is a plain generator of `SessionUpdate`s, so tests drive it directly and
app.py only maps each update onto its components.
"""
from __future__ import annotations

import codecs
import math
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import torch

import visualize as viz
from transformer import Transformer, TransformerConfig
from transformer.checkpoint import resolve_device, save_checkpoint
from transformer.compare import ComparisonSetup, compare_kv_heads, rewound
from transformer.data import TASKS, TaskData, TextData, load_hub_text, split_text
from transformer.tokenization import CharTokenizer
from transformer.train import TrainConfig, Trainer, TrainingError

PRESETS = {
    "tiny": {"layers": 1, "heads": 4, "d_model": 64, "lr": 3e-3, "steps": 1500, "batch_size": 64},
    "small": {"layers": 2, "heads": 4, "d_model": 128, "lr": 2e-3, "steps": 3000, "batch_size": 64},
}
LIMITS = {"layers": (1, 4), "heads": (1, 8), "d_model": (16, 256), "lr": (1e-5, 1e-2), "steps": (10, 5000),
          "batch_size": (4, 256), "text_chars": 2_000_000, "min_text_chars": 2_000, "seconds": 300,
          "concurrent_trainings": 2, "updates_per_second": 4}
TEXT_BLOCK = 64  # context of a text model trained here


@dataclass
class TrainingRequest:
    """What the Train tab asks for; `validated()` raises ValueError naming the first bad value."""

    source: str
    task: str
    text: str | None
    upload: str | None
    hub: str | None
    layers: int
    heads: int
    d_model: int
    lr: float
    steps: int
    batch_size: int

    def validated(self) -> "TrainingRequest":
        if not isinstance(self.source, str) or self.source not in ("task", "text"):
            raise ValueError(f"train on 'task' or 'text', not {str(self.source)[:40]!r}")
        if self.source == "task" and (not isinstance(self.task, str) or self.task not in TASKS):
            raise ValueError(f"unknown task {str(self.task)[:40]!r}; choose one of {', '.join(sorted(TASKS))}")
        for name in ("layers", "heads", "d_model", "lr", "steps", "batch_size"):
            value, (lo, hi) = getattr(self, name), LIMITS[name]
            label = name.replace("_", " ")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                    or not lo <= value <= hi:
                raise ValueError(f"{label} must be a number between {lo:g} and {hi:g}, got {str(value)[:40]}")
            if name != "lr" and value != int(value):
                raise ValueError(f"{label} must be a whole number, got {value:g}")
        for name in ("layers", "heads", "d_model", "steps", "batch_size"):
            setattr(self, name, int(getattr(self, name)))
        if self.d_model % self.heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by the number of heads ({self.heads})")
        for name in ("text", "upload", "hub"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                raise ValueError(f"{name}: expected text, got {type(getattr(self, name)).__name__}")
        return self

    def corpus(self) -> str:
        """The text to train on: an upload, else pasted text, else a Hub dataset *name* (never a server path)."""
        if self.upload:
            text = read_upload(self.upload, LIMITS["text_chars"])
        elif self.text and self.text.strip():
            text = self.text
        elif self.hub and self.hub.strip():
            text = load_hub_text(self.hub.strip())
        else:
            raise ValueError("paste some text, upload a .txt file or name a Hub dataset to train on text")
        if len(text) < LIMITS["min_text_chars"]:
            raise ValueError(f"the text has {len(text):,} characters; give at least {LIMITS['min_text_chars']:,}")
        return text[: LIMITS["text_chars"]]


def read_upload(path: str, max_chars: int) -> str:
    """The first max_chars characters of an uploaded UTF-8 text file (a character cut by the byte limit is
    dropped, not an error)."""
    with open(path, "rb") as f:
        raw = f.read(4 * max_chars)  # a UTF-8 character is at most 4 bytes
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(raw, final=False)  # keeps a cut character back
    except UnicodeDecodeError:
        raise ValueError("the upload is not a UTF-8 text file") from None
    if "\x00" in text:
        raise ValueError("the upload is not a text file (it contains binary data)")
    return text[:max_chars]


@dataclass
class SessionUpdate:
    curves: object
    status: str
    samples: pd.DataFrame
    attention: object
    control: threading.Event
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


def build_run(request: TrainingRequest):
    """(model, tokenizer, data, train config, task name or None) for a validated request."""
    r = request
    common = dict(d_model=r.d_model, n_heads=r.heads, d_ff=4 * r.d_model, dropout=0.0)
    if r.source == "task":
        task = TASKS[r.task]
        tokenizer = CharTokenizer(task.alphabet)
        config = TransformerConfig(arch="encoder-decoder", vocab_size=tokenizer.vocab_size, n_encoder_layers=r.layers,
                                   n_decoder_layers=r.layers, max_len=max(task.max_source_len, task.max_target_len) + 2,
                                   **common)
        data_factory = lambda cfg: TaskData(task, tokenizer, config, cfg.seed, cfg.eval_examples)  # noqa: E731
    else:
        train_text, val_text = split_text(r.corpus())
        tokenizer = CharTokenizer.from_text(train_text)
        config = TransformerConfig(arch="decoder-only", vocab_size=tokenizer.vocab_size, n_decoder_layers=r.layers,
                                   max_len=TEXT_BLOCK, norm_first=True, **common)
        data_factory = lambda cfg: TextData(train_text, val_text, tokenizer, TEXT_BLOCK, cfg.seed,  # noqa: E731
                                            cfg.eval_examples)
    train_cfg = TrainConfig(steps=r.steps, batch_size=r.batch_size, schedule="cosine", lr=r.lr,
                            warmup=min(100, r.steps // 10), eval_every=max(25, r.steps // 30), eval_examples=64,
                            max_seconds=LIMITS["seconds"], block_size=TEXT_BLOCK, seed=0)
    torch.manual_seed(train_cfg.seed)  # as the CLI's --seed: the same request starts from the same weights
    model = Transformer(config).to(resolve_device())
    return model, tokenizer, data_factory(train_cfg), train_cfg, (r.task if r.source == "task" else None)


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


def run_training_session(request: TrainingRequest, store, key: str):
    """Train as requested and yield SessionUpdates: at most a few a second, and one at every evaluation.

    The model's name is reserved in `store` (tabs.user_models.UserModels) for browser `key` before training
    starts. Setting the yielded `control` event stops training after the current step; the model trained so far
    then joins the store, kept for inference only (no gradients, no optimiser).
    """
    model, tokenizer, data, train_cfg, task = build_run(request.validated())
    trainer = Trainer(model, tokenizer, data, train_cfg)
    name = store.reserve(key, task)
    control, history = threading.Event(), _History()
    samples = pd.DataFrame(columns=["input", "expected", "model output"])
    attention = viz.empty_curves(f"Attention appears at the first evaluation (step {train_cfg.eval_every})")
    status, last_yield, event, finished = f"Starting “{name}”…", 0.0, None, False
    try:
        yield SessionUpdate(viz.empty_curves("Starting…"), status, samples, attention, control, 0, train_cfg.steps,
                            name)
        outcome = "finished"
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
                    samples = pd.DataFrame(event.samples, columns=["input", "expected", "model output"])
                    attention = _attention_figure(event)
                if control.is_set():
                    outcome = "stopped"
                    break
                if event.kind == "eval" or time.perf_counter() - last_yield > 1 / LIMITS["updates_per_second"]:
                    last_yield = time.perf_counter()
                    yield SessionUpdate(history.figure(), status, samples, attention, control, trainer.step,
                                        train_cfg.steps, name)
        except TrainingError as e:
            outcome = f"stopped: {e}"
        control.set()
        info = {"task": task, "metrics": {}, "training": trainer.training_info()}
        del trainer  # the optimiser's state goes with it: only the weights are kept
        dropped = store.put(key, name, model, tokenizer, info)
        finished = True
        status = (f"**Training {outcome}** after {info['training']['steps']} steps "
                  f"({info['training']['wall_time_s']:.0f} s). “{name}” is now in the checkpoint list"
                  + (f" (the oldest, {', '.join(dropped)}, made room: a browser keeps its last "
                     f"{store.per_browser} models)" if dropped else "") + ". "
                  + (status if event is not None else ""))
        yield SessionUpdate(history.figure(), status, samples, attention, control, info["training"]["steps"],
                            train_cfg.steps, name, done=True)
    finally:
        control.set()
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


COMPARE_LIMITS = {"steps": 1500, "seconds_per_variant": 100}  # three runs in one request: at most ~5 minutes


def run_comparison_session(request: TrainingRequest):
    """MHA vs GQA vs MQA (transformer.compare): the requested model trained once per n_kv_heads, one after the other,
    same data, steps and seed; yields (figure of the loss curves, status, table or None), a few times a second, and
    the table of parameters, KV-cache bytes per token, decoding speed and final quality at the end."""
    request = request.validated()
    request.steps = min(request.steps, COMPARE_LIMITS["steps"])
    model, tokenizer, data, train_cfg, task = build_run(request)
    train_cfg.max_seconds = COMPARE_LIMITS["seconds_per_variant"]
    setup = ComparisonSetup(model.config, tokenizer, train_cfg, rewound(data))
    del model  # each variant builds its own
    title = "MHA vs GQA vs MQA: train loss"
    curves, rows, note, last_yield, status = {}, [], "", 0.0, "Starting…"
    label = lambda v: f"{v.name} ({v.n_kv_heads} kv heads)"  # noqa: E731
    for event in compare_kv_heads(setup, decode_tokens=32, speed_rounds=5):
        if event.kind == "plan":
            note = (event.note + " ") if event.note else ""
            curves = {label(v): ([], []) for v in event.variants}
            status = note + f"Training {', '.join(curves)} for {event.steps} steps each, one after the other…"
        elif event.kind == "train" and event.event.kind == "step":
            steps, losses = curves[label(event.variant)]
            steps.append(event.event.step)
            losses.append(event.event.loss)
            status = note + f"{label(event.variant)}: step {event.event.step}/{train_cfg.steps} · " \
                            f"loss {event.event.loss:.3f}"
        elif event.kind == "row":
            rows.append(event.to_dict())
            continue
        if time.perf_counter() - last_yield > 1 / LIMITS["updates_per_second"]:
            last_yield = time.perf_counter()
            yield viz.comparison_curves(curves, title=title), status, None
    table = pd.DataFrame(rows)
    yield viz.comparison_curves(curves, title=title), note + "**Done.** Same data, steps and seed for each.", table
