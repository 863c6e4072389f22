"""One browser session's training run for the app's Train tab: validate the request, train, stream updates.

No gradio here: `run_training_session` is a plain generator of `SessionUpdate`s, so tests drive it directly and
app.py only maps each update onto its components. The training itself (`train_stream`) is a separate generator of
picklable `TrainingProgress`es that takes plain values and changes nothing in the app's memory, so the Train tab can
run it on a ZeroGPU worker (tabs.gpu); the session around it keeps the store and the Stop signal.
"""
from __future__ import annotations

import atexit
import codecs
import math
import os
import shutil
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import torch

import visualize as viz
from transformer import Transformer, TransformerConfig
from transformer.config import ATTENTIONS, POS_ENCODINGS
from transformer.checkpoint import resolve_device, save_checkpoint
from transformer.compare import COMPARISONS, ComparisonSetup, compare_variants, comparison_variants, rewound
from transformer.data import TASKS, TaskData, TextData, load_hub_text, split_text
from transformer.tokenization import CharTokenizer
from transformer.train import TrainConfig, Trainer, TrainingError

from .gpu import for_the_app

PRESETS = {
    "tiny": {"layers": 1, "heads": 4, "d_model": 64, "lr": 3e-3, "steps": 1500, "batch_size": 64},
    "small": {"layers": 2, "heads": 4, "d_model": 128, "lr": 2e-3, "steps": 3000, "batch_size": 64},
}
LIMITS = {"layers": (1, 4), "heads": (1, 8), "d_model": (16, 256), "lr": (1e-5, 1e-2), "steps": (10, 5000),
          "batch_size": (4, 256), "text_chars": 2_000_000, "min_text_chars": 2_000, "seconds": 300,
          "concurrent_trainings": 2, "updates_per_second": 4}
TEXT_BLOCK = 64  # context of a text model trained here
SAMPLE_COLUMNS = ["input", "expected", "model output"]


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
    attention: str = "mha"  # or "mla"
    positions: str = "sinusoidal"  # or "learned", "rope", "alibi"

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
        if self.attention not in ATTENTIONS:
            raise ValueError(f"attention must be one of {', '.join(ATTENTIONS)}, got {str(self.attention)[:40]!r}")
        if self.positions not in POS_ENCODINGS:
            raise ValueError(f"positions must be one of {', '.join(POS_ENCODINGS)}, got {str(self.positions)[:40]!r}")
        try:  # the config's own rules (RoPE needs an even head size d_model / heads)
            TransformerConfig(vocab_size=8, d_model=self.d_model, n_heads=self.heads, d_ff=8,
                              attention=self.attention, pos_encoding=self.positions)
        except ValueError as e:
            raise ValueError(f"{self.positions} positions with {self.heads} heads of d_model {self.d_model}: {e}") \
                from None
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


