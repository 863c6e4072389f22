"""The Attention tab's logit lens (nostalgebraist 2020): what the decoder would predict after each layer, for the
input the tab holds. Computed only while its section is open; the numbers come from
transformer.interpretability.logit_lens, the figures from visualize.lens."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

import visualize as viz
from visualize.sizes import box_width
from visualize.text import html_text
from transformer.interpretability.logit_lens import LogitLens, logit_lens

from checks import UserError, check_index
from limits import ATTENTION_CAP, LENSES_KEPT
from store.catalogue import ModelRef, model_ref
from store.gpu import gpu
from store.record_cache import RecordCache
from store.sessions import browser_key
from tabs.figure_export import figure
from widgets.answers import Answer, Components, answered, named_outputs
from widgets.controls import index_control, index_slider
from widgets.errors import handler
from widgets.ui import FAST, open_states, when_open

LENS_EXPLAINED = ("Each row passes the residual stream after that layer through the model's final LayerNorm and "
                  "its unembedding, as the last layer's goes to make the output: a cell is the token that layer "
                  "would predict next, its colour that token's probability. Read a column downwards to watch the "
                  "prediction form; the bottom row is the model's own output, and the curve shows how early it "
                  "settles on it.")
POST_NORM = ("This model is post-norm, as in the paper: every layer already ends with its own LayerNorm and there "
             "is no final one, so each row reads that layer's normalised output through the unembedding directly.")
LENSES = RecordCache(LENSES_KEPT)


@gpu(duration=10)
@handler
def lens_on_gpu(source: ModelRef, record) -> LogitLens:
    """transformer.interpretability.logit_lens of the record's input (and, for seq2seq, its target)."""
    model, tok, _ = source.load()
    return logit_lens(model, tok, record.input_ids, record.target_ids)


@dataclass(frozen=True)
class LensFigures(Answer):
    """The grid, one position's curve and the note under them; each field sets the section's component of its name
    (widgets.answers)."""

    grid: Any
    curve: Any
    note: Any


@handler
def draw_lens(made_by, record, position, shown=None, width=None, request: gr.Request = None) -> LensFigures:
    """The grid and one position's curve (nothing while the section is closed in the page), the grid's cells
    readable on a page `width` px wide (visualize.logit_lens_grid: turned or scrolled sideways when they do not
    fit)."""
    if shown is False:
        return LensFigures(gr.skip(), gr.skip(), gr.skip())
    if record is None:
        raise UserError("press Show attention first")
    source = model_ref(made_by, browser_key(request))
    lens = LENSES.get(record, "lens", lambda: lens_on_gpu(source, record))
    T = len(lens.position_tokens)
    t = check_index(position, "position", T)
    grid = viz.logit_lens_grid(lens.top_tokens, lens.top_probs, lens.rows, lens.position_tokens,
                               title="Logit lens: each layer's top next token", chosen=t,
                               container_px=box_width(width, in_section=True) if width else None)
    token = lens.final_tokens[t]
    curve = viz.final_token_curve(lens.final_probs[:, t], lens.rows, token,
                                  title=f"position {t} ({html_text(repr(lens.position_tokens[t]))}): "
                                        f"p({html_text(repr(token))}) by layer")
    return LensFigures(grid, curve, "" if lens.through_final_norm else POST_NORM)


def build_lens(demo, record, made_by, page_width):
    """The section, under the heatmaps of the Attention tab; returns its position slider."""
    with gr.Accordion("Logit lens: what each layer would predict", open=False,
                      elem_id="att-lens-section") as section:
        gr.Markdown(LENS_EXPLAINED)
        note = gr.Markdown(elem_id="lens-note")
        position = index_control(ATTENTION_CAP, label="Position (column) for the curve", elem_id="lens-position")
        grid = figure("Logit lens", "lens-grid")
        curve = figure("The final token by layer", "lens-curve")
    [shown] = open_states(demo, section)
    figures = Components(grid=grid, curve=curve, note=note)
    when_open(section, record.change, position.change)(
        answered(figures, draw_lens), [made_by, record, position, shown, page_width],
        named_outputs(figures, LensFigures), api_name="logit_lens", **FAST)
    when_open(section, record.change)(
        lambda r: gr.update() if r is None else index_slider(lens_positions(r)), record, position, queue=False,
        api_visibility="private")
    return position


def lens_positions(record) -> int:
    """How many decoder positions the lens of `record` has (<s> + target for seq2seq, else the input)."""
    if record is None:
        return 1
    return len(record.target_ids) + 1 if record.target_ids is not None else len(record.input_ids)
