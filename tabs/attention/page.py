"""Attention tab: every attention pattern of one input, per layer and head, with per-head scores."""
from __future__ import annotations

import json

import gradio as gr
import pandas as pd
import torch

import visualize as viz
from visualize.text import markdown_text
from transformer.interpretability.analysis import LOW_IS_INTERESTING, top_head
from transformer.heads import AttentionKind, HeadId
from transformer.interpretability.probe import KINDS

from checks import UserError, check_choice, check_index
from limits import ATTENTION_CONCURRENCY, EXPORT_CONCURRENCY, FIGURES_BYTES, FIGURES_KEPT, MAX_PROMPT_CHARS
from store.exports import EXPORTS
from store.record_cache import RecordCache
from store.sessions import browser_key
from tabs.about import about_line
from tabs.attention.beside import build_beside
from tabs.attention.features import build_features
from tabs.attention.inside import build_inside
from tabs.attention.lens import build_lens
from tabs.attention.link import link_row
from tabs.attention.patching import build_patching
from tabs.attention.record import attention_record
from tabs.attention.translation_view import GOLD_SCORE, gold_scores, with_gold
from tabs.attention.two_inputs import build_two_inputs
from tabs.attention.views import (NORMS_EXPLAINED, SHOW, cell_value, draw_caption, norms_focus, view_pattern,
                                  view_title)
from tabs.figure_export import figure
from widgets.controls import Dropdown, Radio, index_control, index_slider, only_one
from widgets.errors import handler
from widgets.figure_caption import figure_caption, with_caption
from widgets.figure_table import Plot
from widgets.ui import FAST, Followers, separately

SCORES = ["entropy", "mean distance", "diagonal", "anti-diagonal", "previous token", "duplicate token", "induction",
          GOLD_SCORE]  # the last: translation verses with gold links only (tabs.attention.translation_view)


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


def fit_sliders(record, kind, layer, head):
    """The notice and the layer and head sliders for `kind` of `record`: a range of 0 to layers - 1 and heads - 1,
    hidden where there is only one (widgets.controls.index_slider); nothing changes while there is no record."""
    if record is None or kind not in record.patterns:
        return gr.update(), gr.update(), gr.update()
    L, H = record.patterns[kind].shape
    return (record_notice(record, kind), index_slider(L, check_index(layer, "layer", L)),
            index_slider(H, check_index(head, "head", H)))


@handler
def compute_attention(ckpt, text, target, focus=None, request: gr.Request = None):
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
    notice, layer_slider, head_slider = fit_sliders(record, kind, layer, head)
    return (notice, gr.update(choices=labels, value=[]), gr.update(choices=record.kinds, value=kind),
            layer_slider, head_slider, index_slider(T, min(T - 1, 1)), None, ckpt, (text, target or ""),
            (kind, layer, head), record)


def _selected(record, kind, layer, head, view=(SHOW[0], False, None, None)):
    """The pattern of `kind` as `view` = (show, words, made_by, request) asks (tabs.attention.views), and the
    layer and head, clamped to it."""
    pattern = view_pattern(record, kind, *view)
    L, H = pattern.shape
    layer = check_index(layer, "layer", L)
    head = check_index(head, "head", H)
    return pattern, layer, head


def draw_figures(record, kind, layer, head, score, parts=("one", "grid", "overview", "table"),
                 view=(SHOW[0], False, None, None), width=None):
    """The figures of the tab from the stored record: one head, the layer's heads, the overview and the per-head
    table (or the `parts` asked for), in the `view` the switches ask for (the value-weighted norms cost one
    forward pass per record and kind, cached), the layer's heads in as many columns as a page `width` px wide
    holds (visualize.grid_columns); nothing while there is no record (a new input is on its way, or it was
    refused)."""
    if record is None:
        return (None,) * len(parts)
    pattern, layer, head = _selected(record, kind, layer, head, view)
    kind = pattern.kind
    score = check_choice(score, "overview colour", SCORES)
    mask = pattern.drawn_mask
    scores = {**pattern.scores(), **gold_scores(record, kind)}
    shown = score if score in scores else "entropy"
    why = ("needs a held-out verse and its reference Spanish (translate-en-es)" if score == GOLD_SCORE
           else "is a self-attention score on tokens")
    title = f"{shown} of every head ({kind})" if shown == score else f"{score} {why}; {shown} of every head ({kind})"
    low = LOW_IS_INTERESTING | {GOLD_SCORE}
    what = view_title(kind, view[0], view[1])
    build = {
        "one": lambda: with_gold(viz.head_heatmap(pattern.weights[layer, head], pattern.query_tokens,
                                                  pattern.key_tokens, title=f"{what}, layer {layer}, head {head}",
                                                  mask=mask, narrow=viz.narrow_page(width),
                                                  value=cell_value(view[0])),
                                 record, kind, layer, head, bool(view[1]), viz.narrow_page(width)),
        "grid": lambda: viz.layer_grid(pattern.weights[layer], pattern.query_tokens, pattern.key_tokens,
                                       title=f"{what}, all heads of layer {layer}", mask=mask,
                                       cols=viz.grid_columns(width), scale=not viz.narrow_page(width),
                                       value=cell_value(view[0]), box_px=viz.box_width(width) if width else None),
        "overview": lambda: viz.overview(scores[shown], shown, title=title,
                                         low_is_interesting=shown in low),
        "table": lambda: viz.scores_table(scores)}
    return tuple(build[part]() for part in parts)