def training_config(request: TrainingRequest, max_seconds: float = LIMITS["seconds"]) -> TrainConfig:
    """The TrainConfig of a validated request: cosine schedule, warm-up and evaluations scaled to its steps."""
    r = request
    return TrainConfig(steps=r.steps, batch_size=r.batch_size, schedule="cosine", lr=r.lr,
                       warmup=min(100, r.steps // 10), eval_every=max(25, r.steps // 30), eval_examples=64,
                       max_seconds=max_seconds, block_size=TEXT_BLOCK, seed=0)


def build_run(request: TrainingRequest, text: str | None = None, max_seconds: float = LIMITS["seconds"]):
    """(model, tokenizer, data, train config, task name or None) for a validated request; a text run trains on
    `text` when given (the corpus its session already read), else on request.corpus()."""
    r = request
    common = dict(d_model=r.d_model, n_heads=r.heads, d_ff=4 * r.d_model, dropout=0.0, attention=r.attention,
                  pos_encoding=r.positions)
    if r.source == "task":
        task = TASKS[r.task]
        tokenizer = CharTokenizer(task.alphabet)
        config = TransformerConfig(arch="encoder-decoder", vocab_size=tokenizer.vocab_size, n_encoder_layers=r.layers,
                                   n_decoder_layers=r.layers, max_len=max(task.max_source_len, task.max_target_len) + 2,
                                   **common)
        data_factory = lambda cfg: TaskData(task, tokenizer, config, cfg.seed, cfg.eval_examples)  # noqa: E731
    else:
        train_text, val_text = split_text(text if text is not None else r.corpus())
        tokenizer = CharTokenizer.from_text(train_text)
        config = TransformerConfig(arch="decoder-only", vocab_size=tokenizer.vocab_size, n_decoder_layers=r.layers,
                                   max_len=TEXT_BLOCK, norm_first=True, **common)
        data_factory = lambda cfg: TextData(train_text, val_text, tokenizer, TEXT_BLOCK, cfg.seed,  # noqa: E731
                                            cfg.eval_examples)
    train_cfg = training_config(r, max_seconds)
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


class StopSignal:
    """The Train tab's Stop, seen by a run in this process or in a fork of it (a ZeroGPU worker): `set()` sets an
    event here and creates a flag file; `is_set()` reads either. It pickles as the file's path (an Event does not
    pickle). `discard()` ends it when the run is over: the file goes, the signal stays set."""

    _folder: Path | None = None
    _lock = threading.Lock()

    def __init__(self):
        with StopSignal._lock:
            if StopSignal._folder is None or not StopSignal._folder.is_dir():
                StopSignal._folder = Path(tempfile.mkdtemp(prefix="attention-lab-stop-"))
                atexit.register(shutil.rmtree, StopSignal._folder, True)
        self.path = str(StopSignal._folder / uuid.uuid4().hex)
        self._event = threading.Event()

    def set(self) -> None:
        if not self._event.is_set():
            self._event.set()
            Path(self.path).touch()

    def is_set(self) -> bool:
        return self._event.is_set() or os.path.exists(self.path)

    def discard(self) -> None:
        self._event.set()
        Path(self.path).unlink(missing_ok=True)

    def __getstate__(self) -> dict:
        return {"path": self.path}

    def __setstate__(self, state: dict) -> None:
        self.path, self._event = state["path"], threading.Event()


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
    model, tokenizer, data, train_cfg, task = build_run(request, text, max_seconds)
    trainer = Trainer(model, tokenizer, data, train_cfg)
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


COMPARE_LIMITS = {"steps": 1500, "seconds": 300, "seconds_per_variant": 100}  # one request: at most ~5 minutes


def run_comparison_session(request: TrainingRequest, which: str = "kv-heads",
                           seconds: float = COMPARE_LIMITS["seconds"]):
    """A comparison of attention variants (transformer.compare: `which` names one of COMPARISONS): the requested
    model trained once per variant, one after the other, same data, steps and seed; yields (figure of the loss
    curves, status, table or None), a few times a second, and at the end the table of parameters, KV-cache bytes
    per token, training and decoding speed, final quality and how far the heads look. The variants share
    `seconds` of wall-clock time, each at most COMPARE_LIMITS["seconds_per_variant"]."""
    request = request.validated()
    if which not in COMPARISONS:
        raise ValueError(f"Compare: choose one of {', '.join(COMPARISONS)}, got {which!r}")
    request.steps = min(request.steps, COMPARE_LIMITS["steps"])
    model, tokenizer, data, train_cfg, task = build_run(request)
    try:
        variants = comparison_variants(which, model.config)
    except ValueError as e:
        raise ValueError(f"Compare {COMPARISONS[which]}: {e}") from None
    train_cfg.max_seconds = min(COMPARE_LIMITS["seconds_per_variant"], seconds / len(variants))
    setup = ComparisonSetup(model.config, tokenizer, train_cfg, rewound(data))
    del model  # each variant builds its own
    title = f"{COMPARISONS[which]}: train loss"
    curves, rows, note, last_yield, status = {}, [], "", 0.0, "Starting…"
    label = lambda v: f"{v.name} ({v.n_kv_heads} kv heads)" if v.name in ("MHA", "GQA", "MQA") else v.name  # noqa: E731
    for event in compare_variants(setup, variants, decode_tokens=32, speed_rounds=5):
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
