"""Head captions that mean something for the kind and the view they are shown in (issue 29, items 8 and 12), on the
shipped checkpoints (tests.conftest's `shipped`: loaded once per session) and on hand-made patterns."""
from __future__ import annotations

import pytest
import torch

from transformer.interpretability.analysis import diagonal
from transformer.interpretability.captions import CROSS_SCORES, describe_head
from transformer.interpretability.probe import AttentionPattern, record_attention, record_inside
from transformer.interpretability.value_norms import value_weighted_norms
from transformer.interpretability.views import AGREE_BELOW, describe_view, displayed_pattern, moved_share

ACTS_13_52 = ("The disciples were filled with joy and with the Holy Spirit.",
              "Y los discípulos estaban llenos de gozo, y del Espíritu Santo.")
HAMLET = "To be, or not to be, that is the question"  # the causal-mask demo's input


@pytest.fixture(scope="module")
def translation(shipped):
    model, tok, _ = shipped("translate-en-es")
    return model, record_attention(model, tok, *ACTS_13_52)


@pytest.fixture(scope="module")
def shakespeare(shipped):
    model, tok, _ = shipped("shakespeare-char")
    return model, tok


@pytest.mark.parametrize("words", [False, True])
def test_no_cross_attention_head_is_captioned_by_a_self_attention_score(translation, words):
    """Regression: translate-en-es's cross heads were captioned by their "previous token score" (Spanish words
    reading English words have no previous key). Invariant: every cross head's caption rests on one of
    CROSS_SCORES or on one key, in tokens and in words."""
    _, record = translation
    pattern = record.patterns["cross"]
    L, H = pattern.shape
    captions = [describe_view(pattern, layer, head, words=words) for layer in range(L) for head in range(H)]
    assert all(c.score_name in CROSS_SCORES | {"one key", "evenness"} for c in captions), \
        [c.sentence for c in captions]
    assert not any("previous" in c.sentence for c in captions)


def test_words_view_scores_the_words_map_and_says_so(shakespeare):
    """Regression: shakespeare-char's 95% previous-token head L0H0 became "self head: 77% of each token's attention
    goes to itself" in words. Oracle: the diagonal score of the words map (analysis.diagonal on the merged
    pattern) is the caption's score, said of words ("within-word"), with the head's role in tokens beside it."""
    model, tok = shakespeare
    pattern = record_attention(model, tok, HAMLET).patterns["decoder self"]
    words = displayed_pattern(pattern, words=True)
    caption = describe_view(pattern, 0, 0, words=True)
    expected = diagonal(words.weights[0, 0], words.query_text, words.key_text)
    assert caption.role == "within-word" and caption.score == pytest.approx(expected)
    in_tokens = describe_head(pattern, 0, 0)
    assert in_tokens.role == "previous-token" and in_tokens.score > 0.9
    assert f"{expected:.0%} of each word's attention" in caption.sentence and "self head" not in caption.sentence
    assert caption.sentence.endswith(f"in tokens, {in_tokens.sentence}")


def test_an_input_without_spaces_is_not_captioned_in_words(shakespeare):
    """Regression: "abcdefghij" in words is one word, a 1x1 map captioned "self head: 100%". Now no role and no
    score: the caption says there are too few words and what to do."""
    model, tok = shakespeare
    pattern = record_attention(model, tok, "abcdefghij").patterns["decoder self"]
    caption = describe_view(pattern, 0, 0, words=True)
    assert caption.role is None and "100%" not in caption.sentence
    assert "too few words" in caption.sentence and "switch Words off" in caption.sentence


def test_moved_share_is_the_total_variation_between_the_maps():
    """Oracle, by hand: rows (1, 0) vs (0.5, 0.5) move 0.5, (0.2, 0.8) vs (0.2, 0.8) move 0: mean 0.25; a map
    against itself moves 0."""
    def pattern(rows):
        w = torch.tensor(rows).view(1, 1, 2, 2)
        return AttentionPattern("cross", w, ["a", "b"], ["x", "y"], torch.ones(2, 2, dtype=torch.bool), [0, 1],
                                [0, 1])
    a, b = pattern([[1.0, 0.0], [0.2, 0.8]]), pattern([[0.5, 0.5], [0.2, 0.8]])
    assert float(moved_share(a, b)) == pytest.approx(0.25) and float(moved_share(a, a)) == 0


def test_norms_caption_says_when_norms_and_weights_agree_and_where_they_differ(translation, shakespeare):
    """Issue 29, item 12, measured by bench/norms_versus_weights.py: on shakespeare-char's demo head L0H0 the norms
    move 0% of the attention, and the caption says the two agree; on translate-en-es's decoder self L2H2 (Acts
    13:52) they move 18%, and the caption names the key that fades: `<s>`, with its weight and its norms share."""
    model, tok = shakespeare
    record = record_attention(model, tok, HAMLET)
    norms = value_weighted_norms(model, record, record_inside(model, record), "decoder self")
    agree = describe_view(record.patterns["decoder self"], 0, 0, norms).sentence
    assert "norms and weights agree here" in agree
    model, record = translation
    pattern = record.patterns["decoder self"]
    norms = value_weighted_norms(model, record, record_inside(model, record), "decoder self")
    moved = float(moved_share(pattern, displayed_pattern(pattern, norms))[2, 2])
    assert moved > 3 * AGREE_BELOW
    differ = describe_view(pattern, 2, 2, norms).sentence
    assert f"the norms move {moved:.0%} of each row's attention: '<s>' gets" in differ and "agree" not in differ
    # what the cells show is named: the role or strongest pattern is read on the norms, not called a weight
    head_part = differ.split("; the norms move")[0]
    assert head_part.startswith("read on the norms, ") and "weight" not in head_part, head_part
