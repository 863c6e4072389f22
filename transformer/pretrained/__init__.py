"""Real pretrained weights in the from-scratch blocks, from the Hugging Face layout, one module per family.

`load_pretrained(source)` reads config.json, picks the family its `model_type` names (gpt2.py registers "gpt2",
llama.py "llama", bert.py "bert", marian.py "marian": each a declarative spec, spec.py; family.py holds the
registry and the one loader, convert.py the one converter), checks the config, reads model.safetensors only after
its header matches the shapes our config implies (weights.py), and returns (model, tokenizer, info) as
`load_checkpoint` does. Only safetensors are read: a pickled pytorch_model.bin is refused, never opened.
`source` is a directory in the Hugging Face layout or a Hub repo id, fetched into the Hugging Face cache when the
Hub is reachable and read from that cache when it is not (hub.py).

    python -m transformer.pretrained HuggingFaceTB/SmolLM2-135M   # download a model into the Hugging Face cache
"""
from __future__ import annotations

import os
from pathlib import Path

import torch

from ..checkpoint import FORMAT_VERSION, resolve_device
from . import bert, gpt2, llama, marian  # noqa: F401  (each family module registers its family)
from .convert import pretrained_model, read_config  # noqa: F401
from .family import FAMILIES, build, family_of
from .hub import cached_models, fetch, hub_cache_dir, locate  # noqa: F401
from .download import main  # noqa: F401  (python -m transformer.pretrained)
from .weights import read_json, weights_file


def load_pretrained(source: str | os.PathLike, device: str | torch.device | None = None):
    """Load a pretrained model of a supported family as (our Transformer in eval mode, tokenizer, info).

    Raises CheckpointError naming what is wrong (an unsupported model_type lists the supported ones). `device`
    None takes CUDA when present. `info` has the shape of a checkpoint's config.json, so callers treat both alike.
    """
    directory, repo_id = locate(source)
    weights_file(directory)
    hf = read_json(directory / "config.json")
    family = family_of(directory, hf)
    model, tokenizer = build(family, directory, hf)
    info = {"format_version": FORMAT_VERSION, "model": model.config.to_dict(), "tokenizer": {"kind": tokenizer.kind},
            "task": None, "metrics": {},
            "training": {"source": repo_id or str(directory), "directory": str(directory), "family": family.name,
                         "pretrained": f"{family.name} weights in the Hugging Face layout, loaded by "
                                       f"transformer.pretrained; not trained here"}}
    device = resolve_device("auto" if device is None else device)
    return model.to(device).eval(), tokenizer, info


def _loadable(directory) -> bool:
    """True when `directory` holds model.safetensors, a config.json of a registered family and that family's
    tokenizer files."""
    weights_file(directory)
    family = FAMILIES.get(read_json(directory / "config.json").get("model_type"))
    return family is not None and bool(family.tokenizer.paths(directory))


def cached_pretrained_models(cache_dir: str | os.PathLike | None = None) -> list[tuple[str, str]]:
    """(display name "<name> (pretrained)", local directory) of every model of a supported family in the local
    Hugging Face cache: config.json with a registered model_type, model.safetensors, the family's tokenizer files.
    No network."""
    return cached_models(_loadable, cache_dir)


def cached_arch(directory: str | os.PathLike) -> str:
    """The arch ("decoder-only", "encoder-only", ...) of the model in a directory listed by cached_pretrained_models,
    from its config.json's model_type, without loading it."""
    directory = Path(directory)
    return family_of(directory, read_json(directory / "config.json")).arch
