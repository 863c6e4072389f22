"""The "Who carries a word?" demo on the shipped translate-en-es model: a held-out verse against the same verse with
one word changed (transformer.interpretability.patching_demos.TRANSLATION_EXAMPLES), both decoders reading the
model's greedy translation of the clean verse, the logit difference of the two runs' top tokens at the first target
position where they differ (`diverging_position`). Figures measured on the shipped weights (deterministic: greedy
decoding, no sampling), each held with a margin.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from transformer import load_checkpoint
from transformer.encoding import source_ids
from transformer.generate import generate_text
from transformer.interpretability.activation_patching import head_patching, residual_patching
from transformer.interpretability.patching_demos import TRANSLATION_EXAMPLES, diverging_position
from transformer.interpretability.patching_metric import logit_difference
from transformer.interpretability.patching_runs import minimal_pair, run

CHECKPOINT = Path(__file__).resolve().parents[2] / "checkpoints" / "translate-en-es"


@pytest.fixture(scope="module")
def demos():
    """{verse: (model, pair, metric, changed source position, cross weights (L, H) on it from the metric's query)}"""
    model, tok, _ = load_checkpoint(CHECKPOINT, device="cpu")
    out = {}
    for verse, clean, corrupted in TRANSLATION_EXAMPLES:
        target = tok.encode(generate_text(model, tok, clean, 60, strategy="greedy"))
        pair = minimal_pair(model, source_ids(tok, clean, model.config), source_ids(tok, corrupted, model.config),
                            target, tokenizer=tok)
        metric = logit_difference(model, pair, position=diverging_position(model, pair))
        (changed,) = [i for i, (a, b) in enumerate(zip(pair.encoder["clean"], pair.encoder["corrupted"])) if a != b]
        names = [f"decoder.{i}.cross_attn.pattern" for i in range(model.config.n_decoder_layers)]
        with torch.no_grad():
            _, seen = run(model, pair, "clean", read=names)
        weights = torch.stack([seen[n][0, :, metric.position, changed] for n in names])  # (L, H)
        out[verse] = model, pair, metric, changed, weights
    return out


def test_the_changed_word_is_all_the_encoder_carries(demos):
    """Invariant: the embeddings entering the encoder differ at the changed word only, so patching that one
    position at layer 0 gives the clean run (1) and any other position nothing (0)."""
    for model, pair, metric, changed, _ in demos.values():
        row = residual_patching(model, pair, metric, "encoder").values[0]
        assert row[changed] == pytest.approx(1.0, abs=1e-4)
        assert row[[t for t in range(len(row)) if t != changed]].abs().max() < 1e-4


def test_the_head_that_looks_at_the_word_carries_it(demos):
    """Measured (Gen.24.26, 'The man' / 'The woman', ' el' against ' la'): the cross head that puts the most weight
    on the changed word from that target position, L2H2 (0.60), is the one whose output carries most of the
    change (0.47 of it; next L3H0 0.22)."""
    model, pair, metric, _, weights = demos["Gen.24.26"]
    carried = head_patching(model, pair, metric, "cross").values
    assert divmod(int(weights.argmax()), 4) == (2, 2) == divmod(int(carried.argmax()), 4)
    assert carried[2, 2] >= 0.35


def test_looking_is_not_carrying(demos):
    """Measured (Luke.15.11, 'two sons' / 'two daughters', ' hijos.' against ' hijas.'): every cross head of layers
    1-3 puts at least 0.45 of its weight on the changed word, yet none carries more than 0.2 of the change alone
    (at most 0.13): the change reaches the decoder through many heads at once, which weights cannot tell."""
    model, pair, metric, _, weights = demos["Luke.15.11"]
    carried = head_patching(model, pair, metric, "cross").values
    assert weights[1:].min() >= 0.45
    assert carried.max() < 0.2
