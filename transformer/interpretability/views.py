"""What a heatmap shows of a pattern: the attention weights or the value-weighted norms, over tokens or words.

`displayed_pattern` is the one place that turns a recorded AttentionPattern into the pattern a view draws and
scores, so the heatmaps, the head captions and the overview of one view always agree.
"""
from __future__ import annotations

from dataclasses import replace

from .probe import AttentionPattern
from .value_norms import ValueNorms
from .words import merge_mask, merge_to_words, text_words, word_labels, word_spans

SHOW = ("weights", "value-weighted norms")  # what the cells are: alpha_ij, or ||alpha_ij f(x_j)|| as row shares


def pattern_in_words(pattern: AttentionPattern) -> AttentionPattern:
    """The pattern over words (transformer.interpretability.words): weights summed over a word's keys and averaged
    over its queries, a word may attend where one of its tokens may, special tokens stay words of their own. The
    detectors that compare token ids (duplicate token, induction) have no ids to compare in words."""
    q_spans, k_spans = word_spans(pattern.query_tokens), word_spans(pattern.key_tokens)
    return AttentionPattern(pattern.kind, merge_to_words(pattern.weights, q_spans, k_spans),
                            word_labels(pattern.query_tokens, q_spans), word_labels(pattern.key_tokens, k_spans),
                            merge_mask(pattern.mask, q_spans, k_spans), text_words(pattern.query_tokens, q_spans),
                            text_words(pattern.key_tokens, k_spans), key_ids=[])


def displayed_pattern(pattern: AttentionPattern, norms: ValueNorms | None = None, words: bool = False
                      ) -> AttentionPattern:
    """`pattern` as a view shows it: with `norms` (of this pattern's kind, from the same forward pass) its cells are
    each key's share of the value-weighted norm of the row; with `words` it is merged into words."""
    if norms is not None:
        if norms.kind != pattern.kind or norms.shares.shape != pattern.weights.shape:
            raise ValueError(f"value norms of {norms.kind} {tuple(norms.shares.shape)} do not belong to the "
                             f"{pattern.kind} pattern {tuple(pattern.weights.shape)}")
        pattern = replace(pattern, weights=norms.shares)
    return pattern_in_words(pattern) if words else pattern
