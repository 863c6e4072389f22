"""Attention tab: every attention pattern of one input, per layer and head, with per-head scores. This module lays
the tab out and wires its events; choosing the head (choose), drawing (drawing), the figure cache (figure_cache),
computing and drawing in one call (compute) and the download (export) live beside it."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

import gradio as gr

from transformer.heads import AttentionKind
from transformer.interpretability.probe import KINDS

from limits import ATTENTION_CONCURRENCY, EXPORT_CONCURRENCY, MAX_PROMPT_CHARS
from tabs.about import about_line
from tabs.attention.beside import build_beside
from tabs.attention.choose import Opened, Sliders, compute_attention, fit_sliders, focus_head
from tabs.attention.compute import Cleared, Drawn, adopt_page_width, clear_attention, compute_and_draw
from tabs.attention.drawing import SCORES, draw_figures
from tabs.attention.export import export_attention
from tabs.attention.figure_cache import Figures, draw_attention, draw_cached, draw_view
from tabs.attention.features import build_features
from tabs.attention.inside import build_inside
from tabs.attention.lens import build_lens
from tabs.attention.link import link_row
from tabs.attention.patching import build_patching
from tabs.attention.two_inputs import build_two_inputs
from tabs.attention.views import NORMS_EXPLAINED, SHOW, draw_caption
from tabs.figure_export import figure
from widgets.answers import answered, named_outputs
from widgets.controls import Dropdown, Radio, index_control
from widgets.errors import handler
from widgets.figure_caption import figure_caption
from widgets.ui import FAST, Followers, separately

__all__ = ["AttentionTab", "SCORES", "adopt_page_width", "build_attention_tab", "compute_and_draw",
           "compute_attention", "draw_attention", "draw_cached", "draw_view", "fit_sliders", "focus_head"]


@dataclass(frozen=True)
class AttentionTab:
    """The tab's components by name, for the demos, the link and the class to drive (a handler's Answer sets the
    component each of its fields names: widgets.answers). `patch`: the patching section's components
    (tabs.attention.patching); `link`: the copy-link row's (tabs.attention.link); `compare`: the event that reads
    the second input (tabs.attention.two_inputs); `compute_after(trigger)`: the computation after `trigger`."""

    text: Any
    target: Any
    show: Any
    notice: Any
    kind: Any
    layer: Any
    head: Any
    score: Any
    cells: Any
    words: Any
    one: Any
    grid: Any
    overview: Any
    table: Any
    record: Any
    made_by: Any
    focus: Any
    given: Any
    view: Any
    ablate_heads: Any
    query: Any
    lens_position: Any
    features: Any
    text_b: Any
    record_b: Any
    given_b: Any
    patch: Any
    link: dict
    compare: dict
    compute_after: Callable = None

    scores = SCORES  # the overview colour's choices (a link names one of them)

    @property
    def figures(self) -> list:
        return named_outputs(self, Figures)

    @property
    def view_inputs(self) -> list:
        """What a view on screen is made of, in this order: its link (tabs.attention.link), what a teacher pushes
        (tabs.classroom)."""
        return [self.made_by, self.given, self.record, self.kind, self.layer, self.head, self.cells, self.words,
                self.score]


def build_attention_tab(demo, ckpt, followers: Followers, page_width: gr.State) -> AttentionTab:
    """The tab's components; returns the handles the demo buttons drive. `page_width`: the browser's width, which
    this tab reads at the page's load (the Generate tab's "where it looked" reads it too)."""
    with gr.Tab("Attention", id="attention"):
        record, made_by, focus = gr.State(None), gr.State(None), gr.State(None)  # made_by: the record's checkpoint
        view = gr.State(None)  # (kind, layer, head) the computation chose to open on
        given = gr.State(None)  # (input, target) the record was computed from
        width_box = gr.Number(visible=False)  # the browser's width, on its way to page_width (see below)
        api_only = gr.Button(visible=False)  # /attention for API clients (see below)
        caption_only = gr.Button(visible=False)  # /head_caption for API clients: the page reads it in the heatmap
        api_caption = gr.Markdown(visible=False)
        # The heatmap first: on a projector it starts right under the tab bar (above the fold after a demo click),
        # on a phone right after the demo's explanation; the input and the controls sit beside it, or under it.
        with gr.Row():
            with gr.Column(scale=3):
                one = figure("One head", "att-one", name="attention-head")
                figure_caption("att-one", "att-caption")  # the caption the heatmap drawn carries
                link = link_row()
            with gr.Column(scale=2):
                with gr.Row(equal_height=True):
                    text = gr.Textbox(label="Input", value="attention", max_length=MAX_PROMPT_CHARS, scale=3,
                                      elem_id="att-text")
                    show = gr.Button("Show attention", variant="primary", scale=1, min_width=100,
                                     elem_id="att-show")
                about_line(ckpt, "att-about", followers)  # what the model was trained on and what input it expects
                target = gr.Textbox(label="Target (seq2seq; empty = model output)", max_length=MAX_PROMPT_CHARS,
                                    elem_id="att-target")
                notice = gr.Markdown(elem_id="att-notice")
                kind = Radio(list(KINDS), value=AttentionKind.CROSS.value, label="Attention", elem_id="att-kind")
                with gr.Row():
                    cells = Radio(list(SHOW), value=SHOW[0], label="Cells show", elem_id="att-cells")
                    words = gr.Checkbox(False, label="words (merge subword tokens)", elem_id="att-words")
                with gr.Row():
                    layer = index_control(2, label="Layer", elem_id="att-layer")
                    head = index_control(4, label="Head", elem_id="att-head")
                score = Dropdown(SCORES, value="anti-diagonal", label="Overview colour", elem_id="att-score")
                overview = figure("Layers x heads", "att-overview")
        beside = build_beside(record, made_by, text, target, page_width, draw=draw_figures, focus=focus_head)
        gr.Markdown("Each row is a token looking at the tokens of the columns; a row's weights sum to 1. Grey "
                    "cells are masked: that token may not look there. For a seq2seq model, leave the target empty "
                    "to use the model's own output.")
        gr.Markdown(NORMS_EXPLAINED)
        grid = figure("All heads of the layer", "att-grid")
        table = gr.Dataframe(label="Per-head scores", max_height=300)
        query, ablate_heads = build_inside(demo, record, made_by, kind, layer, head)
        lens_position = build_lens(demo, record, made_by, page_width)
        features = build_features(demo, record, made_by, kind, layer, page_width)
        two = build_two_inputs(record, made_by, kind, layer, head, page_width, words)
        patch = build_patching(demo, record, two.record_b, made_by, kind, layer, head, page_width)
        with gr.Row():
            export = gr.Button("Download the weights (CSV, JSON)", elem_id="att-export", scale=1)
            files = gr.File(label="Weights", file_count="multiple", scale=3)
    tab = AttentionTab(text=text, target=target, show=show, notice=notice, kind=kind, layer=layer, head=head,
                       score=score, cells=cells, words=words, one=one, grid=grid, overview=overview, table=table,
                       record=record, made_by=made_by, focus=focus, given=given, view=view,
                       ablate_heads=ablate_heads, query=query, lens_position=lens_position, features=features,
                       text_b=two.text_b, record_b=two.record_b, given_b=two.given_b, patch=patch, link=link,
                       compare=two.compare)
    shown = [cells, words, made_by]  # what the cells show (tabs.attention.views) and who can compute it
    # 4: redraws keep their share of the GIL (bench/RESULTS.md, Load); the progress shows on the heatmap (which a
    # demo click or Show attention has just cleared) until the new head is drawn
    lines = dict(concurrency_limit=ATTENTION_CONCURRENCY, concurrency_id="attention", show_progress_on=[one])
    compute = dict(fn=answered(tab, compute_and_draw), inputs=[ckpt, text, target, focus, score, cells, words,
                                                               page_width],
                   outputs=named_outputs(tab, Drawn), **lines)
    # The page's width, read in the browser at load (before the first heatmap: these events are not queued), so
    # that the grid of a layer's heads has as many columns as the screen holds (2 on a phone, 4 on a projector)
    demo.load(adopt_page_width, width_box, page_width, js="() => window.innerWidth", queue=False,
              api_visibility="private")

    def compute_after(trigger, **kwargs):
        """Compute the record after `trigger` (an event listener or `.then`) and draw the head it chose, in one call
        (compute_and_draw), from that choice itself, never from the controls: while the page applies the new
        maxima and values to the sliders, their values can still be the previous input's
        (tests/browser/test_demo_clicks.py). Beside it, for a translation model, Marian's map
        (tabs.attention.beside)."""
        drawn = trigger(**{**compute, "api_visibility": "private", **kwargs})
        beside["fill_after"](drawn.then, api_visibility="private")  # a translation model: beside Marian
        return drawn

    for trigger in (show.click, text.submit, target.submit):
        # first clear, so that a refused input leaves no heatmap of the previous one on screen
        compute_after(trigger(answered(tab, clear_attention), None, named_outputs(tab, Cleared), queue=False,
                              api_visibility="private").then)
    # For API clients, /attention computes the record (as it did before the page drew in the same call); no button
    # of the page calls it
    api_only.click(answered(tab, compute_attention), [ckpt, text, target, focus], named_outputs(tab, Opened),
                   api_name="attention", **lines)
    # the user's choice of checkpoint (a demo that sets it computes its own input: .change would compute twice)
    compute_after(separately(ckpt.input))
    # a heatmap from the first second: at the page's load, after its link is read (tabs.attention.link.wire_link)
    # The user's own changes (input, not change: a new record's values must not redraw with half-updated controls)
    # share one event, so replies come in order and never show a stale head.
    separately(kind.input, layer.input, head.input, score.input, cells.input, words.input)(
        answered(tab, draw_attention), [record, kind, layer, head, score] + shown + [page_width], tab.figures,
        api_name="draw_attention", **FAST)
    # another kind of attention may have another number of layers (an encoder deeper than its decoder)
    kind.input(answered(tab, handler(fit_sliders)), [record, kind, layer, head], named_outputs(tab, Sliders),
               queue=False, api_visibility="private")
    caption_only.click(draw_caption, [record, kind, layer, head] + shown, api_caption, api_name="head_caption",
                       **FAST)
    export.click(export_attention, record, files, api_name="export_attention",
                 concurrency_limit=EXPORT_CONCURRENCY)
    return replace(tab, compute_after=compute_after)
