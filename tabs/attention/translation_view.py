"""The translation checkpoint in the Attention tab: for a held-out verse read with its reference Spanish, each
cross-attention head's alignment error against the gold (Strong's-number) links, and the links drawn on the
heatmap. The library owns every number (transformer.translation.gold); this only wires them to the figures."""
from __future__ import annotations

from visualize.alignment import gold_link_marks
from transformer.heads import AttentionKind
from transformer.translation.gold import (aer_per_head, cross_words, function_link, gold_links, head_alignment,
                                         verse_of)

GOLD_SCORE = "alignment error (gold)"  # lower is better: the overview colour and the demo's choice of head
GOLD_NOTE = ("Circles: the gold links of this verse (an English and a Spanish word tagged with the same Strong's "
             "number); small ones join a function word (an article, a preposition, \"and\"), which takes the "
             "number of its whole phrase, so those links are loose.")


def _gold(pattern):
    verse = verse_of(pattern) if pattern is not None and pattern.kind == AttentionKind.CROSS else None
    if verse is None:
        return None, None
    cross = cross_words(pattern)
    return cross, gold_links(verse, len(cross.en_words), len(cross.es_words))


def gold_scores(pattern) -> dict:
    """{GOLD_SCORE: (layers, heads) AER on this verse} when the pattern reads a held-out verse and its reference,
    else {}."""
    cross, gold = _gold(pattern)
    return {GOLD_SCORE: aer_per_head(cross, gold)} if gold else {}


def with_gold(fig, token_pattern, layer: int, head: int, words: bool):
    """The one-head heatmap of a gold verse gets the head's AER on this verse in its title and, in words, the gold
    links as circles (their word positions are the heatmap's: no <s> row, </s> last on both axes). Other figures
    are returned unchanged."""
    cross, gold = _gold(token_pattern)
    if not gold or fig is None:
        return fig
    _, s = head_alignment(cross.weights[layer, head], gold)
    title = fig.layout.title.text or ""
    fig.update_layout(title_text=f"{title} · AER {s.aer:.2f} vs gold links")
    if words:  # links on a function word drawn apart (transformer.translation.gold.function_link)
        loose = {link for link in gold if function_link(link, cross.en_words, cross.es_words)}
        gold_link_marks(fig, sorted(gold - loose), sorted(loose))
    return fig