class _FigureCache(RecordCache):
    """Figures of shared records, serialised once for every user (a class sends the same few inputs and steps
    through the same heads): a RecordCache whose values are build()'s tuples with each plotly figure as gr.Plot
    sends it."""

    def __init__(self, size: int, max_bytes: int):
        super().__init__(size, max_bytes)
        self._plot = Plot()  # each figure named and described (widgets.figure_table) once, for everyone

    def get(self, record, key: tuple, build):
        return super().get(record, key, lambda: tuple(self._plot.postprocess(v) if hasattr(v, "to_plotly_json")
                                                      else v for v in build()))


FIGURES = _FigureCache(FIGURES_KEPT, FIGURES_BYTES)


def draw_cached(record, kind, layer, head, score, show=SHOW[0], words=False, made_by=None, width=None,
                request: gr.Request = None):
    """draw_figures, each figure cached on what it depends on: the one-head heatmap on (kind, layer, head), the grid
    on (kind, layer), the overview and the table on (kind, score), each also on the view (show, words), the first two
    also on whether the page's `width` is a phone's. The one-head heatmap carries its head's caption
    (widgets.figure_caption: the page shows under it the caption of the heatmap drawn, never another's)."""
    if record is None:
        return None, None, None, None
    view = (show, words, made_by, request)
    pattern, layer, head = _selected(record, kind, layer, head, view)
    kind, args, shown = pattern.kind, (record, pattern.kind, layer, head, score), (show, bool(words))
    narrow = viz.narrow_page(width)  # a phone's figures differ (tick labels, the grid's columns)
    one, = FIGURES.get(record, ("one", kind, layer, head, narrow) + shown, lambda: (with_caption(
        *draw_figures(*args, parts=("one",), view=view, width=width),
        draw_caption(record, kind, layer, head, show, words, made_by, request=request)),))
    grid, = FIGURES.get(record, ("grid", kind, layer, narrow) + shown,
                        lambda: draw_figures(*args, parts=("grid",), view=view, width=width))
    overview, table = FIGURES.get(record, ("overview", kind, score) + shown,
                                  lambda: draw_figures(*args, parts=("overview", "table"), view=view))
    return one, grid, overview, table


draw_attention = handler(draw_cached)


def draw_view(record, view, score, *shown, request: gr.Request = None):
    """The figures of the head a computation chose to open on (`view` = (kind, layer, head)), its caption in the
    heatmap, as `shown` = (cells, words, made_by, page width) asks, in one call (each call costs the page a round of
    status updates: tests/browser/test_translation_demo.py)."""
    if record is None or not view:
        return (None,) * 4
    return draw_attention(record, *view, score, *shown, request=request)


def compute_and_draw(ckpt, text, target, focus, score, cells, words, width, request: gr.Request = None):
    """compute_attention, then the head it chose drawn, its caption in it (draw_view), in the same call: the page's
    every path to a new record (Show attention, Enter, the checkpoint, a demo, a link). One call instead of two: each
    queued call costs the page about six rounds of status updates (bench/RESULTS.md, "Issue 29 item 11")."""
    computed = compute_attention(ckpt, text, target, focus, request=request)
    *_, made_by, _, view, record = computed
    return (*computed, *draw_view(record, view, score, cells, words, made_by, width, request=request))


def adopt_page_width(width) -> float | None:
    """The page width the browser reported (px), or None (unknown: an API client, or not a number)."""
    try:
        width = float(width)
    except (TypeError, ValueError):
        return None
    return width if 100 <= width <= 100_000 else None


