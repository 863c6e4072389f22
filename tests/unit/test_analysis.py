"""Head scores on hand-made attention patterns whose scores are known exactly."""
from __future__ import annotations

import math

import pytest
import torch

from transformer.interpretability.analysis import (anti_diagonal, argmax_hit_rate, diagonal, entropy, head_scores, mean_distance,
                                  previous_token)

N = 6
IDENTITY = torch.eye(N)
ANTI = torch.eye(N).flip(-1)
SHIFTED = torch.zeros(N, N)
SHIFTED[0, 0] = 1.0
SHIFTED[torch.arange(1, N), torch.arange(N - 1)] = 1.0  # query t looks at key t-1
UNIFORM = torch.full((N, N), 1.0 / N)


def test_identity_pattern():
    """Oracle: attention to itself: diagonal 1, entropy 0, mean distance 0, previous-token 0."""
    assert diagonal(IDENTITY) == 1.0 and entropy(IDENTITY) == pytest.approx(0.0, abs=1e-9)
    assert mean_distance(IDENTITY) == 0.0 and previous_token(IDENTITY) == 0.0


def test_anti_identity_pattern():
    """Oracle: query t reads key N-1-t (reversal): anti-diagonal 1; mean |s - t| = mean |N-1-2t| = 18/6 = 3."""
    assert anti_diagonal(ANTI) == 1.0 and diagonal(ANTI) == 0.0
    assert mean_distance(ANTI) == pytest.approx(3.0)


def test_shifted_identity_pattern():
    """Oracle: query t reads key t-1: previous-token 1 (over queries t >= 1); mean distance (0 + 5 * 1) / 6."""
    assert previous_token(SHIFTED) == 1.0
    assert mean_distance(SHIFTED) == pytest.approx(5 / 6)


@pytest.mark.parametrize("S", [1, 4, 10])
def test_uniform_rows_have_entropy_log_s(S):
    """Oracle: a uniform distribution over S keys has entropy log S nats (the maximum)."""
    assert entropy(torch.full((3, S), 1.0 / S)) == pytest.approx(math.log(S), abs=1e-6)


def test_cross_attention_shapes_use_key_length_for_anti_diagonal():
    """Oracle: with T=3 queries and S=5 keys, the anti-diagonal of query t is key S-1-t = 4, 3, 2."""
    w = torch.zeros(3, 5)
    w[[0, 1, 2], [4, 3, 2]] = 1.0
    assert anti_diagonal(w) == 1.0


def test_fully_masked_rows_add_nothing():
    """Invariant: a row of zeros (nothing to attend to) has entropy 0 and contributes 0 to every score."""
    w = IDENTITY.clone()
    w[2] = 0.0
    assert diagonal(w) == pytest.approx(5 / 6) and entropy(w) == pytest.approx(0.0, abs=1e-9)


def test_head_scores_score_every_head_of_every_layer():
    """Invariant: head_scores on (L, H, T, S) gives each score per (layer, head), equal to the score of that head."""
    weights = torch.stack([torch.stack([IDENTITY, ANTI]), torch.stack([SHIFTED, UNIFORM])])  # (2, 2, N, N)
    scores = head_scores(weights)
    assert scores["diagonal"].tolist() == [[1.0, 0.0], [pytest.approx(1 / N), pytest.approx(1 / N)]]  # SHIFTED[0, 0]
    assert scores["anti-diagonal"][0, 1] == 1.0 and scores["previous token"][1, 0] == 1.0
    assert scores["entropy"][1, 1].item() == pytest.approx(math.log(N), abs=1e-6)


