"""What the Train tab asks for: the request (validated: a ValueError names the first bad value), its limits and
presets, and the run it becomes (transformer.train.run.build_run, the CLI's run builder). No gradio here."""
from __future__ import annotations

import codecs
from dataclasses import dataclass

from transformer import TransformerConfig
from transformer.config import ATTENTIONS, POS_ENCODINGS
from transformer.data import TASKS, load_hub_text, split_text
from transformer.train.run import Run
from transformer.train.run import build_run as build_run_of
from transformer.train import TrainConfig

from checks import check_number
from limits import CHAR_VOCAB, TEXT_BLOCK, TRAINING, TRAINING_BYTES
from tabs.train.lifecycle import training_device

PRESETS = {
    "tiny": {"layers": 1, "heads": 4, "d_model": 64, "lr": 3e-3, "steps": 1500, "batch_size": 64},
    "small": {"layers": 2, "heads": 4, "d_model": 128, "lr": 2e-3, "steps": 3000, "batch_size": 64},
}
HYPER_PARAMETERS = ("layers", "heads", "d_model", "lr", "steps", "batch_size")  # what a preset fills in, in order
# The Train tab's choices: the values are the config's own (transformer.config), the words the tab's
ATTENTION_CHOICES = [({"mha": "multi-head (MHA)", "mla": "multi-head latent (MLA)"}[value], value)
                     for value in ATTENTIONS]
POSITION_CHOICES = [({"sinusoidal": "sinusoidal (the paper)", "learned": "learned", "rope": "RoPE (rotary)",
                      "alibi": "ALiBi (linear bias)"}[value], value) for value in POS_ENCODINGS]


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
            lo, hi = TRAINING[name]
            setattr(self, name, check_number(getattr(self, name), name.replace("_", " "), lo, hi, integer=name != "lr"))
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
        if self.text is not None and len(self.text) > TRAINING["text_chars"]:
            raise ValueError(f"the text is {len(self.text):,} characters long; the limit is {TRAINING['text_chars']:,}")
        return self

    def corpus(self) -> str:
        """The text to train on: an upload, else pasted text, else a Hub dataset *name* (never a server path)."""
        if self.upload:
            text = read_upload(self.upload, TRAINING["text_chars"])
        elif self.text and self.text.strip():
            text = self.text
        elif self.hub and self.hub.strip():
            text = load_hub_text(self.hub.strip(), max_chars=TRAINING["text_chars"])  # streamed, read that far
        else:
            raise ValueError("paste some text, upload a .txt file or name a Hub dataset to train on text")
        if len(text) < TRAINING["min_text_chars"]:
            raise ValueError(f"the text has {len(text):,} characters; give at least {TRAINING['min_text_chars']:,}")
        return text[: TRAINING["text_chars"]]


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


def training_config(request: TrainingRequest, max_seconds: float = TRAINING["seconds"]) -> TrainConfig:
    """The TrainConfig of a validated request: cosine schedule, warm-up and evaluations scaled to its steps."""
    r = request
    return TrainConfig(steps=r.steps, batch_size=r.batch_size, schedule="cosine", lr=r.lr,
                       warmup=min(100, r.steps // 10), eval_every=max(25, r.steps // 30), eval_examples=64,
                       max_seconds=max_seconds, block_size=TEXT_BLOCK, seed=0)


def build_run(request: TrainingRequest, text: str | None = None, max_seconds: float = TRAINING["seconds"]) -> Run:
    """The library's run (transformer.train.run.build_run, as the CLI builds one) of a validated request: an
    encoder-decoder of `layers` + `layers` layers for a task; a pre-norm decoder-only model of TEXT_BLOCK tokens
    for a text (its CHAR_VOCAB most frequent characters), trained on `text` when given (the corpus its session
    already read), else on request.corpus(). A run over the memory budget TRAINING_BYTES is refused before it is
    built."""
    r = request
    common = dict(d_model=r.d_model, n_heads=r.heads, d_ff=4 * r.d_model, dropout=0.0, attention=r.attention,
                  pos_encoding=r.positions)
    train_cfg = training_config(r, max_seconds)
    bounds = dict(device=training_device(), memory_limit=TRAINING_BYTES)  # refused before allocating if over it
    if r.source == "task":
        return build_run_of(train_cfg, task=r.task, arch="encoder-decoder", n_encoder_layers=r.layers,
                            n_decoder_layers=r.layers, **bounds, **common)
    corpus = text if text is not None else r.corpus()
    return build_run_of(train_cfg, text=split_text(corpus), max_vocab=CHAR_VOCAB, n_decoder_layers=r.layers,
                        max_len=TEXT_BLOCK, norm_first=True, **bounds, **common)
