"""The registry of pretrained families: each module (gpt2.py, llama.py, bert.py, ...) registers one `Family` under
the `model_type` its config.json carries, and `load_pretrained` dispatches on it."""
from __future__ import annotations

import json
import math
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
    arch: the TransformerConfig arch its models have ("decoder-only", "encoder-only", "encoder-decoder").
    """

    model_type: str
    name: str  # "GPT-2", "Llama", "BERT": how the info and messages call it
    check_config: Callable[[dict], None]
    build: Callable[[Path, dict], tuple[Transformer, object]]
    tokenizer_files: Callable[[Path], list[Path]]
    arch: str = "decoder-only"


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


def require_positive_ints(hf: dict, *names: str) -> None:
    """CheckpointError naming the first config.json field that is not a positive integer."""
    for name in names:
        value = hf.get(name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise CheckpointError(f"{name}: must be a positive integer, got {value!r}")


def require_epsilon(hf: dict, name: str, default: float) -> float:
    """config.json's epsilon `name` (or `default`): a finite number > 0, else CheckpointError naming it."""
    eps = hf.get(name, default)
    if not isinstance(eps, (int, float)) or isinstance(eps, bool) or not math.isfinite(eps) or eps <= 0:
        raise CheckpointError(f"{name}: must be a finite number > 0, got {eps!r}")
    return float(eps)


def require_token_id(hf: dict, name: str, default: int) -> int:
    """config.json's token id `name` (or `default`): an id below vocab_size, else CheckpointError naming it."""
    value = hf.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < hf["vocab_size"]:
        raise CheckpointError(f"{name}: must be a token id below vocab_size={hf['vocab_size']}, got {value!r}")
    return value


def require_values(hf: dict, supported: dict) -> None:
    """Each config.json field of `supported` (name -> (default, the value this model supports))."""
    for name, (default, value) in supported.items():
        if hf.get(name, default) != value:
            raise CheckpointError(f"{name}: only {json.dumps(value)} is supported, got {hf[name]!r}")
