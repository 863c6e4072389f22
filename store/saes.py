"""The SAEs shipped beside the checkpoints (issue 42): each loaded and checked once per process, with its stored
top contexts (transformer.interpretability.feature_contexts), for the Attention tab's "What the heads write".

A shipped SAE and its contexts file are data: sae_files.load_sae and feature_contexts.load_contexts check them and
raise CheckpointError saying what is wrong, which the section shows in words. At most SAES_KEPT are kept (a shipped
one is 1 MiB with its contexts; the repository ships 12), and UNEMBEDDINGS_KEPT models' unembeddings in float64."""
from __future__ import annotations

import functools
from dataclasses import dataclass

from transformer.checkpoint import read_info
from transformer.interpretability.feature_contexts import StoredContexts, load_contexts
from transformer.interpretability.feature_page import Unembedding, head_share, unembedding_or_none
from transformer.interpretability.features import AttentionLayer, width
from transformer.interpretability.sae import SparseAutoencoder
from transformer.interpretability.sae_files import layers_with_sae, load_sae

from limits import SAES_KEPT, UNEMBEDDINGS_KEPT
from store.catalogue import CHECKPOINTS, SHIPPED, shipped_model


@dataclass(frozen=True)
class ShippedSAE:
    """A layer's shipped SAE (on the CPU) and every feature's stored top held-out contexts."""

    sae: SparseAutoencoder
    contexts: StoredContexts


@functools.lru_cache(maxsize=len(SHIPPED))
def sae_layers(name: str) -> tuple[AttentionLayer, ...]:
    """The layers shipped checkpoint `name` has an SAE for (config.json's "features"); () for any other name."""
    if name not in SHIPPED:
        return ()
    return tuple(layers_with_sae(read_info(CHECKPOINTS / name)))


@functools.lru_cache(maxsize=SAES_KEPT)
def shipped_sae(name: str, kind: str, layer: int) -> ShippedSAE:
    """The SAE of `kind` layer `layer` shipped beside checkpoint `name`, checked (CheckpointError otherwise)."""
    model, _, info = shipped_model(name)
    at = AttentionLayer(kind, layer)
    sae = load_sae(CHECKPOINTS / name, info, at, width(model))
    return ShippedSAE(sae, load_contexts(CHECKPOINTS / name, at, sae.config.n_features, model.config.vocab_size))


@functools.lru_cache(maxsize=UNEMBEDDINGS_KEPT)
def shipped_unembedding(name: str) -> Unembedding | None:
    """Shipped checkpoint `name`'s final norm and unembedding in float64, on its device, made once: what every
    feature's logit effect reads (None for a model with no direct path to the logits: each effect says why)."""
    model, _, _ = shipped_model(name)
    return unembedding_or_none(model)


def main_head(name: str, kind: str, layer: int, feature: int) -> int:
    """The head that writes most of `feature` of a shipped SAE: the largest share of its decoder row."""
    model, _, _ = shipped_model(name)
    return int(head_share(shipped_sae(name, kind, layer).sae, model.config.n_heads)[feature].argmax())


def sae_list() -> str:
    """Every shipped checkpoint with SAEs and their layers, in words: "induction (decoder self 0, 1), ..."."""
    parts = []
    for name in SHIPPED:
        layers = sae_layers(name)
        if layers:
            kinds = {}
            for at in layers:
                kinds.setdefault(str(at.kind), []).append(str(at.layer))
            parts.append(f"{name} (" + "; ".join(f"{k} {', '.join(v)}" for k, v in kinds.items()) + ")")
    return ", ".join(parts)
