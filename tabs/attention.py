"""Attention tab: every attention pattern of one input, per layer and head, with per-head scores."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import gradio as gr
import pandas as pd
import torch

import visualize as viz
from transformer.analysis import head_scores
from transformer.probe import KINDS, record_attention

from .common import ATTENTION_CAP, FAST, MAX_PROMPT_CHARS, UserError, check_text, handler, resolve, unknown_notice


@handler
def compute_attention(ckpt, text, target, user_models):
    """Run the model once on the input and keep every attention pattern for the sliders to browse; open on the
    sharpest (lowest-entropy) head, where a pattern is easiest to see."""
    model, tok, _ = resolve(ckpt, user_models)
    record = record_attention(model, tok, check_text(text), target or None, max_tokens=ATTENTION_CAP)
    notice = unknown_notice(tok, text + (target or ""))
    if record.truncated:
        notice += f"**The input was cut to {ATTENTION_CAP} tokens** so the heatmap stays readable. "
    kinds = [k for k in KINDS if k in record.patterns]
    kind = "cross" if "cross" in kinds else kinds[0]
    L, H = record.patterns[kind].shape[:2]
    sharpness = -head_scores(record.patterns[kind])["entropy"]  # (L, H): open on the sharpest head
    layer, head = divmod(int(sharpness.argmax()), H)
    return (record, notice, gr.update(choices=kinds, value=kind),
            gr.update(maximum=max(L - 1, 1), value=layer, interactive=L > 1),
            gr.update(maximum=max(H - 1, 1), value=head, interactive=H > 1), export_attention(record))


def export_attention(record) -> list[str]:
    """The weights as a long CSV (one row per weight) and as JSON, for download."""
    rows, data = [], {"source_tokens": record.source_tokens, "decoder_tokens": record.decoder_tokens,
                      "output_tokens": record.output_tokens, "patterns": {}}
    for kind, pattern in record.patterns.items():
        queries, keys = record.axes(kind)
        data["patterns"][kind] = pattern.numpy().round(5).tolist()
        for (layer, head, q, k), w in zip(torch.cartesian_prod(*(torch.arange(n) for n in pattern.shape)).tolist(),
                                          pattern.flatten().tolist()):
            rows.append((kind, layer, head, q, queries[q], k, keys[k], round(w, 6)))
    folder = Path(tempfile.mkdtemp(prefix="attention-"))
    pd.DataFrame(rows, columns=["kind", "layer", "head", "query_pos", "query_token", "key_pos", "key_token",
                                "weight"]).to_csv(folder / "attention.csv", index=False)
    (folder / "attention.json").write_text(json.dumps(data))
    return [str(folder / "attention.csv"), str(folder / "attention.json")]


def _selected(record, kind, layer, head):
    """The (L, H, T, S) pattern of `kind`, the layer and head clamped to it, and the axis tokens."""
    if record is None:
        raise UserError("press “Show attention” first")
    kind = kind if kind in record.patterns else next(iter(record.patterns))
    pattern = record.patterns[kind]
    layer, head = min(int(layer), pattern.size(0) - 1), min(int(head), pattern.size(1) - 1)
    return kind, pattern, layer, head, *record.axes(kind)


@handler
def draw_head(record, kind, layer, head):
    kind, pattern, layer, head, queries, keys = _selected(record, kind, layer, head)
    return viz.head_heatmap(pattern[layer, head], queries, keys, title=f"{kind} attention, layer {layer}, head {head}")


@handler
def draw_layer(record, kind, layer, head):
    kind, pattern, layer, head, queries, keys = _selected(record, kind, layer, head)
    grid = viz.layer_grid(pattern[layer], queries, keys, title=f"{kind} attention, all heads of layer {layer}")
    return draw_head(record, kind, layer, head), grid


@handler
def draw_overview(record, kind, score):
    kind, pattern, *_ = _selected(record, kind, 0, 0)
    scores = head_scores(pattern)
    return viz.overview(scores[score], score, title=f"{score} of every head ({kind})"), viz.scores_table(scores)


@handler
def draw_attention(record, kind, layer, head, score):
    """Every figure of the tab from the stored patterns; no model call."""
    return *draw_layer(record, kind, layer, head), *draw_overview(record, kind, score)


def build_attention_tab(demo, ckpt, user_models):
    with gr.Tab("Attention"):
        gr.Markdown("Each row of a heatmap is a token looking at the tokens of the columns; a row's weights sum "
                    "to 1. For a seq2seq model, leave the target empty to use the model's own output.")
        with gr.Row():
            text = gr.Textbox(label="Input", value="attention", max_length=MAX_PROMPT_CHARS, scale=3,
                              elem_id="att-text")
            target = gr.Textbox(label="Target (seq2seq; empty = model output)", max_length=MAX_PROMPT_CHARS, scale=2)
            show = gr.Button("Show attention", variant="primary", scale=1, elem_id="att-show")
        with gr.Row():
            kind = gr.Radio(list(KINDS), value="cross", label="Attention", elem_id="att-kind")
            layer = gr.Slider(0, 1, value=0, step=1, label="Layer", elem_id="att-layer")
            head = gr.Slider(0, 3, value=0, step=1, label="Head", elem_id="att-head")
            score = gr.Dropdown(["entropy", "mean distance", "diagonal", "anti-diagonal", "previous token"],
                                value="anti-diagonal", label="Overview colour", elem_id="att-score")
        notice = gr.Markdown(elem_id="att-notice")
        record = gr.State(None)
        with gr.Row():
            one = gr.Plot(show_label=False, label="One head", elem_id="att-one")
            overview = gr.Plot(show_label=False, label="Layers x heads", elem_id="att-overview")
        grid = gr.Plot(show_label=False, label="All heads of the layer", elem_id="att-grid")
        table = gr.Dataframe(label="Per-head scores", max_height=300)
        files = gr.File(label="Download the weights (CSV, JSON)", file_count="multiple")
    draw_inputs, draw_outputs = [record, kind, layer, head, score], [one, grid, overview, table]
    for trigger in (show.click, text.submit, target.submit):
        trigger(compute_attention, [ckpt, text, target, user_models], [record, notice, kind, layer, head, files],
                api_name="attention" if trigger == show.click else None,
                api_visibility="public" if trigger == show.click else "private",
                concurrency_limit=8, concurrency_id="attention").then(
            draw_attention, draw_inputs, draw_outputs, api_visibility="private")
    # Each control redraws only the figures that depend on it (.input: user changes, not compute's updates).
    kind.input(draw_attention, draw_inputs, draw_outputs, api_name="draw_attention", **FAST)
    layer.input(draw_layer, [record, kind, layer, head], [one, grid], api_name="draw_layer", **FAST)
    head.input(draw_head, [record, kind, layer, head], one, api_name="draw_head", **FAST)
    score.input(draw_overview, [record, kind, score], [overview, table], api_name="draw_overview", **FAST)
    for refresh in (demo.load, ckpt.change):  # a heatmap from the first second, and for every new checkpoint
        refresh(compute_attention, [ckpt, text, target, user_models], [record, notice, kind, layer, head, files],
                api_visibility="private").then(draw_attention, draw_inputs, draw_outputs, api_visibility="private")
