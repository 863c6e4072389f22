"""Positional encoding tab: the sinusoidal table, its waves, position similarity, and a learned table."""
from __future__ import annotations

import gradio as gr

import visualize as viz
from transformer.embeddings import sinusoidal_table

from .common import FAST, SHIPPED, Slider, UserError, browser_key, check_number, handler, resolve, shipped_model


LEARNED_ROWS = 256  # positions of a learned table drawn beside the sinusoids


def parse_dims(dims, d_model: int) -> tuple[list[int], str]:
    """The dimensions to draw as waves (at most 8) and a sentence about any that do not exist for this d_model."""
    if not isinstance(dims, str):
        raise UserError("dimensions must be whole numbers separated by commas")
    try:
        values = [int(x) for x in dims.replace(",", " ").split()]
    except ValueError:
        raise UserError(f"dimensions must be whole numbers separated by commas, got {dims[:40]!r}") from None
    kept = [v for v in values if 0 <= v < d_model][:8]
    dropped = [v for v in values if not 0 <= v < d_model]
    if not kept:
        raise UserError(f"pick dimensions between 0 and {d_model - 1} (got {dims[:40]!r})")
    note = (f"Dimension{'s' if len(dropped) > 1 else ''} {', '.join(map(str, dropped))} "
            f"{'do' if len(dropped) > 1 else 'does'} not exist with d_model {d_model}: not drawn. ") if dropped else ""
    return kept, note


@handler
def draw_positional(d_model, length, dims, ckpt, key, request: gr.Request = None):
    d_model = check_number(d_model, "d_model", 8, 512, integer=True)
    length = check_number(length, "Positions", 8, 512, integer=True)
    chosen, note = parse_dims(dims, d_model)
    table = sinusoidal_table(length, d_model)
    matrix = viz.pe_matrix(table, title=f"Sinusoidal encoding, {length} positions x {d_model} dimensions")
    waves = viz.pe_waves(table, chosen, title="Chosen dimensions over position")
    similarity = viz.pe_similarity(table, title="Dot product between positions")
    model, _, _ = resolve(ckpt, browser_key(key, request))
    if model.config.pos_encoding != "learned":
        learned_ckpts = [n for n in SHIPPED if shipped_model(n)[0].config.pos_encoding == "learned"]
        if not learned_ckpts:
            return matrix, waves, similarity, viz.empty_curves("No checkpoint with learned positions"), note
        ckpt, model = learned_ckpts[0], shipped_model(learned_ckpts[0])[0]
    learned = model.pos_encoding.table.detach().cpu()[:LEARNED_ROWS]  # GPT-2 has 1024: the first ones show it
    compare = viz.pe_side_by_side(sinusoidal_table(*learned.shape), learned,
                                  title=f"Fixed vs learned ({ckpt}, d_model {learned.shape[1]}, "
                                        f"positions 0-{learned.shape[0] - 1})")
    return matrix, waves, similarity, compare, note + f"Learned encoding of **{ckpt}** beside the sinusoidal table."


def clear_positional():
    """Before a redraw: no figure or note of the previous settings stays on screen if these ones fail."""
    return None, None, None, None, ""


def captioned_plot(label: str, caption: str) -> gr.Plot:
    """A plot with one sentence under it saying what to look for."""
    with gr.Column():
        plot = gr.Plot(show_label=False, label=label, elem_id="pe-" + label.split()[0].lower())
        gr.Markdown(caption)
    return plot


def build_positional_tab(demo, ckpt, key):
    with gr.Tab("Positional encoding", id="positional"):
        with gr.Row():
            d_model = Slider(8, 512, value=128, step=2, label="d_model")
            length = Slider(8, 512, value=100, step=1, label="Positions")
            dims = gr.Textbox(value="0, 1, 6, 7, 40", label="Dimensions to plot as waves")
        with gr.Row():
            matrix = captioned_plot("PE matrix", "Each row is a position's vector. Left columns wave fast, right "
                                    "columns slowly: together they give every position a unique pattern.")
            waves = captioned_plot("Waves", "Dimension 2i is a sine, 2i+1 the cosine of the same frequency; the "
                                   "wavelength grows from 2π to 10000·2π across the dimensions.")
        with gr.Row():
            similarity = captioned_plot("Similarity", "Nearby positions have similar vectors (the dark red band "
                                        "along the diagonal), and the similarity depends only on the distance "
                                        "between them.")
            compare = captioned_plot("Learned vs sinusoidal", "A learned table starts as noise and is shaped by "
                                     "training; look for smooth stripes that echo the sinusoids' waves.")
        compare_note = gr.Markdown(elem_id="pe-note")
    inputs = [d_model, length, dims, ckpt, key]
    outputs = [matrix, waves, similarity, compare, compare_note]
    demo.load(draw_positional, inputs, outputs, api_name="positional")
    for event in (d_model.change, length.change, dims.submit):
        event(clear_positional, None, outputs, queue=False, api_visibility="private").then(
            draw_positional, inputs, outputs, api_visibility="private", **FAST)
    return dict(d_model=d_model, length=length, dims=dims)
