"""The Attention tab's two inputs side by side: the same model and head on a second input (a minimal pair), and
how much every head's attention changed (transformer.interpretability.two_inputs). Computed only when asked."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import gradio as gr

import visualize as viz
from visualize.sizes import box_width
from transformer.heads import HeadId
from transformer.interpretability.two_inputs import differing_positions, head_divergence

from checks import UserError, check_index
from limits import ATTENTION_CONCURRENCY, MAX_PROMPT_CHARS
from tabs.attention.inside import selected_pattern
from store.catalogue import resolve
from store.sessions import browser_key
from tabs.attention.record import attention_record
from tabs.attention.views import SHOW, view_pattern
from tabs.figure_export import figure
from widgets.answers import Answer, answered, named_outputs
from widgets.errors import handler
from widgets.ui import FAST, when_open

TWO_INPUTS_EXPLAINED = ("Type a second input that differs from the first in a word or two (a minimal pair such as "
                        "\"The keys to the cabinet is\" / \"are\"): the selected head on both, side by side. The "
                        "grid colours every head by how much its attention changed: the Jensen-Shannon divergence "
                        "of its rows, in bits, over the positions both inputs share (0 = the same, 1 = nothing in "
                        "common). A model that writes an output (translation, reverse) reads the **same output on "
                        "both sides**: input A's (its reference when it has one, else the model's own output for "
                        "A), so the change comes from the changed input alone, not from a different output.")


@dataclass(frozen=True)
class TwoInputs:
    """The section's components by name (an Answer's fields set those of their names: widgets.answers); `compare`:
    the arguments of the event that computes the second input's record (the demos and a link reuse them)."""

    text_b: Any
    record_b: Any
    given_b: Any
    plot_a: Any
    plot_b: Any
    grid: Any
    note: Any
    compare: dict


@dataclass(frozen=True)
class Compared(Answer):
    """The second input's record and the text it was computed from."""

    record_b: Any
    given_b: Any


@dataclass(frozen=True)
class TwoDrawn(Answer):
    """The selected head on both inputs, the change of every head, and the head's change in words."""

    plot_a: Any = None
    plot_b: Any = None
    grid: Any = None
    note: Any = ""


@handler
def compare_inputs(made_by, record, text_b, request: gr.Request = None):
    """The record of the second input, by the model that made the first (the shared cache of tabs.attention.record).
    An encoder-decoder's decoder reads A's target on B too (target_of): given a reference, A read it and B read
    the model's own output for B before, so every head's "change" measured a different Spanish sentence (0.09-0.60
    bits on every head of translate-en-es, issue 29 item 6), not the changed English word."""
    if record is None:
        raise UserError("press Show attention first")
    if not isinstance(text_b, str) or not text_b.strip():
        raise UserError("type a second input to compare with the first")
    key = browser_key(request)
    return attention_record(made_by, text_b, target_of(made_by, key, record), key)


def compare_and_keep(made_by, record, text_b, request: gr.Request = None) -> Compared:
    """compare_inputs, and the second input it read: the page keeps the text beside the record, as it keeps the
    first input's (the link to the view is made of them, tabs.attention.link)."""
    return Compared(compare_inputs(made_by, record, text_b, request=request), text_b)


def target_of(made_by, key: str, record) -> str:
    """The target input A's decoder read, as text (its reference, or the model's greedy output for A); "" for a
    model without one (decoder-only, encoder-only)."""
    if record.target_ids is None:
        return ""
    _, tokenizer, _ = resolve(made_by, key)
    return tokenizer.decode(record.target_ids)


@handler
def draw_two(record, record_b, kind, layer, head, width=None, words=False, made_by=None,
             request: gr.Request = None) -> TwoDrawn:
    """Heatmaps of the selected head on both inputs and the per-head divergence (nothing before a comparison),
    their cells readable on a page `width` px wide: side by side, or one under the other on a phone. With the
    main map in words both maps are in words (tabs.attention.views); the divergence is measured on the tokens."""
    if record is None or record_b is None:
        return TwoDrawn()
    a, b = selected_pattern(record, kind), selected_pattern(record_b, kind)
    shown_a, shown_b = ((view_pattern(r, kind, SHOW[0], True, made_by, request) for r in (record, record_b))
                        if words else (a, b))
    L, H = a.shape
    layer = check_index(layer, "layer", L)
    head = check_index(head, "head", H)
    narrow = viz.narrow_page(width) if width else None  # None: an API client, whose width is not known
    box = box_width(width, in_section=True, columns=1 if narrow else 2) if width else None
    unit = " in words" if words else ""
    fig_a, fig_b = (viz.head_heatmap(p.weights[layer, head], p.query_tokens, p.key_tokens,
                                     title=f"input {name}{unit}, layer {layer}, head {head}", mask=p.drawn_mask,
                                     narrow=narrow, box_px=box) for name, p in (("A", shown_a), ("B", shown_b)))
    divergence = head_divergence(a, b)
    grid = viz.overview(divergence, "change in bits", title=f"Change per head ({a.kind})")
    changed = differing_positions(a.key_tokens, b.key_tokens)
    value = float(divergence[layer, head])
    note = (f"Head {HeadId(a.kind, layer, head).label} changed by **{value:.3f} bits**; the inputs differ at "
            f"{'position ' + ', '.join(map(str, changed[:8])) if changed else 'no position'}"
            f"{' …' if len(changed) > 8 else ''}.")
    return TwoDrawn(fig_a, fig_b, grid, note)


def build_two_inputs(record, made_by, kind, layer, head, page_width, words) -> TwoInputs:
    """The section, under the heatmaps of the Attention tab (TwoInputs: its second input's record, the text it was
    computed from and the box are what the patching section, the demos and a link read)."""
    record_b, given_b = gr.State(None), gr.State(None)  # given_b: the second input record_b was computed from
    with gr.Accordion("Two inputs side by side", open=False, elem_id="att-two-section") as section:
        gr.Markdown(TWO_INPUTS_EXPLAINED)
        with gr.Row(equal_height=True):
            text_b = gr.Textbox(label="Second input (B); the first (A) is the input above", scale=4,
                                max_length=MAX_PROMPT_CHARS, placeholder="The keys to the cabinet are",
                                elem_id="two-text")
            compare = gr.Button("Compare", scale=1, elem_id="two-compare")
        note = gr.Markdown(elem_id="two-note")
        with gr.Row():
            plot_a = figure("Input A", "two-a")
            plot_b = figure("Input B", "two-b")
        grid = figure("Change per head", "two-grid")
    two = TwoInputs(text_b=text_b, record_b=record_b, given_b=given_b, plot_a=plot_a, plot_b=plot_b, grid=grid,
                    note=note, compare={})
    two = replace(two, compare=dict(fn=answered(two, compare_and_keep), inputs=[made_by, record, text_b],
                                    outputs=named_outputs(two, Compared), concurrency_limit=ATTENTION_CONCURRENCY,
                                    concurrency_id="attention"))
    for trigger, api in ((compare.click, "compare_inputs"), (text_b.submit, None)):
        trigger(**two.compare, api_name=api, api_visibility="public" if api else "private")
    when_open(section, record_b.change, kind.input, layer.input, head.input, words.input)(
        answered(two, draw_two), [record, record_b, kind, layer, head, page_width, words, made_by],
        named_outputs(two, TwoDrawn), api_name="draw_two_inputs", **FAST)
    return two
