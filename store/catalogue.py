"""The checkpoint list every tab shares: the shipped checkpoints, the pretrained models (GPT-2, Llama, BERT, ...:
every family transformer.pretrained reads) found in the local Hugging Face cache,
and the models this browser trained (store.user_models); loading a name, and `ModelRef`, how a @gpu function finds
its model."""
from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass
from pathlib import Path


from transformer.checkpoint import load_checkpoint
from transformer.pretrained import cached_arch, cached_pretrained_models, load_pretrained
from transformer.pretrained.marian import marian_languages

from checks import UserError
from limits import MODELS_PER_BROWSER, STORED_MODELS
from store.about import trained_on
from store.gpu import DEVICE, onto_device
from store.user_models import UserModels

CHECKPOINTS = Path(__file__).resolve().parents[1] / "checkpoints"
SHIPPED = sorted(p.parent.name for p in CHECKPOINTS.glob("*/config.json"))
USER_MODELS = UserModels(per_browser=MODELS_PER_BROWSER, max_models=STORED_MODELS)  # each browser: its last few

NOTICES: list = []  # what tells the user a notice of the store (app.py adds gr.Info: the store knows no gradio)


@functools.lru_cache(maxsize=None)
def shipped_model(name: str):
    """Load a shipped checkpoint once per process (on the GPU when there is one)."""
    return load_checkpoint(CHECKPOINTS / name)


@functools.lru_cache(maxsize=1)
def pretrained() -> dict[str, str]:
    """{"gpt2 (pretrained)": local directory} for every model of a supported family in this machine's Hugging Face
    cache (no network; read once per process: restart the app after `python -m transformer.pretrained <name>`)."""
    return dict(cached_pretrained_models())


@functools.lru_cache(maxsize=1)
def pretrained_model(name: str):
    """Load a pretrained model on first use; one stays in memory at a time (GPT-2 small, SmolLM2-135M and
    bert-base-uncased are each ~0.5 GB in float32)."""
    for tell in NOTICES:
        tell(f"Loading {name}: a real pretrained model, a few seconds the first time…")
    return load_pretrained(pretrained()[name])


def pretrained_of_arch(arch: str) -> list[str]:
    """The cached pretrained models of one arch ("encoder-only": the BERTs), by name, without loading any."""
    return sorted(name for name, directory in pretrained().items() if cached_arch(directory) == arch)


def pretrained_translator(source: str = "en", target: str = "es") -> str | None:
    """The list name of a cached Marian translating `source` -> `target` (opus-mt-en-es's, when several are), or
    None when the cache has none; nothing is loaded."""
    names = [name for name in pretrained_of_arch("encoder-decoder")
             if marian_languages(pretrained()[name], name) == (source, target)]
    return min(names, key=lambda name: (not name.startswith(f"opus-mt-{source}-{target}"), name), default=None)


def fixed_choices() -> list[str]:
    """The checkpoints every browser sees: the shipped ones and the pretrained ones found in the local cache."""
    return SHIPPED + sorted(pretrained())


def resolve(name, key: str):
    """(model, tokenizer, info) of a checkpoint name: a shipped one, or one this browser trained."""
    if not isinstance(name, str) or not name:
        raise UserError("pick a checkpoint from the list")
    if name in SHIPPED:
        return shipped_model(name)
    if name in pretrained():
        return pretrained_model(name)
    entry = USER_MODELS.get(key, name)
    if entry is not None:
        return entry
    why = USER_MODELS.why_gone(key, name)
    if why:
        raise UserError(why)
    raise UserError(f"unknown checkpoint {name[:80]!r}: pick one from the list (a model trained here is kept for "
                    f"the browser that trained it, its last {USER_MODELS.per_browser} models)")


@dataclass(frozen=True)
class ModelRef:
    """What a @gpu function (store.gpu) is given to find its model: the name of a shipped or pretrained one (every
    process has those: on a GPU they are loaded at import, before ZeroGPU forks its worker), or the entry of a model
    a browser trained, which lives only in the app's process (on ZeroGPU it travels with the call, pickled)."""

    name: str
    trained: tuple | None = None  # (model, tokenizer, info) of a browser's own model

    def load(self):
        """(model on the app's device, tokenizer, info)."""
        if self.trained is None:
            return shipped_model(self.name) if self.name in SHIPPED else pretrained_model(self.name)
        model, tokenizer, info = self.trained
        return onto_device(model), tokenizer, info

    def identity(self):
        """What names this model in a cache every browser shares: the name of a shipped or pretrained model, or a
        weak reference to a browser's own model (equal to another key only while that model lives: a new model
        given a freed one's id is never taken for it, and the cache does not keep the model alive)."""
        return self.name if self.trained is None else weakref.ref(self.trained[0])


def model_ref(name, key: str) -> ModelRef:
    """The ModelRef of a checkpoint name (checked as `resolve` checks it, without loading anything)."""
    if isinstance(name, str) and (name in SHIPPED or name in pretrained()):
        return ModelRef(name)
    return ModelRef(name, resolve(name, key))  # this browser's model, or a UserError


def load_at_start() -> None:
    """With a GPU, every shipped model and the cached pretrained ones go onto it now, at import: ZeroGPU moves the
    weights it finds on CUDA at start-up into each GPU worker, and a handler never waits for a load. On a CPU the
    models load on first use, which keeps the app's start fast."""
    if DEVICE.type == "cuda":
        for name in SHIPPED:
            shipped_model(name)
        for name in sorted(pretrained())[:1]:  # pretrained_model keeps one in memory
            pretrained_model(name)


def description(name, key: str) -> str:
    """What checkpoint `name` was trained on and what it expects (store.about.trained_on, from the `task` and
    `training` of its config.json or, for a model trained in this browser, of its info); "" for a name this
    browser cannot use."""
    try:
        _, _, info = resolve(name, key)
    except UserError:
        return ""
    return trained_on(info.get("task"), info.get("training"), pretrained=name in pretrained())


def checkpoint_choices(key: str) -> list[str]:
    return fixed_choices() + USER_MODELS.names(key)
