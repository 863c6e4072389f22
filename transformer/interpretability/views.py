"""What a heatmap shows of a pattern: the attention weights or the value-weighted norms, over tokens or words.

`displayed_pattern` is the one place that turns a recorded AttentionPattern into the pattern a view draws and
scores, so the heatmaps, the head captions and the overview of one view always agree; `describe_view` is the
caption of a head in a view, `moved_share` how far the value-weighted norms are from the weights, `most_moved_head`
the head where they are farthest.
"""
from __future__ import annotations

from dataclasses import replace

import torch
from torch import Tensor

from .captions import HeadCaption, describe_head
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


AGREE_BELOW = 0.05  # norms and weights agree on a head when they move less than this share of a row's attention


def moved_share(a: AttentionPattern, b: AttentionPattern) -> Tensor:
    """(L, H): how much of each row's attention one pattern moves elsewhere than the other, the total variation
    distance 1/2 sum_s |a_ts - b_ts| averaged over a's text queries: 0 when they are the same, 1 when no key has
    weight in both. Between the weights and the value-weighted norms of one view: how different the norms look."""
    if a.weights.shape != b.weights.shape:
        raise ValueError(f"patterns of shapes {tuple(a.weights.shape)} and {tuple(b.weights.shape)} differ")
    rows = torch.as_tensor(a.query_text, dtype=torch.long)
    if not len(rows):
        return torch.zeros(a.weights.shape[:2])
    diff = (a.weights[:, :, rows].float() - b.weights[:, :, rows].float()).abs()  # (L, H, rows, S)
    return 0.5 * diff.sum(-1).mean(-1)  # (L, H)


def most_moved_head(patterns: dict[str, AttentionPattern], norms: dict[str, ValueNorms]
                    ) -> tuple[str, int, int, float]:
    """(kind, layer, head, share): the head, over every kind in `norms` (each of the pattern of its kind in
    `patterns`, from the same forward pass), whose value-weighted norms move the largest share of its rows'
    attention away from its weights (moved_share, in tokens): where the norms look most unlike the weights."""
    if not norms:
        raise ValueError("no value norms to compare with the weights")
    best = None
    for kind, kind_norms in norms.items():
        moved = moved_share(patterns[kind], displayed_pattern(patterns[kind], kind_norms))  # (L, H)
        layer, head = divmod(int(moved.argmax()), moved.shape[1])
        if best is None or float(moved[layer, head]) > best[3]:
            best = (kind, layer, head, float(moved[layer, head]))
    return best


def _norms_clause(weights: AttentionPattern, shown: AttentionPattern, layer: int, head: int) -> str:
    """What the norms change on head (layer, head): that they agree with the weights, or the key they differ on
    most."""
    moved = float(moved_share(weights, shown)[layer, head])
    if moved < AGREE_BELOW:
        return (f"norms and weights agree here: the norms move {moved:.0%} of each row's attention (a head that "
                f"looks at one key per row, or whose values are about the same size on every key, looks the same "
                f"either way)")
    rows = torch.as_tensor(weights.query_text, dtype=torch.long)
    w = weights.weights[layer, head, rows].float().mean(0)  # (S,): each key's mean weight
    n = shown.weights[layer, head, rows].float().mean(0)  # (S,): each key's mean share of the norms
    key = int((w - n).abs().argmax())
    return (f"the norms move {moved:.0%} of each row's attention: {shown.key_tokens[key]!r} gets {w[key]:.0%} of "
            f"the weight and {n[key]:.0%} of the norms")


def describe_view(pattern: AttentionPattern, layer: int, head: int, norms: ValueNorms | None = None,
                  words: bool = False, display=displayed_pattern) -> HeadCaption:
    """The caption of head (layer, head) as a view shows it (displayed_pattern): its role from the scores of the
    map on screen, said in words when it is merged into words, with the role it has in tokens beside it; with
    `norms`, whether the norms agree with the weights on this head. `display` is displayed_pattern, or a caller's
    memo of it (the app computes each view of a record once)."""
    shown = display(pattern, norms, words)
    measure = "weight" if norms is None else "share of the norms"
    caption = describe_head(shown, layer, head, unit="word" if words else "token", measure=measure)
    sentence = caption.sentence if norms is None else f"read on the norms, {caption.sentence}"
    if words and caption.score_name:
        in_tokens = describe_head(display(pattern, norms, False), layer, head, measure=measure)
        if in_tokens.role is not None and in_tokens.role != caption.role:
            sentence += f"; in tokens, {in_tokens.sentence}"
    if norms is not None and caption.score_name:
        sentence += f"; {_norms_clause(display(pattern, None, words), shown, layer, head)}"
    return replace(caption, sentence=sentence)
