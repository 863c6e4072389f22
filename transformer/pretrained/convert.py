"""The one converter: a family's spec (spec.py) applied to a config.json and its stored tensors.

`read_config(family, hf)` reads each config.json field once into our TransformerConfig; an error names the
config.json field (TransformerConfig's own checks included: their field is translated back). `plan(family, config,
where)` says what model.safetensors must hold, shapes derived from our config; `convert(family, config, plan,
tensors)` is our state dict. `pretrained_model(family, hf, tensors)` does all three for tensors already in memory
(the benches).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

import torch
from torch import Tensor

from ..checkpoint import CheckpointError, expected_tensors
from ..config import TransformerConfig
from ..model import Transformer
from .spec import Family, Ours, Read, Weight, lookup
from .weights import Layout, check_names, model_from_state

FIELD = re.compile(r"^(\w+): ")


def read_config(family: Family, hf: dict) -> TransformerConfig:
    """Our TransformerConfig for a config.json of `family`, or CheckpointError naming the config.json field."""
    for name, value in {"model_type": family.model_type, **family.supported}.items():
        got = lookup(hf, name)
        if got is not None and got != value:
            raise CheckpointError(f"{name}: only {value!r} is supported, got {got!r}")
    ours, source = {"arch": family.arch}, {}  # the family's arch is our config's
    for name, rule in family.config.items():
        if isinstance(rule, Read):
            ours[name], source[name] = rule.read(hf, ours)
        else:
            ours[name] = ours[rule.name] if isinstance(rule, Ours) else rule
            source[name] = source.get(rule.name) if isinstance(rule, Ours) else None
    config = _config(ours, source)
    for name, our_field in family.equal_to_ours.items():
        got = lookup(hf, name)
        if got is not None and got != getattr(config, our_field):
            raise CheckpointError(f"{name}: must equal our {our_field} ({getattr(config, our_field)!r}: one value "
                                  f"for both), got {got!r}")
    return config


def _config(ours: dict, source: dict) -> TransformerConfig:
    """TransformerConfig(**ours); its ValueError names our field, re-raised naming the config.json one it came from."""
    try:
        return TransformerConfig(**ours)
    except ValueError as e:
        named = FIELD.match(str(e))
        if named is None:
            raise CheckpointError(f"config.json: {e}") from None
        field, why = named.group(1), str(e)[named.end():]
        where = f"{source[field]} (our {field})" if source.get(field) else f"config.json: {field}"
        raise CheckpointError(f"{where}: {why}") from None


def with_tokenizer(family: Family, config: TransformerConfig, tokenizer, directory) -> TransformerConfig:
    """The config with the ids the family takes from its tokenizer, after checking the two agree."""
    size = tokenizer.vocab_size
    if size > config.vocab_size or (family.vocab == "equal" and size != config.vocab_size):
        raise CheckpointError(f"{directory}: the tokenizer has {size} tokens, config.json says "
                              f"vocab_size={config.vocab_size}")
    for name in family.agrees_with_tokenizer:
        if getattr(tokenizer, name) != getattr(config, name):
            raise CheckpointError(f"{directory}: the tokenizer's {name} is {getattr(tokenizer, name)}, config.json "
                                  f"says {getattr(config, name)}")
    taken = {name: getattr(tokenizer, attribute) for name, attribute in family.from_tokenizer.items()}
    return _config({**config.to_dict(), **taken}, {name: "tokenizer" for name in taken}) if taken else config


@dataclass(frozen=True)
class Plan:
    """How one config's model is read: `layout` (what model.safetensors must hold), `rules` (each of our stored
    tensors -> its Weight) and `tied` (each other member of a tied group -> the stored one)."""

    layout: Layout
    rules: dict[str, Weight]
    tied: dict[str, str]


def rules(family: Family, config: TransformerConfig, ours: dict[str, tuple[int, ...]],
          groups: list[set[str]]) -> tuple[dict[str, Weight], dict[str, str]]:
    """(each of our tensors that is stored -> its rule, each tied one -> the stored one). A tied group is stored
    once, as its first member in our state dict's order; its other members' stored names are copies of it.
    ValueError when the spec and our model disagree (a spec's mistake, not the file's)."""
    spec = dict(family.weights)
    for stack in family.layers:
        for i in range(getattr(config, stack.count)):
            prefix, stored = stack.ours.format(i=i), stack.stored.format(i=i)
            spec |= {prefix + name: weight.under(stored) for name, weight in stack.weights.items()}
    unknown = sorted(set(spec) - set(ours))
    if unknown:
        raise ValueError(f"the {family.name} spec maps tensors our model does not have: {unknown[:5]}")
    found, tied = {}, {}
    for group in groups:
        members = [name for name in ours if name in group]
        named = [spec[name] for name in members if name in spec]
        if not named:
            raise ValueError(f"the {family.name} spec says nothing of {members[0]}")
        first, others = named[0], named[1:]
        copies = tuple(n for weight in others for n in (*weight.stored, *weight.copies))
        found[members[0]] = replace(first, copies=first.copies + copies)
        tied |= {member: members[0] for member in members[1:]}
    return found, tied


def plan(family: Family, config: TransformerConfig, where) -> Plan:
    """How to read the model of `config` (its size checked first: CheckpointError naming `where`)."""
    ours, groups = expected_tensors(where, config)
    found, tied = rules(family, config, ours, groups)
    shapes, needed = {}, []
    for name, weight in found.items():
        for stored, shape in zip(weight.stored, weight.transform.shapes(ours[name], config)):
            shapes[stored] = shape
        shapes |= {copy: shapes[weight.stored[0]] for copy in weight.copies}
        if weight.absent is None:
            needed += [(*weight.stored, *weight.copies)] if weight.copies else [(n,) for n in weight.stored]
    for checked in family.checked:
        shapes |= {name: tuple(checked.value(config).shape) for name in checked.names}

    def ignored(name: str, shape: tuple[int, ...]) -> bool:
        return any(re.match(rule.pattern, name) and (rule.shapes is None or shape in rule.shapes(config))
                   for rule in family.ignored)

    return Plan(Layout(shapes, needed, ignored, rename(family)), found, tied)


def rename(family: Family):
    """The family's renaming of a stored name (its regex substitutions, in order)."""
    def renamed(name: str) -> str:
        for pattern, replacement in family.rename:
            name = re.sub(pattern, replacement, name)
        return name
    return renamed


