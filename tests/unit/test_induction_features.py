"""The ground truth on a trained model (issue 42, item 2): the shipped `induction` model's induction head writes a
sparse feature of its layer's output that the shipped SAE finds, and a random dictionary of the same shape does not."""
from __future__ import annotations

import torch

from tests.conftest import CHECKPOINTS
from tests.unit.test_features import random_dictionary
from transformer.interpretability.feature_cli import RECIPES
from transformer.interpretability.feature_data import feature_batches
from transformer.interpretability.feature_page import feature_page, head_share, logit_effect
from transformer.interpretability.features import AttentionLayer, layer_activations, width
from transformer.interpretability.sae_files import load_sae


def repeated_positions(tokens: torch.Tensor) -> torch.Tensor:
    """(rows, T) True where the token occurred earlier in its row (the second copy of the induction task)."""
    T = tokens.size(1)
    earlier = (tokens[:, :, None] == tokens[:, None, :]) & torch.ones(T, T, dtype=torch.bool).tril(-1)
    return earlier.any(-1)


def induction_features(model, sae, held_out, head: int) -> list[int]:
    """The features written mostly by `head` of layer 1 (share >= 0.5) that fire on repeated tokens (>= 90% of their
    activation there, at >= 0.5% of the positions) and push up the token that comes next there: the copy (the top
    logit token is the next token at >= half the positions it fires on)."""
    f = sae.encode(held_out.x).detach()  # (N, F)
    repeated = repeated_positions(held_out.tokens)[held_out.where[:, 0], held_out.where[:, 1]]  # (N,)
    share = head_share(sae, model.config.n_heads)[:, head]
    on_repeats = (f * repeated[:, None]).sum(0) / f.sum(0).clamp_min(1e-12)
    frequency = (f > 0).float().mean(0)
    found = []
    for j in ((share >= 0.5) & (on_repeats >= 0.9) & (frequency >= 0.005)).nonzero().flatten().tolist():
        fires = (f[:, j] > 0).nonzero().flatten()
        row, t = held_out.where[fires, 0], held_out.where[fires, 1]
        following = held_out.tokens[row, (t + 1).clamp_max(held_out.tokens.size(1) - 1)]
        top = logit_effect(model, sae, AttentionLayer("decoder self", 1), j, n=1).top[0][0]
        if float((following == top).float().mean()) >= 0.5:
            found.append(j)
    return found


def test_the_shipped_induction_sae_has_a_feature_of_the_induction_head(shipped):
    """On the shipped `induction` model (its card: head 1.0 is the induction head), the shipped layer-1 SAE has a
    feature written mostly by head 1.0 that fires on repeated tokens and writes the token to copy; a random dictionary
    of the same shape has none."""
    model, tokenizer, info = shipped("induction")
    head = int(info["metrics"]["induction_head"].split(".")[1])
    layer = AttentionLayer("decoder self", 1)
    sae = load_sae(CHECKPOINTS / "induction", info, layer, width(model))
    held_out = layer_activations(model, layer, feature_batches(RECIPES["induction"].data, model, tokenizer, "held-out"))
    found = induction_features(model, sae, held_out, head)
    assert found, "no feature of the induction head"
    assert induction_features(model, random_dictionary(held_out.x, sae.config), held_out, head) == []
    page = feature_page(model, sae, layer, found[0], held_out)
    assert page.share.argmax() == head and page.contexts[0].activation > 0
    assert all(repeated_positions(held_out.tokens)[c.row, c.position] for c in page.contexts)
