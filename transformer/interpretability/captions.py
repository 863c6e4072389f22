"""Heads that explain themselves: a one-line caption for one head, generated from its scores.

A role is named only when its score says so: a band or detector score (previous token, induction, duplicate token,
diagonal, anti-diagonal, one key) of at least ROLE_THRESHOLD, the highest one winning, or attention spread almost
evenly (UNIFORM_THRESHOLD of the maximum entropy). A head that matches nothing says so, with its strongest score,
rather than being given a role. Scores come from transformer.analysis through the pattern (one definition each);
the two measured here, `one_key` and `evenness`, need the pattern's mask and tokens.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from .probe import AttentionPattern

ROLE_THRESHOLD = 0.5  # a role needs at least half of the attention where the score looks
UNIFORM_THRESHOLD = 0.9  # a uniform head's entropy is at least this share of the most it could be

# score name -> (role, what the share of attention goes to); the sentence reads "<role> head: 84% of <what>"
ROLES = {
    "previous token": ("previous-token", "each token's attention goes to the token before it"),
    "induction": ("induction", "a repeated token's attention goes to the token that followed its earlier "
                               "occurrence (it predicts the sequence will repeat)"),
    "duplicate token": ("duplicate-token", "a repeated token's attention goes to its earlier occurrences"),
    "anti-diagonal": ("anti-diagonal", "the i-th token's attention goes to the i-th key from the end (it reads the "
                                       "input backwards)"),
    "diagonal": ("diagonal", "the i-th token's attention goes to the i-th key"),
}
SELF_DIAGONAL = ("self", "each token's attention goes to itself")  # the diagonal, said of self-attention


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


def describe_head(pattern: AttentionPattern, layer: int, head: int) -> HeadCaption:
    """The caption of head (layer, head) of `pattern`, from its scores on this input."""
    L, H = pattern.shape
    if not (0 <= layer < L and 0 <= head < H):
        raise ValueError(f"layer {layer}, head {head}: this pattern has {L} layers and {H} heads")
    w, mask = pattern.weights[layer, head].float(), pattern.mask  # (T, S), (T, S)
    scores = {name: float(table[layer, head]) for name, table in pattern.scores().items() if name in ROLES}
    key, share = one_key(w, mask, pattern.query_text, pattern.kind != "cross")
    token = pattern.key_tokens[key]
    where = "the first token" if key == 0 else f"key {key}"
    candidates = [(value, name) for name, value in scores.items()] + [(share, "one key")]
    best, name = max(candidates)
    if best >= ROLE_THRESHOLD:
        if name == "one key":
            role = "first-token (sink)" if key == 0 else "one-token"
            return HeadCaption(role, name, best, f"{role} head: {best:.0%} of each token's attention goes to "
                                                 f"{where}, {token!r}")
        role, what = SELF_DIAGONAL if name == "diagonal" and pattern.kind != "cross" else ROLES[name]
        return HeadCaption(role, name, best, f"{role} head: {best:.0%} of {what}")
    even = evenness(w, mask, pattern.query_text)
    if even >= UNIFORM_THRESHOLD:
        return HeadCaption("uniform", "evenness", even, f"uniform head: its attention is spread almost evenly over "
                                                        f"the tokens each may see ({even:.0%} of the most entropy)")
    label = f"weight on {where}, {token!r}" if name == "one key" else f"{name} score"
    return HeadCaption(None, name, best, f"no clear role: its strongest pattern, the {label}, is {best:.0%}, "
                                         f"below the {ROLE_THRESHOLD:.0%} a role needs")