def convert(family: Family, config: TransformerConfig, how: Plan, tensors: dict[str, Tensor]) -> dict[str, Tensor]:
    """Our state dict from the stored tensors (renamed; checked against the layout), one rule per tensor."""
    tensors = {name: t.float() for name, t in tensors.items()}
    for checked in family.checked:  # a stored table is compared with the one we compute, then dropped
        for name in checked.names:
            if name in tensors and not torch.allclose(tensors.pop(name), checked.value(config), atol=checked.atol):
                raise CheckpointError(f"model.safetensors: {name} is not {checked.what}")
    state = {ours: take(weight, tensors, ours, config) for ours, weight in how.rules.items()}
    return state | {member: state[stored] for member, stored in how.tied.items()}


def take(weight: Weight, tensors: dict[str, Tensor], ours: str, config: TransformerConfig) -> Tensor:
    """One of our tensors from the stored ones (every copy present must equal the first)."""
    if weight.copies:
        stored = [tensors[n] for n in (*weight.stored, *weight.copies) if n in tensors]
        if any(not torch.equal(stored[0], t) for t in stored[1:]):
            raise CheckpointError(f"model.safetensors: {', '.join((*weight.stored, *weight.copies))} differ; this "
                                  f"model holds one matrix for them ({ours})")
        return weight.transform.apply(stored[:1])
    if weight.absent is not None and weight.stored[0] not in tensors:
        return weight.absent(config)  # not stored: the family's value
    return weight.transform.apply([tensors[n] for n in weight.stored])


def pretrained_model(family: Family, hf: dict, tensors: dict[str, Tensor]) -> Transformer:
    """Our Transformer (CPU, train mode) from a config.json dict and stored tensors already in memory, checked as
    a file is (names and shapes against our config)."""
    config = read_config(family, hf)
    how = plan(family, config, family.name)
    tensors = {how.layout.rename(name): t for name, t in tensors.items()}
    check_names(family.name, {name: tuple(t.shape) for name, t in tensors.items()}, how.layout)
    return model_from_state(config, convert(family, config, how, tensors))