def test_argmax_hit_rate():
    """Oracle: the anti-identity's strongest keys are N-1-t; a guess list wrong on its first half scores 0.5."""
    expected = torch.arange(N - 1, -1, -1)
    assert argmax_hit_rate(ANTI, expected) == 1.0
    half = expected.clone()
    half[: N // 2] = -1
    assert argmax_hit_rate(ANTI, half) == 0.5


# --- head detectors: duplicate-token and induction heads ---------------------------------------------------------

from transformer.interpretability.analysis import (detector_scores, duplicate_token, induction, induction_scores,  # noqa: E402
                                  random_token_ids, repeated_sequence_scores, repeated_sequences)

HALF = 5
REPEATED = torch.tensor([7, 3, 9, 4, 8] * 2)  # n = 5 distinct tokens, then the same again: T = 10


def one_key_per_query(keys: list[int]) -> torch.Tensor:
    """A (T, T) pattern in which query t puts all its weight on key keys[t]."""
    w = torch.zeros(len(keys), len(keys))
    w[torch.arange(len(keys)), torch.tensor(keys)] = 1.0
    return w


def test_perfect_induction_pattern_scores_one():
    """Oracle: second-half query t reads key t - n + 1 (the token after its earlier copy): induction 1, duplicate 0;
    what the first half does does not count (its queries have no earlier copy)."""
    w = one_key_per_query([0, 0, 1, 2, 3] + [t - HALF + 1 for t in range(HALF, 2 * HALF)])
    assert induction(w, REPEATED) == 1.0 and duplicate_token(w, REPEATED) == 0.0
    assert previous_token(w) == pytest.approx(4 / 9)  # of queries 1..9, only 1, 2, 3, 4 read t-1


def test_perfect_duplicate_pattern_scores_one():
    """Oracle: second-half query t reads key t - n (its earlier copy): duplicate 1, induction 0."""
    w = one_key_per_query(list(range(HALF)) + [t - HALF for t in range(HALF, 2 * HALF)])
    assert duplicate_token(w, REPEATED) == 1.0 and induction(w, REPEATED) == 0.0


def test_uniform_patterns_score_one_over_the_keys_they_spread_over():
    """Oracle: weight 1/T on every key gives induction = duplicate = 1/T; a causal uniform row t (weight 1/(t+1)
    on keys 0..t) gives the mean of 1/(t+1) over the second-half queries t = n..2n-1."""
    T = 2 * HALF
    uniform = torch.full((T, T), 1.0 / T)
    assert induction(uniform, REPEATED) == pytest.approx(1 / T)
    assert duplicate_token(uniform, REPEATED) == pytest.approx(1 / T)
    causal = torch.tril(torch.ones(T, T)) / torch.arange(1, T + 1)[:, None]
    expected = sum(1 / (t + 1) for t in range(HALF, T)) / HALF
    assert induction(causal, REPEATED) == pytest.approx(expected)
    assert duplicate_token(causal, REPEATED) == pytest.approx(expected)


def test_induction_on_a_repeated_sequence_is_transformer_lens_stripe():
    """Oracle: on n distinct tokens repeated twice, induction() is the mean weight from second-half query t on key
    t - n + 1 (TransformerLens' induction score), for any causal pattern; duplicate_token() is the stripe t - n."""
    torch.manual_seed(0)
    T = 2 * HALF
    w = torch.randn(T, T).masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf")).softmax(-1)
    second = torch.arange(HALF, T)
    assert induction(w, REPEATED) == pytest.approx(float(w[second, second - HALF + 1].mean()))
    assert duplicate_token(w, REPEATED) == pytest.approx(float(w[second, second - HALF].mean()))


def test_a_token_seen_twice_before_counts_both_followers():
    """Oracle by hand: ids a b a c a. Query 2 (a) has one earlier a (at 0): follower key 1. Query 4 (a) has a at 0
    and 2: follower keys 1 and 3, and duplicate keys 0 and 2. Queries 0, 1, 3 have no earlier copy and do not count."""
    ids = torch.tensor([5, 6, 5, 7, 5])
    w = torch.zeros(5, 5)
    w[2, 1], w[2, 0], w[2, 2] = 0.5, 0.3, 0.2
    w[4, 1], w[4, 3], w[4, 2], w[4, 4] = 0.25, 0.25, 0.4, 0.1
    assert induction(w, ids) == pytest.approx((0.5 + 0.5) / 2)
    assert duplicate_token(w, ids) == pytest.approx((0.3 + 0.4) / 2)


def test_a_sequence_without_repeats_scores_zero():
    """Invariant: with no query whose token occurred before, both detectors are 0 (nothing to detect)."""
    w = torch.full((4, 4), 0.25)
    assert induction(w, torch.arange(4)) == 0.0 and duplicate_token(w, torch.arange(4)) == 0.0


def test_detector_scores_score_every_head_with_its_own_definition():
    """Invariant: detector_scores on (L, H, T, T) gives, per (layer, head), the score of that head's pattern."""
    T = 2 * HALF
    ind = one_key_per_query([0, 0, 1, 2, 3] + [t - HALF + 1 for t in range(HALF, T)])
    dup = one_key_per_query(list(range(HALF)) + [t - HALF for t in range(HALF, T)])
    prev = one_key_per_query([0] + list(range(T - 1)))
    scores = detector_scores(torch.stack([torch.stack([ind, dup]), torch.stack([prev, ind])]), REPEATED)
    assert scores["induction"].tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert scores["duplicate token"].tolist() == [[0.0, 1.0], [0.0, 0.0]]
    assert scores["previous token"][1, 0] == 1.0


def test_repeated_sequences_are_two_copies_of_distinct_ordinary_tokens(make_model):
    """Invariant: each sequence is n distinct tokens then the same n; no pad/bos/eos/<unk>; seeded; n defaults to
    min(25, max_len // 2, number of ordinary tokens)."""
    model = make_model("decoder-only")  # vocab 17 (13 ordinary tokens), max_len 24
    seqs = repeated_sequences(model, n_seqs=50, seed=3)
    n = seqs.size(1) // 2
    assert n == 12 and torch.equal(seqs[:, :n], seqs[:, n:])
    assert all(len(set(row[:n].tolist())) == n for row in seqs)
    assert set(seqs.flatten().tolist()) <= set(random_token_ids(model.config).tolist()) == set(range(4, 17))
    assert torch.equal(seqs, repeated_sequences(model, n_seqs=50, seed=3))
    assert set(repeated_sequences(model, vocab_size=9, seq_len=3, n_seqs=20).flatten().tolist()) <= set(range(4, 9))
    with pytest.raises(ValueError, match="seq_len"):
        repeated_sequences(model, seq_len=13)


@pytest.mark.parametrize("arch", ["decoder-only", "encoder-decoder"])
def test_model_level_scores_average_the_detectors_over_the_sequences(make_model, arch):
    """Invariant: repeated_sequence_scores is the mean over its sequences of detector_scores on the decoder
    self-attention (decoder-only: the sequence alone; encoder-decoder: decoder input, source </s>)."""
    model = make_model(arch)
    seqs = repeated_sequences(model, seq_len=6, n_seqs=3, seed=1)
    with torch.no_grad():
        inputs = (seqs,) if arch == "decoder-only" else (torch.full((3, 1), model.config.eos_id), seqs)
        maps = torch.stack(model(*inputs, return_attention=True).attention.decoder_self)  # (L, B, H, T, T)
    expected = torch.stack([detector_scores(maps[:, b], seqs[b])["induction"] for b in range(3)]).mean(0)
    scores = repeated_sequence_scores(model, seq_len=6, n_seqs=3, seed=1)
    assert scores["induction"].shape == (2, 4) and set(scores) == {"previous token", "duplicate token", "induction"}
    torch.testing.assert_close(scores["induction"], expected)
    torch.testing.assert_close(induction_scores(model, seq_len=6, n_seqs=3, seed=1), expected)


def test_top_head_is_the_highest_score_or_the_lowest_entropy():
    """Oracle: a hand-made (2 layers, 3 heads) table: the highest entry is layer 1 head 0, the lowest layer 0 head
    2; "entropy" (low is interesting) picks the lowest, any other score the highest; within layer 0 the highest is
    head 1. best_head gives that head as a HeadId of the kind asked for, written "1.0", and its score."""
    from transformer.heads import HeadId
    from transformer.interpretability.analysis import best_head, top_head

    table = torch.tensor([[0.5, 0.7, 0.1], [0.9, 0.3, 0.2]])
    assert top_head(table, "anti-diagonal") == (1, 0)
    assert top_head(table, "entropy") == (0, 2)
    assert top_head(table, "anti-diagonal", layer=0) == (0, 1)
    assert top_head(table, "entropy", layer=1) == (1, 2)
    head, score = best_head(table, kind="cross")
    assert head == HeadId("cross", 1, 0) and head.label == "1.0" and str(head) == "cross 1.0" and score == pytest.approx(0.9)
