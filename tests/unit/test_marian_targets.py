"""A target text is cut by the target side's tokenizer everywhere (transformer.encoding.target_tokens, its one owner):
on a Marian, whose Spanish goes through target.spm, the head metrics and the ablation read the same decoder tokens
as the Attention tab's record. The tiny Marian's source.spm (trained on English) and target.spm (on Spanish) cut a
Spanish sentence into different pieces, so a metric that used `tokenizer.encode` on a target read other tokens."""
from __future__ import annotations

import pytest

from tests.tiny_marian import ENGLISH, SPANISH, build_tiny_marian
from transformer.data import Task, TaskData
from transformer.encoding import decoder_length
from transformer.heads import AttentionKind
from transformer.interpretability import ablation
from transformer.interpretability.analysis import head_scores
from transformer.interpretability.head_metrics import mean_attended_distance, reverse_anti_diagonality
from transformer.interpretability.probe import record_attention
from transformer.pretrained import load_pretrained

PAIR = (ENGLISH[0], SPANISH[0])


@pytest.fixture(scope="module")
def marian(tmp_path_factory):
    model, tok, _ = load_pretrained(build_tiny_marian(tmp_path_factory.mktemp("m") / "tiny-marian"), device="cpu")
    assert len(tok.encode(PAIR[1])) != len(tok.encode_target(PAIR[1]))  # the two SentencePiece models differ
    return model, tok


def one_pair_task() -> Task:
    return Task("pair", "one English-Spanish pair", lambda rng: PAIR, "", 80, 80)


def test_mean_attended_distance_reads_the_target_as_the_record_does(marian):
    """Oracle: the Attention tab's record of the pair (record_attention: the Spanish through target.spm); its
    decoder self-attention's mean distance, averaged over heads and layers."""
    model, tok = marian
    data = TaskData(one_pair_task(), tok, model.config, seed=0, n_val=1)
    record = record_attention(model, tok, *PAIR, max_tokens=None)
    expected = float(record.patterns[AttentionKind.DECODER_SELF].scores()["mean distance"].mean())
    assert mean_attended_distance(model, data, tok, n_examples=1) == pytest.approx(expected, abs=1e-6)


def test_anti_diagonality_reads_the_target_as_the_record_does(marian):
    """Oracle: the anti-diagonal score of the record's last cross-attention layer, best head."""
    model, tok = marian
    pattern = record_attention(model, tok, *PAIR, max_tokens=None).patterns[AttentionKind.CROSS]
    expected = float(head_scores(pattern.weights[-1:], pattern.query_text, pattern.key_text)["anti-diagonal"].max())
    assert reverse_anti_diagonality(model, tok, one_pair_task(), n=1) == pytest.approx(expected, abs=1e-6)


def test_ablation_decodes_as_long_as_the_target_in_target_tokens(marian, monkeypatch):
    """Invariant: exact match lets the model write the longest target's tokens and its </s> (decoder_length of its
    length in target.spm pieces), no more, no fewer."""
    model, tok = marian
    asked = []
    monkeypatch.setattr(ablation, "greedy_exact_match", lambda m, t, pairs, n, **kw: (asked.append(n), (0.0, []))[1])
    ablation.evaluate(model, tok, ablation.EvalSet(pairs=[PAIR]))
    assert asked == [decoder_length(len(tok.encode_target(PAIR[1])))]
