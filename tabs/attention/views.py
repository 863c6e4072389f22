"""The Attention tab's view switches and head caption: the heatmaps show the attention weights or the
value-weighted norms (Kobayashi et al. 2020), over tokens or merged into words, and the head on screen explains
itself in one line. The numbers come from transformer.interpretability (views, value_norms, captions)."""
from __future__ import annotations

import gradio as gr

from transformer.interpretability.value_norms import ValueNorms, value_weighted_norms
from transformer.interpretability.views import SHOW, describe_view, displayed_pattern, most_moved_head

from checks import UserError, check_choice, check_index
from limits import VIEWS_KEPT
from store.catalogue import ModelRef, model_ref
from store.gpu import gpu
from store.record_cache import RecordCache
from store.sessions import browser_key
from tabs.attention.inside import selected_pattern
from tabs.attention.record import inside_of
from widgets.errors import handler

NORMS_EXPLAINED = ("**Weights or what moves.** A weight α says where a head looks; the value-weighted norm "
                   "‖α·W_O W_V x‖ says how much that key actually adds to the output (Kobayashi et al. 2020), "
                   "shown as each key's share of its row. A head can put most of its weight on `<s>`, `</s>` or "
                   "\".\" and move almost nothing there: switch to the norms and that column fades. The caption "
                   "says how much the norms move, or that the two agree (they do on a head that looks at one key "
                   "a row); the demo *Weights or what moves* opens the head where they differ most. "
                   "**Words** merges subword tokens into words (weights summed over a word's keys, averaged over "
                   "its queries).")


@gpu(duration=10)
@handler
def norms_on_gpu(source: ModelRef, record, inside: dict, kind: str) -> ValueNorms:
    """transformer.interpretability.value_norms of one kind of the record: its weights, the values in `inside`
    (tabs.attention.record.inside_of), W^O."""
    model, _, _ = source.load()
    return value_weighted_norms(model, record, inside, kind)


VIEWS = RecordCache(VIEWS_KEPT)  # per record: each kind's norms, each view's pattern, its verse's gold links


def display(record):
    """transformer.interpretability.views.displayed_pattern for the patterns of `record` (with the norms VIEWS keeps
    for it), each view, (kind, weights or norms, tokens or words), computed once per record: the heatmaps, the
    overview, the table, the caption and the gold links of one click read the same objects, whose scores are
    computed once on them (AttentionPattern.scores)."""
    def shown(pattern, norms=None, words=False):
        return VIEWS.get(record, ("view", pattern.kind, norms is not None, bool(words)),
                         lambda: displayed_pattern(pattern, norms, words))
    return shown


def view_parts(record, kind, show, words, made_by, request=None):
    """(the pattern of `kind` over tokens, its value-weighted norms or None, words): what the view switches ask."""
    pattern = selected_pattern(record, kind)
    show = check_choice(show if show is not None else SHOW[0], "cells show", SHOW)
    if words is not None and not isinstance(words, bool):
        raise UserError(f"words must be true or false, got {str(words)[:20]!r}")
    norms = kind_norms(record, pattern.kind, made_by, request) if show != SHOW[0] else None
    return pattern, norms, bool(words)


def kind_norms(record, kind: str, made_by, request=None) -> ValueNorms:
    """The value-weighted norms of `kind` of the record (from the values of its pass, inside_of), kept in VIEWS."""
    source = model_ref(made_by, browser_key(request))
    return VIEWS.get(record, ("norms", kind), lambda: norms_on_gpu(source, record, inside_of(record, source), kind))


def most_moved(record, made_by, request=None) -> tuple[str, int, int]:
    """(kind, layer, head) of the record where the value-weighted norms look most unlike the weights, over every
    kind (transformer.interpretability.views.most_moved_head): the head a demo of the norms switch opens."""
    norms = {kind: kind_norms(record, kind, made_by, request) for kind in record.patterns}
    return most_moved_head(record.patterns, norms)[:3]


def norms_focus(record, focus, made_by, request=None):
    """A demo's `focus` (kind, score[, show]) as tabs.attention.page.focus_head takes it: a demo that opens in the
    value-weighted norms (show) opens on the head where they look most unlike the weights (most_moved), as
    (kind, score, layer, head); any other focus is returned as it is."""
    if not focus or tuple(focus[2:]) != (SHOW[1],):
        return focus
    kind, layer, head = most_moved(record, made_by, request)
    return kind, focus[1], layer, head


def view_pattern(record, kind, show, words, made_by, request=None):
    """The pattern of `kind` as the view switches ask: weights or value-weighted norms, tokens or words."""
    return display(record)(*view_parts(record, kind, show, words, made_by, request))


def view_title(kind: str, show, words) -> str:
    """What the heatmap's cells are, for its title."""
    what = "value-weighted norms" if show == SHOW[1] else "attention"
    return f"{kind} {what}" + (" in words" if words else "")


def cell_value(show) -> str:
    """What one cell is, for the colour bar: a weight, or a key's share of the row's value-weighted norms ("norms":
    a longer title takes its length from a phone's flat bar, visualize.head_heatmap)."""
    return "norms" if show == SHOW[1] else "weight"


@handler
def draw_caption(record, kind, layer, head, show=SHOW[0], words=False, made_by=None,
                 request: gr.Request = None) -> str:
    """One line for the head on screen, from its scores on this input in this view (an empty line without a
    record): "Layer L, head H: <what it does>." (the page shows it in bold under the heatmap that carries it)."""
    if record is None:
        return ""
    pattern, norms, words = view_parts(record, kind, show, words, made_by, request)
    L, H = pattern.shape
    layer = check_index(layer, "layer", L)
    head = check_index(head, "head", H)
    caption = describe_view(pattern, layer, head, norms, words, display(record))  # scored in the view, said of its unit
    return f"Layer {layer}, head {head}: {caption.sentence}."
