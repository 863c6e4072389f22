"""Head scores on hand-made attention patterns whose scores are known exactly."""
from __future__ import annotations

import math

import pytest
import torch

from transformer.analysis import (anti_diagonal, argmax_hit_rate, diagonal, entropy, head_scores, mean_distance,
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