def clear_attention():
    """Before a new input is computed: no record, no notice and no figure (nor, so, its caption) of the previous
    input."""
    return None, None, "", None, None, None, None


@handler
def export_attention(record, request: gr.Request = None) -> list[str]:
    """The weights as a long CSV (one row per weight) and as JSON, written only when asked, into a bounded folder
    that serves them only to this browser."""
    if record is None:
        raise UserError("press Show attention first")
    rows, data = [], {"patterns": {}}
    for kind, pattern in record.patterns.items():
        data["patterns"][kind] = {"query_tokens": pattern.query_tokens, "key_tokens": pattern.key_tokens,
                                  "weights": pattern.weights.numpy().round(5).tolist()}
        for (layer, head, q, k), w in zip(torch.cartesian_prod(*(torch.arange(n) for n in pattern.weights.shape)
                                                               ).tolist(), pattern.weights.flatten().tolist()):
            rows.append((kind, layer, head, q, pattern.query_tokens[q], k, pattern.key_tokens[k], round(w, 6)))
    folder = EXPORTS.new(request)
    pd.DataFrame(rows, columns=["kind", "layer", "head", "query_pos", "query_token", "key_pos", "key_token",
                                "weight"]).to_csv(folder / "attention.csv", index=False)
    (folder / "attention.json").write_text(json.dumps(data))
    return [str(folder / "attention.csv"), str(folder / "attention.json")]


def build_attention_tab(demo, ckpt, followers: Followers, page_width: gr.State):
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
        patch = build_patching(demo, record, two["record_b"], made_by, kind, layer, head, page_width)
        with gr.Row():
            export = gr.Button("Download the weights (CSV, JSON)", elem_id="att-export", scale=1)
            files = gr.File(label="Weights", file_count="multiple", scale=3)
    figures = [one, grid, overview, table]
    shown = [cells, words, made_by]  # what the cells show (tabs.attention.views) and who can compute it
    # 4: redraws keep their share of the GIL (bench/RESULTS.md, Load); the progress shows on the heatmap (which a
    # demo click or Show attention has just cleared) until the new head is drawn
    computed = [notice, ablate_heads, kind, layer, head, query, two["record_b"], made_by, given, view, record]
    lines = dict(concurrency_limit=ATTENTION_CONCURRENCY, concurrency_id="attention", show_progress_on=[one])
    compute = dict(fn=compute_and_draw, inputs=[ckpt, text, target, focus, score, cells, words, page_width],
                   outputs=computed + figures, **lines)
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
        compute_after(trigger(clear_attention, None, [record, made_by, notice] + figures, queue=False,
                              api_visibility="private").then)
    # For API clients, /attention computes the record (as it did before the page drew in the same call); no button
    # of the page calls it
    api_only.click(compute_attention, [ckpt, text, target, focus], computed, api_name="attention", **lines)
    # the user's choice of checkpoint (a demo that sets it computes its own input: .change would compute twice)
    compute_after(separately(ckpt.input))
    # a heatmap from the first second: at the page's load, after its link is read (tabs.attention.link.wire_link)
    # The user's own changes (input, not change: a new record's values must not redraw with half-updated controls)
    # share one event, so replies come in order and never show a stale head.
    separately(kind.input, layer.input, head.input, score.input, cells.input, words.input)(
        draw_attention, [record, kind, layer, head, score] + shown + [page_width], figures, api_name="draw_attention",
        **FAST)
    # another kind of attention may have another number of layers (an encoder deeper than its decoder)
    kind.input(handler(fit_sliders), [record, kind, layer, head], [notice, layer, head], queue=False,
               api_visibility="private")
    caption_only.click(draw_caption, [record, kind, layer, head] + shown, api_caption, api_name="head_caption",
                       **FAST)
    export.click(export_attention, record, files, api_name="export_attention",
                 concurrency_limit=EXPORT_CONCURRENCY)
    return dict(text=text, target=target, record=record, focus=focus, kind=kind, layer=layer, head=head,
                score=score, one=one, grid=grid, overview=overview, table=table, show=show,
                words=words, compute_after=compute_after, text_b=two["text_b"], compare=two["compare"],
                patch=patch, cells=cells, made_by=made_by, given=given, link=link, scores=SCORES, query=query,
                lens_position=lens_position, features=features, record_b=two["record_b"], given_b=two["given_b"])
