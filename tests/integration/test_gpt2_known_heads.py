"""Known heads of real GPT-2 small, found by our head detectors in our decoder running GPT-2's weights.

The literature names induction heads 5.1, 5.5, 6.9, 7.2 and 7.10 (layer.head, from 0; Olsson et al. 2022, Wang et
al. 2022) and a previous-token head 4.11. Runs only where GPT-2 small's weights are in the local Hugging Face cache
(`python -m transformer.pretrained gpt2` puts them there); skipped with that reason otherwise. No network.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from transformer.interpretability.analysis import repeated_sequence_scores
from transformer.pretrained import cached_pretrained_models, load_pretrained

LITERATURE_INDUCTION_HEADS = {"5.1", "5.5", "6.9", "7.2", "7.10"}
PREVIOUS_TOKEN_HEAD = (4, 11)
GPT2_SMALL = {"n_layer": 12, "n_head": 12, "n_embd": 768, "vocab_size": 50257}


def gpt2_small_in_cache() -> str | None:
    """The local directory of a cached GPT-2 small (any repo id whose config has GPT-2 small's sizes), or None."""
    for _, source in cached_pretrained_models():
        config = json.loads((Path(source) / "config.json").read_text())
        if config.get("model_type") == "gpt2" and all(config.get(k) == v for k, v in GPT2_SMALL.items()):
            return source
    return None


SOURCE = gpt2_small_in_cache()
pytestmark = pytest.mark.skipif(
    SOURCE is None, reason="GPT-2 small's weights are not in the local Hugging Face cache; "
                           "`python -m transformer.pretrained gpt2` downloads them (about 550 MB)")


@pytest.fixture(scope="module")
def scores() -> dict[str, torch.Tensor]:
    """The app's head detectors on GPT-2 small: 16 sequences of 25 random distinct tokens repeated twice."""
    model, _, _ = load_pretrained(SOURCE, device="cpu")
    return repeated_sequence_scores(model)


def test_induction_detector_ranks_literature_heads_in_its_top_five(scores):
    """Oracle: the induction heads the literature names for GPT-2 small. At least two of 5.1, 5.5, 6.9, 7.2, 7.10
    are among the five highest induction scores."""
    induction = scores["induction"]  # (12, 12)
    top = induction.flatten().topk(5).indices.tolist()
    top5 = {f"{i // induction.size(1)}.{i % induction.size(1)}" for i in top}
    assert len(top5 & LITERATURE_INDUCTION_HEADS) >= 2, f"top five {sorted(top5)}"


def test_head_4_11_is_a_previous_token_head(scores):
    """Oracle: head 4.11 of GPT-2 small, the previous-token head the literature names, puts >= 0.8 of its attention
    on the previous token."""
    assert float(scores["previous token"][PREVIOUS_TOKEN_HEAD]) >= 0.8
