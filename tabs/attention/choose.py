"""Choosing the head the Attention tab opens on: a computation's record, the head it opens (a demo's score, a link's
head, else the sharpest), and the notice and sliders fitted to the record."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from visualize.text import markdown_text
from transformer.interpretability.analysis import top_head
from transformer.heads import AttentionKind, HeadId

from checks import check_index
from store.sessions import browser_key
from tabs.attention.record import attention_record
from tabs.attention.translation_view import GOLD_SCORE, gold_scores
from tabs.attention.views import norms_focus
from widgets.controls import index_slider, only_one
from widgets.answers import Answer
from widgets.errors import handler


@dataclass(frozen=True)
class Sliders(Answer):
    """The notice and the layer and head sliders of one kind of a record; each field sets the tab's component of its
    name (widgets.answers)."""

    notice: Any
    layer: Any
    head: Any


@dataclass(frozen=True)
class Opened(Answer):
    """What a computation sets on the tab, each field the tab's component of its name (widgets.answers): the
    notice and sliders, the heads to switch off, the kind and the Q·K step's query position, the second input's
    record let go (`record_b`: it was read by the previous input's model and target), the record, its checkpoint
    (`made_by`), what it was computed from (`given`: input, target) and the head it opens on (`view`: kind, layer,
    head)."""

    notice: Any
    ablate_heads: Any
    kind: Any
    layer: Any
    head: Any
    query: Any
    record_b: Any
    made_by: Any
    given: Any
    view: Any
    record: Any


def focus_head(record, focus) -> tuple[str, int, int]:
    """(kind, layer, head) to open on: with `focus` = (kind, score) from a demo, the head that scores best on it;
    with (kind, score, layer, head) from a link (store.view_link, checked against the model) or a demo of the
    value-weighted norms (tabs.attention.views.norms_focus), that head;
    otherwise cross-attention when there is one, on its sharpest (lowest-entropy) head."""
    kind, score, *at = focus if focus else (None, None)
    kind = kind if kind in record.patterns else (AttentionKind.CROSS if AttentionKind.CROSS in record.patterns else record.kinds[0])
    pattern = record.patterns[kind]
    if len(at) == 2 and None not in at:
        L, H = pattern.shape
        return kind, check_index(at[0], "layer", L), check_index(at[1], "head", H)
    gold = gold_scores(record, kind) if score == GOLD_SCORE else {}
    if gold:  # the head that aligns this verse's words best (lowest AER against its gold links)
        return (kind,) + top_head(-gold[GOLD_SCORE])  # the lowest AER
    layer, head = pattern.top_head(score) if score in pattern.scores() else pattern.sharpest_head()
    return kind, layer, head


def record_notice(record, kind: str) -> str:
    """What the tab says above the controls about this input and this kind of attention: what the encoding cut,
    characters the model never saw, and a layer or head that is the only one (its slider is hidden)."""
    notice = "".join(f"**{m}** " for m in record.notices)
    if record.unknown_chars:
        notice += (f"Characters this model never saw became `<unk>`: "
                   f"{markdown_text(' '.join(repr(c) for c in record.unknown_chars))}. ")
    L, H = record.patterns[kind].shape
    return notice + only_one(layer=L, head=H)


def fit_sliders(record, kind, layer, head) -> Sliders:
    """The notice and the layer and head sliders for `kind` of `record`: a range of 0 to layers - 1 and heads - 1,
    hidden where there is only one (widgets.controls.index_slider); nothing changes while there is no record."""
    if record is None or kind not in record.patterns:
        return Sliders(gr.update(), gr.update(), gr.update())
    L, H = record.patterns[kind].shape
    return Sliders(record_notice(record, kind), index_slider(L, check_index(layer, "layer", L)),
                   index_slider(H, check_index(head, "head", H)))


@handler
def compute_attention(ckpt, text, target, focus=None, request: gr.Request = None) -> Opened:
    """Run the model once on the input and keep every attention pattern for the controls to browse; the input and
    target it read are kept beside it (the link to the view is made of them, tabs.attention.link); the second
    input's record (tabs.attention.two_inputs), read by the previous input's model and target, is let go."""
    record = attention_record(ckpt, text, target, browser_key(request))
    focus = norms_focus(record, focus[1:], ckpt, request) if isinstance(focus, tuple) and focus[0] == ckpt else None
    kind, layer, head = focus_head(record, focus)
    H = record.patterns[kind].shape[1]
    T = len(record.patterns[kind].query_tokens)
    labels = [HeadId(kind, layer, head).label for layer in range(max(p.shape[0] for p in record.patterns.values()))
              for head in range(H)]
    sliders = fit_sliders(record, kind, layer, head)
    return Opened(notice=sliders.notice, ablate_heads=gr.update(choices=labels, value=[]),
                  kind=gr.update(choices=record.kinds, value=kind), layer=sliders.layer, head=sliders.head,
                  query=index_slider(T, min(T - 1, 1)), record_b=None, made_by=ckpt, given=(text, target or ""),
                  view=(kind, layer, head), record=record)
