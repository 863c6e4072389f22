"""Positional encoding tab: the sinusoidal table, its waves, position similarity, and a learned table."""
from __future__ import annotations

import gradio as gr

import visualize as viz
from transformer.embeddings import sinusoidal_table

from .common import FAST, SHIPPED, UserError, handler, resolve, shipped_model


def parse_dims(dims: str, d_model: int) -> list[int]:
    try:
        values = [int(x) for x in str(dims).replace(",", " ").split()]
    except ValueError:
        raise UserError(f"dimensions must be whole numbers separated by commas, got {dims!r}") from None
    bad = [v for v in values if not 0 <= v < d_model]
    if not values or bad:
        raise UserError(f"pick dimensions between 0 and {d_model - 1} (got {dims!r})")
    return values[:8]


@handler
def draw_positional(d_model, length, dims, ckpt, user_models):
    d_model, length = int(d_model), int(length)
    table = sinusoidal_table(length, d_model)
    matrix = viz.pe_matrix(table, title=f"Sinusoidal encoding, {length} positions x {d_model} dimensions")
    waves = viz.pe_waves(table, parse_dims(dims, d_model), title="Chosen dimensions over position")
    similarity = viz.pe_similarity(table, title="Dot product between positions")
    model, _, _ = resolve(ckpt, user_models)
    if model.config.pos_encoding != "learned":
        learned_ckpts = [n for n in SHIPPED if shipped_model(n)[0].config.pos_encoding == "learned"]
        if not learned_ckpts:
            return matrix, waves, similarity, viz.empty_curves("No checkpoint with learned positions"), ""
        ckpt, model = learned_ckpts[0], shipped_model(learned_ckpts[0])[0]
    learned = model.pos_encoding.table.detach().cpu()
    compare = viz.pe_side_by_side(sinusoidal_table(*learned.shape), learned,
                                  title=f"Fixed vs learned ({ckpt}, d_model {learned.shape[1]})")
    return matrix, waves, similarity, compare, f"Learned encoding of **{ckpt}** beside the sinusoidal table."


def captioned_plot(label: str, caption: str) -> gr.Plot:
    """A plot with one sentence under it saying what to look for."""
    with gr.Column():
        plot = gr.Plot(show_label=False, label=label, elem_id="pe-" + label.split()[0].lower())
        gr.Markdown(caption)
    return plot


def build_positional_tab(demo, ckpt, user_models):
    with gr.Tab("Positional encoding"):
        with gr.Row():
            d_model = gr.Slider(8, 512, value=128, step=2, label="d_model")
            length = gr.Slider(8, 512, value=100, step=1, label="Positions")
            dims = gr.Textbox(value="0, 1, 6, 7, 40", label="Dimensions to plot as waves")
        with gr.Row():
            matrix = captioned_plot("PE matrix", "Each row is a position's vector. Left columns wave fast, right "
                                    "columns slowly: together they give every position a unique pattern.")
            waves = captioned_plot("Waves", "Dimension 2i is a sine, 2i+1 the cosine of the same frequency; the "
                                   "wavelength grows from 2π to 10000·2π across the dimensions.")
        with gr.Row():
            similarity = captioned_plot("Similarity", "Nearby positions have similar vectors (bright band on the "
                                        "diagonal), and the similarity depends only on the distance between them.")
            compare = captioned_plot("Learned vs sinusoidal", "A learned table starts as noise and is shaped by "
                                     "training; look for smooth stripes that echo the sinusoids' waves.")
        compare_note = gr.Markdown()
    inputs = [d_model, length, dims, ckpt, user_models]
    outputs = [matrix, waves, similarity, compare, compare_note]
    demo.load(draw_positional, inputs, outputs, api_name="positional")
    for event in (d_model.change, length.change, dims.submit):
        event(draw_positional, inputs, outputs, api_visibility="private", **FAST)
