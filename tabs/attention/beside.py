"""Beside a real translator: under the translation model's heatmap, what it writes for the input (the Generate tab's
beam search) and the reference it read, and a Marian English -> Spanish translator from the local Hugging Face cache
(opus-mt-en-es: the paper's model trained on OPUS) on the same English: its translation and its cross-attention in
words, side by side with ours, each on the head that aligns the verse best (or the sharpest head on any other
sentence). Without a cached Marian, the section says how to get one. The numbers and figures come from the
Attention tab's own record and drawing (tabs.attention.page), the translations from the Generate tab's."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import gradio as gr

from transformer.checkpoint import CheckpointError
from transformer.heads import AttentionKind
from transformer.interpretability.probe import AttentionRecord
from transformer.interpretability.views import SHOW
from transformer.translation import TASK as TRANSLATION
from visualize.text import markdown_text

from checks import UserError, check_text
from limits import BESIDE_CONCURRENCY, BESIDE_KEPT
from store.catalogue import fixed_choices, pretrained_translator, resolve
from store.sessions import browser_key
from tabs.attention.record import attention_record
from tabs.attention.translation_view import GOLD_SCORE
from tabs.figure_export import figure
from tabs.generation import translate_as_generate
from widgets.answers import Answer, Components, answered, named_outputs
from widgets.errors import handler

GET_MARIAN = ("No Marian English -> Spanish translator is in this machine's Hugging Face cache, so only our model is "
              "shown. `python -m transformer.pretrained Helsinki-NLP/opus-mt-en-es` downloads opus-mt-en-es (the "
              "paper's encoder-decoder trained on OPUS, about 310 MB) where the Hugging Face Hub is reachable; "
              "restart the app and its cross-attention appears here beside ours, on the same English.")
EXPLAIN = ("### Beside a real translator\nOur model read 29,000 Bible verses; Marian's opus-mt-en-es, the same "
           "architecture, millions of sentence pairs of OPUS. Each map is one cross-attention head in words: on a "
           "held-out verse the head that aligns it best (lowest AER against its gold links, drawn as circles), on "
           "any other sentence the sharpest head. Type any English above and press **Show attention**: both read "
           "it. Each translation is the Generate tab's (beam search, 4 beams).")


@dataclass(frozen=True)
class Translations:
    """What the section shows for one input: our model's translation, and the cached Marian's (its list name, its
    translation and its attention record on the same input), or why Marian is not shown."""

    ours: str
    marian: str | None = None
    marian_text: str = ""
    marian_record: AttentionRecord | None = None
    refused: str = ""  # why Marian could not read this input


def translates(ckpt, key: str) -> bool:
    """Whether `ckpt` is a translation model of ours (its config.json's task: the Bible translation)."""
    return resolve(ckpt, key)[2].get("task") == TRANSLATION


REFUSALS = (gr.Error, UserError, ValueError, CheckpointError)  # what a model can refuse, in words


def _why(e: Exception) -> str:
    return getattr(e, "message", None) or str(e)  # gr.Error's str() is its message quoted


def _translations(ckpt: str, marian: str | None, text: str, target: str, key: str) -> Translations:
    ours = translate_as_generate(ckpt, key, text)
    if marian is None:
        return Translations(ours)
    try:
        return Translations(ours, marian, translate_as_generate(marian, key, text),
                            attention_record(marian, text, target, key))
    except REFUSALS as e:  # its files are bad, the input too long for it, ...
        return Translations(ours, marian, refused=_why(e))


@functools.lru_cache(maxsize=BESIDE_KEPT)
def _shared_translations(ckpt: str, marian: str | None, text: str, target: str) -> Translations:
    """The same few inputs come from a whole class: a shipped or pretrained model's translations are computed once
    for everyone (a Translations is never modified)."""
    return _translations(ckpt, marian, text, target, "")


def translations(ckpt: str, text: str, target: str, key: str) -> Translations:
    """Our checkpoint's translation of `text` and the cached Marian's (with its record of `text` read with
    `target`, or its own output when empty), each as the Generate tab writes it."""
    text = check_text(text)
    target = check_text(target, "target") if target else ""
    marian = pretrained_translator("en", "es")
    if ckpt in fixed_choices():
        return _shared_translations(ckpt, marian, text, target)
    return _translations(ckpt, marian, text, target, key)


def _quoted(text: str) -> str:
    """A translation or the reference between quotes, as text (never markup: it came from a model, a user or a
    link)."""
    return f"“{markdown_text(text)}”" if text else "(nothing: it wrote \\</s\\> first)"


def _named(ckpt: str) -> str:
    """A checkpoint's name in bold, as text."""
    return f"**{markdown_text(ckpt)}**"


def section_texts(ckpt: str, shown: Translations, reference: str) -> tuple[str, str, str]:
    """(the reference line, our column's line, Marian's column's line): what each model writes, or how to get
    Marian, or why it could not read the input."""
    read = (f"Reference (the Spanish both decoders read): {_quoted(reference)}" if reference else
            "No reference: each map reads its own model's greedy output (the target box is empty).")
    ours = f"{_named(ckpt)} (ours, Bible verses) writes: {_quoted(shown.ours)}"
    if shown.marian is None:
        return read, ours, GET_MARIAN
    if shown.refused:
        return read, ours, f"{_named(shown.marian)} cannot read this: {markdown_text(shown.refused)}"
    return read, ours, f"{_named(shown.marian)} (Marian, OPUS) writes: {_quoted(shown.marian_text)}"


@dataclass(frozen=True)
class Beside(Answer):
    """The section (shown or hidden), the reference line, and each model's line and map (widgets.answers: each field
    sets the section's component of its name)."""

    section: Any
    reference: Any
    ours_text: Any
    ours_map: Any
    marian_text: Any
    marian_map: Any


def build_beside(record, made_by, text, target, page_width, draw, focus):
    """The section's components (hidden until a translation model's record is drawn) and `fill_after(trigger)`,
    which chains the section's update after `trigger`. `draw(record, kind, layer, head, score, parts, view, width)`
    and `focus(record, (kind, score))` are the tab's own drawing and choice of head (tabs.attention.page)."""
    with gr.Column(visible=False, elem_id="att-beside") as section:
        gr.Markdown(EXPLAIN)
        reference = gr.Markdown(elem_id="att-beside-reference")
        with gr.Row():
            with gr.Column():
                ours_text = gr.Markdown(elem_id="att-beside-ours-text")
                ours_map = figure("Our model's cross-attention", "att-beside-ours")
            with gr.Column():
                marian_text = gr.Markdown(elem_id="att-beside-marian-text")
                marian_map = figure("Marian's cross-attention", "att-beside-marian")
    own = Components(section=section, reference=reference, ours_text=ours_text, ours_map=ours_map,
                     marian_text=marian_text, marian_map=marian_map)

    def in_words(rec, width):
        """One head of the record's cross-attention in words, as the tab draws it, on the head `focus` picks."""
        _, layer, head = focus(rec, (AttentionKind.CROSS, GOLD_SCORE))
        fig, = draw(rec, AttentionKind.CROSS, layer, head, GOLD_SCORE, parts=("one",),
                    view=(SHOW[0], True, None, None), width=width)
        return fig

    @handler
    def fill(rec, ckpt, source, reference_text, width, request: gr.Request = None):
        """The section for the record on screen: hidden unless a translation model of ours made it; first cleared
        (the previous input's maps never sit under the new one), then filled."""
        key = browser_key(request)
        if rec is None or not ckpt or not translates(ckpt, key):
            yield Beside(gr.Column(visible=False), *[gr.update()] * 5)
            return
        yield Beside(gr.Column(visible=True), "", f"{_named(ckpt)} (ours) …", None, "…", None)
        try:
            shown = translations(ckpt, source, reference_text, key)
        except REFUSALS as e:  # our model refused to translate it (too long to decode, ...): say so in the section
            yield Beside(gr.update(), "", f"{_named(ckpt)} cannot translate this: {markdown_text(_why(e))}",
                         in_words(rec, width), "", None)
            return
        read, ours, marian = section_texts(ckpt, shown, reference_text)
        yield Beside(gr.update(), read, ours, in_words(rec, width), marian,
                     in_words(shown.marian_record, width) if shown.marian_record is not None else None)

    def fill_after(trigger, **kwargs):
        return trigger(answered(own, fill), [record, made_by, text, target, page_width], named_outputs(own, Beside),
                       show_progress="hidden", concurrency_limit=BESIDE_CONCURRENCY, concurrency_id="beside",
                       **kwargs)

    return dict(section=section, outputs=named_outputs(own, Beside), fill=fill, fill_after=fill_after)
