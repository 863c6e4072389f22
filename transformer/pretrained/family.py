"""The registry of pretrained families: each module (gpt2.py, llama.py, bert.py, ...) registers one `Family` under
the `model_type` its config.json carries, and `load_pretrained` dispatches on it."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..checkpoint import CheckpointError
from ..model import Transformer

FAMILIES: dict[str, "Family"] = {}


@dataclass(frozen=True)
class Family:
    """How one family of Hugging Face models becomes ours.

    check_config(hf): raise CheckpointError naming the config.json field this model cannot run.
    build(directory, hf): (our Transformer on the CPU, tokenizer), the weights read with weights.read_weights.
    tokenizer_files(directory): the tokenizer files it reads, or CheckpointError (used to list cached models).
    """

    model_type: str
    name: str  # "GPT-2", "Llama", "BERT": how the info and messages call it
    check_config: Callable[[dict], None]
    build: Callable[[Path, dict], tuple[Transformer, object]]
    tokenizer_files: Callable[[Path], list[Path]]


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
