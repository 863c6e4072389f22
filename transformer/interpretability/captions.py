"""Heads that explain themselves: a one-line caption for one head, generated from its scores.

A role is named only when its score says so: a band or detector score (previous token, induction, duplicate token,
diagonal, anti-diagonal, one key) of at least ROLE_THRESHOLD, the highest one winning, or attention spread almost
evenly (UNIFORM_THRESHOLD of the maximum entropy). Only scores that mean something for the head's kind count
(CROSS_SCORES for cross-attention), said of the unit the pattern is in (tokens, or words in the words view). A
head that matches nothing says so, with its strongest score, rather than being given a role. Scores come from
transformer.analysis through the pattern (one definition each); the two measured here, `one_key` and `evenness`,
need the pattern's mask and tokens.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from ..heads import AttentionKind
from .probe import AttentionPattern

ROLE_THRESHOLD = 0.5  # a role needs at least half of the attention where the score looks
UNIFORM_THRESHOLD = 0.9  # a uniform head's entropy is at least this share of the most it could be

# score name -> (role, what the share of attention goes to); the sentence reads "<role> head: 84% of <what>";
# {unit} is "token", or "word" in the words view (where the scores are computed on the words map)
ROLES = {
    "previous token": ("previous-{unit}", "each {unit}'s attention goes to the {unit} before it"),
    "induction": ("induction", "a repeated token's attention goes to the token that followed its earlier "
                               "occurrence (it predicts the sequence will repeat)"),
    "duplicate token": ("duplicate-token", "a repeated token's attention goes to its earlier occurrences"),
    "anti-diagonal": ("anti-diagonal", "the i-th {unit}'s attention goes to the i-th key {unit} from the end (it "
                                       "reads the input backwards)"),
    "diagonal": ("diagonal", "the i-th {unit}'s attention goes to the i-th key {unit}"),
}
# the diagonal, said of self-attention: over words it includes every token's attention to its own word's tokens
SELF_DIAGONAL = {"token": ("self", "each token's attention goes to itself"),
                 "word": ("within-word", "each word's attention stays inside the word itself")}
# the scores that mean something for cross-attention, where queries and keys are two different texts: a query's
# "previous" key, or a repeated token among the keys, says nothing of the target reading the source
CROSS_SCORES = frozenset({"diagonal", "anti-diagonal"})
UNITS = ("token", "word")


@dataclass(frozen=True)
class HeadCaption:
    """The caption of one head: its role (None when it has none), the score that decided it, and the sentence."""

    role: str | None
    score_name: str
    score: float
    sentence: str


def one_key(w: Tensor, mask: Tensor, queries: list[int], self_attention: bool) -> tuple[int, float]:
    """(key, share): the key position that receives the most attention, and the mean weight on it over the content
    queries that may see it (in self-attention, not that position itself): a first-token "sink", or `</s>` or "."
    taking every row."""
    queries = torch.as_tensor(queries, dtype=torch.long)
    if not len(queries):
        return 0, 0.0
    key = int(w[queries].sum(0).argmax())
    rows = queries[mask[queries, key] & (queries != key)] if self_attention else queries[mask[queries, key]]
    return key, float(w[rows, key].mean()) if len(rows) else 0.0


def evenness(w: Tensor, mask: Tensor, queries: list[int]) -> float:
    """Mean over content queries that may see two or more keys of entropy(row) / log(keys it may see): 1 for a head
    that spreads each row evenly, 0 for one that looks at a single key."""
    ratios = []
    for t in queries:
        n = int(mask[t].sum())
        if n > 1:
            row = w[t][mask[t]]
            ratios.append(float(-(row * row.clamp_min(1e-12).log()).sum()) / math.log(n))
    return sum(ratios) / len(ratios) if ratios else 0.0


def _meaningful(pattern: AttentionPattern, layer: int, head: int) -> dict[str, float]:
    """The role scores of head (layer, head) that mean something for this pattern's kind (CROSS_SCORES for
    cross-attention)."""
    names = CROSS_SCORES if pattern.kind == AttentionKind.CROSS else ROLES.keys()
    return {name: float(table[layer, head]) for name, table in pattern.scores().items() if name in names}


def describe_head(pattern: AttentionPattern, layer: int, head: int, unit: str = "token",
                  measure: str = "weight") -> HeadCaption:
    """The caption of head (layer, head) of `pattern`, from its scores on this input, which are of `unit`s
    ("token", or "word" for a pattern merged into words): only scores that mean something for the pattern's kind,
    and none when the input has fewer than two text positions on either axis (nothing to compare). `measure` names
    what a cell of `pattern` is ("weight", or "share of the norms" for the value-weighted norms' view)."""
    L, H = pattern.shape
    if not (0 <= layer < L and 0 <= head < H):
        raise ValueError(f"layer {layer}, head {head}: this pattern has {L} layers and {H} heads")
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {', '.join(UNITS)}, got {unit!r}")
    if min(len(pattern.query_text), len(pattern.key_text)) < 2:
        why = " (an input without spaces is one word: switch Words off)" if unit == "word" else ""
        return HeadCaption(None, "", 0.0, f"too few {unit}s to describe a head: it needs at least two {unit}s on "
                                          f"each axis{why}")
    w, mask = pattern.weights[layer, head].float(), pattern.mask  # (T, S), (T, S)
    scores = _meaningful(pattern, layer, head)
    key, share = one_key(w, mask, pattern.query_text, pattern.kind != AttentionKind.CROSS)
    token = pattern.key_tokens[key]
    where = f"the first {unit}" if key == 0 else f"key {key}"
    candidates = [(value, name) for name, value in scores.items()] + [(share, "one key")]
    best, name = max(candidates)
    if best >= ROLE_THRESHOLD:
        if name == "one key":
            role = "first-token (sink)" if key == 0 and unit == "token" else f"one-{unit}"
            return HeadCaption(role, name, best, f"{role} head: {best:.0%} of each {unit}'s attention goes to "
                                                 f"{where}, {token!r}")
        role, what = SELF_DIAGONAL[unit] if name == "diagonal" and pattern.kind != AttentionKind.CROSS else ROLES[name]
        role, what = role.format(unit=unit), what.format(unit=unit)
        return HeadCaption(role, name, best, f"{role} head: {best:.0%} of {what}")
    even = evenness(w, mask, pattern.query_text)
    if even >= UNIFORM_THRESHOLD:
        return HeadCaption("uniform", "evenness", even, f"uniform head: its attention is spread almost evenly over "
                                                        f"the {unit}s each may see ({even:.0%} of the most entropy)")
    label = f"{measure} on {where}, {token!r}" if name == "one key" else f"{name.replace('token', unit)} score"
    return HeadCaption(None, name, best, f"no clear role: its strongest pattern, the {label}, is {best:.0%}, "
                                         f"below the {ROLE_THRESHOLD:.0%} a role needs")
