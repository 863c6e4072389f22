"""The registry of pretrained families and the one loader that reads any of them.

Each module (gpt2.py, llama.py, bert.py, marian.py) is a spec (spec.Family) registered under the `model_type` its
config.json carries; `load_pretrained` dispatches on it and `build` reads the directory in one order for all:
config.json (checked field by field), the model's size (bounded), the tokenizer, model.safetensors' header against
the shapes our config implies, then the data, converted by convert.py.
"""
from __future__ import annotations

from pathlib import Path

from ..checkpoint import CheckpointError
from ..model import Transformer
from .convert import convert, plan, read_config, with_tokenizer
from .spec import Family
from .weights import model_from_state, read_weights

FAMILIES: dict[str, Family] = {}


def register(family: Family) -> Family:
    FAMILIES[family.model_type] = family
    return family


def family_of(directory, hf: dict) -> Family:
    """The registered family of a config.json, or CheckpointError listing the supported model types."""
    family = FAMILIES.get(hf.get("model_type"))
    if family is None:
        raise CheckpointError(f"{directory}/config.json: model_type {hf.get('model_type')!r} is not supported "
                              f"(supported: {', '.join(sorted(FAMILIES))})")
    return family


def read_tokenizer(family: Family, directory: Path):
    """The family's tokenizer from `directory`, or CheckpointError naming the files."""
    paths = family.tokenizer.paths(directory)
    try:
        return family.tokenizer.read(directory, paths)
    except Exception as e:  # tokenizers' and sentencepiece's parse errors, bad JSON, our own ValueError
        raise CheckpointError(f"{directory}: the {family.name} tokenizer ({', '.join(p.name for p in paths)}) "
                              f"cannot be read: {e}") from None


def build(family: Family, directory: Path, hf: dict) -> tuple[Transformer, object]:
    """(our Transformer on the CPU in train mode holding the model of `directory`, its tokenizer)."""
    config = read_config(family, hf)
    how = plan(family, config, directory)  # the model's size bounded before any other file is read
    tokenizer = read_tokenizer(family, directory)
    config = with_tokenizer(family, config, tokenizer, directory)  # token ids only: the plan's shapes hold
    tensors = read_weights(directory / "model.safetensors", how.layout)
    return model_from_state(config, convert(family, config, how, tensors)), tokenizer
