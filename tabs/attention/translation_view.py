"""The translation checkpoint in the Attention tab: for a held-out verse read with its reference Spanish, each
cross-attention head's alignment error against the gold (Strong's-number) links, and the links drawn on the
heatmap. The library owns every number (transformer.translation.gold); this only wires them to the figures."""
from __future__ import annotations

from visualize.alignment import gold_link_marks
from transformer.heads import AttentionKind
from transformer.translation.gold import (aer_per_head, cross_words, function_link, gold_links, head_alignment,
                                         verse_of)

from tabs.attention.views import VIEWS, display

GOLD_SCORE = "alignment error (gold)"  # lower is better: the overview colour and the demo's choice of head


def _gold(record, kind):
    """(the cross-attention in words, the gold links, the (layers, heads) AER) when `kind` is the record's
    cross-attention and it read a held-out verse and its reference Spanish, else None; once per record
    (tabs.attention.views.VIEWS, with the words view the heatmaps draw)."""
    pattern = record.patterns.get(AttentionKind.CROSS) if kind == AttentionKind.CROSS else None
    return None if pattern is None else VIEWS.get(record, "gold", lambda: _verse_gold(record, pattern))


def _verse_gold(record, pattern):
    verse = verse_of(pattern)
    if verse is None:
        return None
    cross = cross_words(pattern, in_words=lambda p: display(record)(p, None, True))
    gold = gold_links(verse, len(cross.en_words), len(cross.es_words))
    return (cross, gold, aer_per_head(cross, gold)) if gold else None


def gold_scores(record, kind) -> dict:
    """{GOLD_SCORE: (layers, heads) AER on this verse} when the record's `kind` is cross-attention reading a held-out
    verse and its reference, else {}."""
    gold = _gold(record, kind)
    return {GOLD_SCORE: gold[2]} if gold else {}


def with_gold(fig, record, kind, layer: int, head: int, words: bool, narrow: bool = False):
    """The one-head heatmap of a gold verse gets the head's AER on this verse in its title and, in words, the gold
    links as circles (their word positions are the heatmap's: no <s> row, </s> last on both axes), their legend
    beside the title unless the page is `narrow` (a phone's: visualize.alignment). Other figures are returned
    unchanged."""
    gold = _gold(record, kind)
    if not gold or fig is None:
        return fig
    cross, gold, _ = gold
    _, s = head_alignment(cross.weights[layer, head], gold)
    title = fig.layout.title.text or ""
    fig.update_layout(title_text=f"{title} · AER {s.aer:.2f} vs gold links")
    if words:  # links on a function word drawn apart (transformer.translation.gold.function_link)
        loose = {link for link in gold if function_link(link, cross.en_words, cross.es_words)}
        gold_link_marks(fig, sorted(gold - loose), sorted(loose), wide=not narrow)
    return fig
