"""What the heads write at each position of one input: an SAE's features on the forward pass of an attention record.

The app's section "What the heads write" (issue 42, item 4) reads, for the input the Attention tab holds, the layer's
concatenated head outputs z at every position of its stream (the decoder's for decoder self and cross attention,
the source's for encoder self), from the record's own forward pass (probe.run_record: the same ids the heatmaps
show), and encodes them with the SAE: f (T, F). At one position its active features, largest first, each with its
heads' shares (feature_page.head_share), its stored top held-out contexts (feature_contexts: never computed here)
and, where there is one, its direct logit effect (feature_page.logit_effect). One forward of the model and one SAE
encode per input and layer, the model run only up to the layer's z (points' `stop_at`); the rest is lookups and
one product with the unembedding per feature, converted to float64 once per model (feature_page.Unembedding).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from ..model import Transformer
from ..points import points
from .feature_contexts import StoredContexts
from .feature_page import Context, LogitEffect, Unembedding, head_share, logit_effect, unembedding_or_none
from .features import AttentionLayer
from .probe import run_record
from .sae import SparseAutoencoder


@torch.no_grad()
def input_activations(model: Transformer, sae: SparseAutoencoder, layer: AttentionLayer, input_ids: list[int],
                      target_ids: list[int] | None) -> Tensor:
    """f (T, F): the SAE's features at every position of the layer's stream, on the record's forward pass of
    `input_ids` (and, for an encoder-decoder model, `target_ids`)."""
    layer.check(model)
    with points(read=[layer.point], stop_at=layer.point) as seen:  # the layers after it are not run
        run_record(model, input_ids, target_ids)
    z = seen[layer.point][0]  # (T, H, d_k)
    return sae.encode(z.flatten(1).float()).cpu()  # (T, F)


@dataclass(frozen=True)
class ActiveFeature:
    """One feature active at a position: its `activation` there, `share` (H,) of its decoder row per head, how
    often it fires on the held-out data (`frequency`), its top held-out `contexts`, its `logit_effect` (None with
    `no_logit_effect` saying why)."""

    feature: int
    activation: float
    share: list[float]
    frequency: float
    contexts: list[Context]
    logit_effect: LogitEffect | None
    no_logit_effect: str = ""


@torch.no_grad()
def active_features(model: Transformer, sae: SparseAutoencoder, layer: AttentionLayer, f: Tensor,
                    stored: StoredContexts, n: int = 8, n_tokens: int = 5, unembedding: Unembedding | None = None
                    ) -> list[ActiveFeature]:
    """The at most `n` features active (f_j > 0) in f (F,) (one position's activations), largest first; their logit
    effects read through `unembedding` (the model's, made here once when None)."""
    values, order = f.topk(min(n, f.numel()))
    shares = head_share(sae, model.config.n_heads)  # (F, H)
    unembedding = unembedding if unembedding is not None else unembedding_or_none(model)
    out = []
    for v, j in zip(values.tolist(), order.tolist()):
        if v <= 0:
            break
        try:
            effect, why = logit_effect(model, sae, layer, j, n_tokens, unembedding), ""
        except ValueError as e:
            effect, why = None, str(e)
        out.append(ActiveFeature(j, v, shares[j].tolist(), stored.frequency[j], stored.contexts[j], effect, why))
    return out
