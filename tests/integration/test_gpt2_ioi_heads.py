"""Known heads of real GPT-2 small in indirect object identification (Wang et al. 2022, "Interpretability in the
Wild"), found by activation and path patching in our decoder running GPT-2's weights.

"When Mary and John went to the store, John gave a drink to" -> " Mary" over " John"; the corrupted input repeats
the other name ("..., Mary gave a drink to", which the model completes with " John"): the same tokens, so clean
activations patched into it can move the answer between the two names (with the three names replaced, the
"ABC" corruption of the paper's noising experiments, the context of the denoised run has no Mary or John for a
clean S-inhibition signal to act on). The paper's name movers are 9.6, 9.9 and 10.0 (layer.head, from 0), its
S-inhibition heads 7.3, 7.9, 8.6 and 8.10, which act on the name movers through their queries. Runs only where
GPT-2 small's weights are in the local Hugging Face cache (`python -m transformer.pretrained gpt2`); skipped with
that reason otherwise. No network.
"""
from __future__ import annotations

import pytest
import torch

from tests.integration.test_gpt2_known_heads import SOURCE
from transformer.interpretability.activation_patching import head_patching
from transformer.interpretability.path_patching import path_patching
from transformer.interpretability.patching_metric import logit_difference
from transformer.interpretability.patching_runs import minimal_pair
from transformer.pretrained import load_pretrained

NAME_MOVERS = {(9, 6), (9, 9), (10, 0)}
S_INHIBITION = {(7, 3), (7, 9), (8, 6), (8, 10)}
CLEAN = "When Mary and John went to the store, John gave a drink to"
CORRUPTED = "When Mary and John went to the store, Mary gave a drink to"

pytestmark = pytest.mark.skipif(
    SOURCE is None, reason="GPT-2 small's weights are not in the local Hugging Face cache; "
                           "`python -m transformer.pretrained gpt2` downloads them (about 550 MB)")


@pytest.fixture(scope="module")
def ioi():
    model, tok, _ = load_pretrained(SOURCE, device="cpu")
    pair = minimal_pair(model, tok.encode(CLEAN), tok.encode(CORRUPTED), tokenizer=tok)
    (mary,), (john,) = tok.encode(" Mary"), tok.encode(" John")
    return model, pair, logit_difference(model, pair, answer=mary, other=john)


def top(grid: torch.Tensor, k: int) -> set[tuple[int, int]]:
    H = grid.size(1)
    return {(int(i) // H, int(i) % H) for i in grid.flatten().topk(k).indices}


def test_head_patching_finds_the_name_movers_and_s_inhibition_heads(ioi):
    """Oracle: the paper's heads. Patching each head's output: at least two of the three name movers are among
    the six heads that recover most, and at least two of the four S-inhibition heads among the twelve."""
    model, pair, metric = ioi
    heads = head_patching(model, pair, metric).values  # (12, 12)
    assert len(top(heads, 6) & NAME_MOVERS) >= 2, sorted(top(heads, 6))
    assert len(top(heads, 12) & S_INHIBITION) >= 2, sorted(top(heads, 12))


def test_s_inhibition_acts_on_the_name_movers_queries(ioi):
    """Oracle: the paper's circuit. The path from S-inhibition head 8.10 into the name movers' queries recovers
    more than into their keys and values (summed over the three name movers)."""
    model, pair, metric = ioi
    grid = path_patching(model, pair, metric, ("decoder self", 8, 10))["decoder self"].values  # (3, 12, 12)
    into = {name: sum(float(grid[row, i, h]) for i, h in NAME_MOVERS) for row, name in enumerate(("q", "k", "v"))}
    assert into["q"] > into["k"] and into["q"] > into["v"], into
