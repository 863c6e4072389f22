"""Heads that explain themselves: captions of heads whose role is known (the shipped `induction` and `reverse`
checkpoints, hand-made patterns), and a head that matches nothing says so."""
from __future__ import annotations

import pytest
import torch

from transformer.attention import causal_mask
from transformer.interpretability.captions import ROLE_THRESHOLD, describe_head, evenness
from transformer.interpretability.probe import AttentionPattern, record_attention

REPEATED = "Xq7LbR2mKdZ9wPf" * 2  # 15 distinct characters, then the same again


@pytest.fixture(scope="module")
def induction_pattern(shipped):
    model, tok, _ = shipped("induction")
    return record_attention(model, tok, REPEATED).patterns["decoder self"]


def test_previous_token_head_of_the_induction_model(induction_pattern):
    """Known role: the card's L0H1 is a previous-token head (0.837 on its test sequences); its caption names the
    role with the score the library computes on this input."""
    caption = describe_head(induction_pattern, 0, 1)
    expected = float(induction_pattern.scores()["previous token"][0, 1])
    assert caption.role == "previous-token" and caption.score == pytest.approx(expected) and expected > 0.5
    assert caption.sentence.startswith(f"previous-token head: {expected:.0%} of each token's attention")


def test_induction_head_of_the_induction_model(induction_pattern):
    """Known role: the card's L1H0 is an induction head."""
    caption = describe_head(induction_pattern, 1, 0)
    assert caption.role == "induction"
    assert caption.score == pytest.approx(float(induction_pattern.scores()["induction"][1, 0]))


def test_anti_diagonal_cross_head_of_the_reverse_model(shipped):
    """Known role: the reverse model reads its source backwards: its most anti-diagonal cross head (the card's
    measure) is captioned anti-diagonal, with that score."""
    model, tok, _ = shipped("reverse")
    pattern = record_attention(model, tok, "attention").patterns["cross"]
    anti = pattern.scores()["anti-diagonal"]
    layer, head = divmod(int(anti.argmax()), anti.size(1))
    caption = describe_head(pattern, layer, head)
    assert caption.role == "anti-diagonal" and caption.score == pytest.approx(float(anti[layer, head]))


def _pattern(w: torch.Tensor, kind: str = "decoder self") -> AttentionPattern:
    T, S = w.shape
    mask = causal_mask(T)[0, 0] if kind == "decoder self" else torch.ones(T, S, dtype=torch.bool)
    tokens = [chr(ord("a") + i) for i in range(S)]
    return AttentionPattern(kind, w[None, None], tokens[:T], tokens, mask, list(range(T)), list(range(S)),
                            list(range(10, 10 + S)))


def test_uniform_head_is_said_to_spread_evenly():
    """Known role: a causal head that gives each query 1/(t+1) on every key it may see has evenness 1 (oracle:
    entropy log(t+1) of log(t+1)) and is captioned uniform."""
    T = 8
    w = causal_mask(T)[0, 0].float()
    w = w / w.sum(-1, keepdim=True)
    pattern = _pattern(w)
    assert evenness(w, pattern.mask, list(range(T))) == pytest.approx(1.0)
    assert describe_head(pattern, 0, 0).role == "uniform"


def test_sink_head_names_the_first_token():
    """Known role: every query puts 0.8 on key 0 and the rest on itself: a first-token (sink) head at 80%."""
    T = 6
    w = torch.eye(T) * 0.2
    w[:, 0] += 0.8
    w[0, 0] = 1.0
    caption = describe_head(_pattern(w), 0, 0)
    assert caption.role == "first-token (sink)" and caption.score == pytest.approx(0.8)
    assert "'a'" in caption.sentence


def test_head_matching_nothing_says_so():
    """No invented role: each query splits its weight 0.4 / 0.35 / 0.25 over three keys chosen so that no score
    reaches the threshold (every band and detector below 0.5) and the rows are far from even: role None, and the
    sentence says there is no clear role."""
    T = 8
    w = torch.zeros(T, T)
    w[0, 0] = 1.0
    w[1, :2] = torch.tensor([0.6, 0.4])
    for t in range(2, T):
        keys = [(t * 3) % t, (t * 5 + 1) % t, t]  # an earlier key, another one, itself
        keys = list(dict.fromkeys(keys))
        for k, v in zip(keys, (0.4, 0.35, 0.25)):
            w[t, k] += v
        w[t] /= w[t].sum()
    pattern = _pattern(w)
    scores = {k: float(v[0, 0]) for k, v in pattern.scores().items() if k not in ("entropy", "mean distance")}
    assert max(scores.values()) < ROLE_THRESHOLD  # guard: the pattern really matches no role
    caption = describe_head(pattern, 0, 0)
    assert caption.role is None and caption.sentence.startswith("no clear role")


def test_out_of_range_head_is_refused():
    """Bad input: a head the pattern does not have raises a ValueError naming it."""
    with pytest.raises(ValueError, match="layer 1, head 0"):
        describe_head(_pattern(torch.eye(3)), 1, 0)
