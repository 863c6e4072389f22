"""Cross-attention in words, and the gold links of the verse it reads: the one rule the card's AER table, the
Attention tab's markers and its per-head AER all use.

`cross_words(pattern)` turns a cross-attention pattern (transformer.interpretability.probe) into word weights
(layers, heads, Spanish words, English words), without `</s>`, so the words are exactly the whitespace words of
the two texts. `verse_of(pattern)` finds the held-out verse whose English the encoder read and whose reference
Spanish the decoder read (None for any other input), so its Strong's links can be drawn and scored.
`function_link` is the one rule of which links join a function word (an article, a preposition, a conjunction):
the Strong's numbers tag the original's words, and an article or "and" takes the number of the phrase it belongs
to, so such links are where a bilingual reader would often not draw one.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from ..heads import AttentionKind
from ..interpretability.views import pattern_in_words
from ..interpretability.words import SPECIAL_WORDS
from .alignment import AlignmentScore, aligned_targets, attention_alignment, score_on_gold
from .bible import VersePair
from .corpus import find_verse

Link = tuple[int, int]

# Function words: articles, prepositions and conjunctions (the Spanish of the Reina-Valera 1909 writes "á" for "a")
FUNCTION_WORDS = {
    "en": frozenset("a an the and or nor but of to in into on upon at by for with from unto as that".split()),
    "es": frozenset("el la los las lo un una unos unas y e o u ni pero mas de del al a á en con por para que "
                    "sobre".split()),
}


def is_function_word(word: str, language: str) -> bool:
    """Whether a text word (punctuation and capitals allowed: "Y", "Spirit.") is a function word of `language`
    ("en" or "es"): an article, a preposition or a conjunction of FUNCTION_WORDS."""
    if language not in FUNCTION_WORDS:
        raise ValueError(f"language must be one of {', '.join(FUNCTION_WORDS)}, got {language!r}")
    return word.strip(".,;:!?¡¿\"'“”‘’()[]«»—-").lower() in FUNCTION_WORDS[language]


def function_link(link: Link, en_words: list[str], es_words: list[str]) -> bool:
    """Whether a gold link (English word i, Spanish word j) joins a function word on either side."""
    i, j = link
    return is_function_word(en_words[i], "en") or is_function_word(es_words[j], "es")


@dataclass
class WordCross:
    """Cross-attention in words: weights (layers, heads, Spanish words, English words); rows sum to what the
    Spanish word's tokens gave the English text (everything but `</s>`)."""

    weights: Tensor
    es_words: list[str]
    en_words: list[str]


def cross_words(pattern, in_words=pattern_in_words) -> WordCross:
    """The cross-attention pattern of a record in words, as the Attention tab's words view merges it
    (transformer.interpretability.views.pattern_in_words: summed over an English word's tokens, averaged over a
    Spanish word's), keeping only the text words: `</s>` left out of both axes. `in_words` is pattern_in_words, or a
    caller's memo of it (the app merges each record into words once)."""
    words = in_words(pattern)  # (L, H, Wq, Wk), special tokens words of their own
    rows, cols = words.query_text, words.key_text
    return WordCross(words.weights[:, :, rows][:, :, :, cols], [words.query_tokens[r] for r in rows],
                     [words.key_tokens[c] for c in cols])


def _text(tokens: list[str]) -> str:
    return " ".join("".join(t for t in tokens if t not in SPECIAL_WORDS).split())


def verse_of(pattern) -> VersePair | None:
    """The held-out verse this cross-attention pattern read: its English as the source and its reference Spanish
    as the target; None when the input is anything else (or was cut)."""
    if getattr(pattern, "kind", AttentionKind.CROSS) != AttentionKind.CROSS:
        return None
    verse = find_verse(_text(pattern.key_tokens))
    if verse is None or _text(pattern.query_tokens) != verse.es:
        return None
    return verse


def gold_links(verse: VersePair, n_en: int, n_es: int) -> set[Link]:
    """The verse's gold links (English word i, Spanish word j) that fall inside the words shown."""
    return {(i, j) for i, j in verse.links if i < n_en and j < n_es}


def head_alignment(words: Tensor, gold: set[Link]) -> tuple[set[Link], AlignmentScore]:
    """One head's word weights (Spanish words, English words) against the gold links: the alignment it makes
    (each linked Spanish word to its strongest English word) and its precision, recall and AER."""
    predicted = attention_alignment(words, aligned_targets(gold))
    return predicted, score_on_gold([predicted], [gold])


def aer_per_head(cross: WordCross, gold: set[Link]) -> Tensor:
    """(layers, heads) AER of every head on one verse: the Attention tab's overview colour for a gold verse."""
    L, H = cross.weights.shape[:2]
    return torch.tensor([[head_alignment(cross.weights[layer, head], gold)[1].aer for head in range(H)]
                         for layer in range(L)])
