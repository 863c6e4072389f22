"""Positional encoding tab: the sinusoidal table, its waves, position similarity, and a learned table; then the
relative schemes, RoPE (rotation angles, score against distance) and ALiBi (the bias matrix of every head)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr
import torch

import visualize as viz
from transformer.positions.alibi import alibi_bias, alibi_slopes
from transformer.embeddings import sinusoidal_table
from transformer.positions.rotary import rope_angles, rotated_dot_products

from checks import UserError, check_number
from limits import LEARNED_ROWS, POSITIONAL
from store.catalogue import SHIPPED, resolve, shipped_model
from store.sessions import browser_key
from tabs.figure_export import figure
from widgets.answers import Answer, Components, answered, named_outputs
from widgets.controls import Slider
from widgets.errors import handler
from widgets.ui import FAST, Followers, separately, when_open


PE_MATRIX = "pe-matrix"  # the sinusoidal matrix's elem_id: the figure "Sinusoid waves" is about (tabs.demos)
POSITION_SCHEMES = {"sinusoidal": "fixed sinusoidal positions added to its embeddings",
                    "learned": "learned positions added to its embeddings",
                    "rope": "RoPE (its queries and keys are rotated)",
                    "alibi": "ALiBi (each head adds a linear bias to its scores)"}


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


def sinusoids(d_model, length) -> tuple[torch.Tensor, object]:
    """(the sinusoidal table, its matrix figure) for the tab's d_model and Positions, checked: the figure
    "Sinusoid waves" is about (PE_MATRIX), which a teacher can also show a class (tabs.classroom)."""
    d_model = check_number(d_model, "d_model", *POSITIONAL["d_model"], integer=True)
    length = check_number(length, "Positions", *POSITIONAL["positions"], integer=True)
    table = sinusoidal_table(length, d_model)  # (length, d_model)
    return table, viz.pe_matrix(table, title=f"Sinusoidal encoding, {length} positions x {d_model} dimensions")


@dataclass(frozen=True)
class PositionalFigures(Answer):
    """The sinusoidal table, its waves, the similarity between positions, the learned table beside it and the note
    (widgets.answers: each field sets the tab's component of its name)."""

    matrix: Any
    waves: Any
    similarity: Any
    compare: Any
    compare_note: Any


@handler
def draw_positional(d_model, length, dims, ckpt, request: gr.Request = None) -> PositionalFigures:
    table, matrix = sinusoids(d_model, length)
    length, d_model = table.shape
    chosen, note = parse_dims(dims, d_model)
    waves = viz.pe_waves(table, chosen, title="Chosen dimensions over position")
    similarity = viz.pe_similarity(table, title="Dot product between positions")
    model, _, _ = resolve(ckpt, browser_key(request))
    if model.config.pos_encoding != "learned":
        learned_ckpts = [n for n in SHIPPED if shipped_model(n)[0].config.pos_encoding == "learned"]
        if not learned_ckpts:
            return PositionalFigures(matrix, waves, similarity,
                                     viz.empty_curves("No checkpoint with learned positions"), note)
        ckpt, model = learned_ckpts[0], shipped_model(learned_ckpts[0])[0]
    learned = model.pos_encoding.table.detach().cpu()[:LEARNED_ROWS]
    compare = viz.pe_side_by_side(sinusoidal_table(*learned.shape), learned,
                                  title=f"Fixed vs learned ({ckpt}, d_model {learned.shape[1]}, "
                                        f"positions 0-{learned.shape[0] - 1})")
    return PositionalFigures(matrix, waves, similarity, compare,
                             note + f"Learned encoding of **{ckpt}** beside the sinusoidal table.")


def clear_positional() -> PositionalFigures:
    """Before a redraw: no figure or note of the previous settings stays on screen if these ones fail."""
    return PositionalFigures(None, None, None, None, "")


@dataclass(frozen=True)
class RopeFigures(Answer):
    """RoPE's rotation angles and its score against distance (widgets.answers)."""

    rope_angles: Any
    rope_distance: Any


@handler
def draw_rope(d_k, length) -> RopeFigures:
    """RoPE's rotation angles for `length` positions and the rotated score against distance, for a head of d_k."""
    d_k = check_number(d_k, "d_k", *POSITIONAL["d_k"], integer=True)
    if d_k % 2:
        raise UserError(f"RoPE rotates pairs of dimensions: d_k must be even, got {d_k}")
    length = check_number(length, "Positions", *POSITIONAL["positions"], integer=True)
    angles = rope_angles(torch.arange(length), d_k)  # (T, d_k / 2)
    distances = torch.arange(-(length - 1), length)  # (2T - 1,): every key - query distance among T positions
    ones = torch.ones(d_k)
    q, k = torch.randn(2, d_k, generator=torch.Generator().manual_seed(0))  # (d_k,) each, the same every time
    curves = {"q = k = (1, …, 1)": rotated_dot_products(ones, ones, distances),
              "random q and k": rotated_dot_products(q, k, distances)}
    return RopeFigures(viz.rope_angles_figure(angles, title=f"RoPE angles, {length} positions x {d_k // 2} pairs"),
                       viz.rope_distance_figure(distances, curves, title=f"Rotated q·k against distance, d_k {d_k}"))


@handler
def draw_alibi(n_heads, length, causal):
    """ALiBi's bias matrix of every head over `length` positions; future keys grey when `causal`."""
    n_heads = check_number(n_heads, "Heads", *POSITIONAL["heads"], integer=True)
    length = check_number(length, "ALiBi positions", *POSITIONAL["alibi_positions"], integer=True)
    if not isinstance(causal, bool):
        raise UserError(f"Causal must be true or false, got {str(causal)[:40]!r}")
    slopes = alibi_slopes(n_heads)  # (H,)
    positions = torch.arange(length)
    bias = alibi_bias(slopes, positions, positions)  # (H, T, T)
    return viz.alibi_bias_figure(bias, slopes, causal=causal,
                                 title=f"ALiBi bias, {n_heads} head{'s' if n_heads > 1 else ''}, "
                                       f"{length} positions")


@dataclass(frozen=True)
class Sizes(Answer):
    """The RoPE and ALiBi controls' values from a checkpoint (its d_k and number of heads) and their notes."""

    d_k: Any
    n_heads: Any
    rope_note: Any
    alibi_note: Any


@handler
def checkpoint_sizes(ckpt, request: gr.Request = None) -> Sizes:
    """The selected checkpoint's d_k and number of heads, as the RoPE and ALiBi controls' values, and a note."""
    model, _, _ = resolve(ckpt, browser_key(request))
    cfg = model.config
    d_k = min(POSITIONAL["d_k"][1], max(POSITIONAL["d_k"][0], cfg.d_k - cfg.d_k % 2))
    heads = min(POSITIONAL["heads"][1], cfg.n_heads)
    uses = POSITION_SCHEMES.get(cfg.pos_encoding, f"{cfg.pos_encoding} positions")
    rope_note = (f"d_k starts at **{ckpt}**'s ({cfg.d_k}"
                 f"{'' if d_k == cfg.d_k else f'; {d_k} drawn'}); that model uses {uses}.")
    alibi_note = (f"Heads start at **{ckpt}**'s ({cfg.n_heads}"
                  f"{'' if heads == cfg.n_heads else f'; the first {heads} drawn'}); that model uses {uses}.")
    return Sizes(d_k, heads, rope_note, alibi_note)


def captioned_plot(label: str, caption: str, elem_id: str | None = None) -> gr.Plot:
    """A plot with one sentence under it saying what to look for."""
    with gr.Column():
        plot = figure(label, elem_id or "pe-" + label.split()[0].lower())
        gr.Markdown(caption)
    return plot


def build_rope_section():
    """RoPE's controls and figures, in a closed accordion; returns them."""
    with gr.Accordion("RoPE: rotary position embedding", open=False, elem_id="pe-rope-section") as section:
        gr.Markdown("RoPE (Su et al. 2021, used by LLaMA and most recent models) adds nothing to the embeddings. "
                    "It rotates every query and key of a head: dimension pair i (2i, 2i+1) at position m turns by "
                    "the angle m·θᵢ, with θᵢ = 10000^(−2i/d_k), the sinusoidal table's frequencies.")
        note = gr.Markdown(elem_id="pe-rope-note")
        with gr.Row():
            d_k = Slider(*POSITIONAL["d_k"], value=32, step=2, label="d_k (size of one head)", elem_id="pe-rope-dk")
            length = Slider(*POSITIONAL["positions"], value=100, step=1, label="Positions", elem_id="pe-rope-length")
        with gr.Row():
            angles = captioned_plot("RoPE angles", "Colour is the angle mod 2π: a full turn comes back to the same "
                                    "colour. The first pairs spin fast (a new colour every row), the last ones "
                                    "barely turn over hundreds of positions.", elem_id="pe-rope-angles")
            distance = captioned_plot("RoPE distance",
                                      "Rotations compose: ⟨R_m q, R_n k⟩ = ⟨q, R_(n−m) k⟩, so the score "
                                      "depends only on the distance n − m, wherever the two tokens sit. With "
                                      "q = k it is largest at distance 0 and decays, oscillating, further away.",
                                      elem_id="pe-rope-distance")
    return section, d_k, length, angles, distance, note


def build_alibi_section():
    """ALiBi's controls and figure, in a closed accordion; returns them."""
    with gr.Accordion("ALiBi: attention with linear biases", open=False, elem_id="pe-alibi-section") as section:
        gr.Markdown("ALiBi (Press, Smith and Lewis 2022) adds no position vector at all: head h adds "
                    "−m_h·|i − j| to the score of query i (a row) for key j (a column), before the softmax. The "
                    "slopes m_h form a geometric sequence (with H heads, each is the previous one times 2^(−8/H)), "
                    "so the first heads are steep and look nearby, the last nearly flat and look far.")
        note = gr.Markdown(elem_id="pe-alibi-note")
        with gr.Row():
            n_heads = Slider(*POSITIONAL["heads"], value=4, step=1, label="Heads", elem_id="pe-alibi-heads")
            length = Slider(*POSITIONAL["alibi_positions"], value=12, step=1, label="Positions",
                            elem_id="pe-alibi-length")
            causal = gr.Checkbox(value=True, label="Causal (a decoder: future keys masked)", elem_id="pe-alibi-causal")
        bias = captioned_plot("ALiBi bias", "Darker red = a larger penalty, growing linearly with the distance from "
                              "the diagonal; one colour scale for every head, so the steep first heads stand out. "
                              "Grey cells are future keys, masked in a decoder.", elem_id="pe-alibi")
    return section, n_heads, length, causal, bias, note


def build_positional_tab(demo, ckpt, followers: Followers):
    with gr.Tab("Positional encoding", id="positional"):
        with gr.Row():
            d_model = Slider(*POSITIONAL["d_model"], value=128, step=2, label="d_model")
            length = Slider(*POSITIONAL["positions"], value=100, step=1, label="Positions")
            dims = gr.Textbox(value="0, 1, 6, 7, 40", label="Dimensions to plot as waves")
        with gr.Row():
            matrix = captioned_plot("PE matrix", "Each row is a position's vector. Left columns wave fast, right "
                                    "columns slowly: together they give every position a unique pattern.",
                                    elem_id=PE_MATRIX)
            waves = captioned_plot("Waves", "Dimension 2i is a sine, 2i+1 the cosine of the same frequency; the "
                                   "wavelength grows from 2π to 10000·2π across the dimensions.")
        with gr.Row():
            similarity = captioned_plot("Similarity", "Nearby positions have similar vectors (the dark red band "
                                        "along the diagonal), and the similarity depends only on the distance "
                                        "between them.")
            compare = captioned_plot("Learned vs sinusoidal", "A learned table starts as noise and is shaped by "
                                     "training. Small models trained briefly keep most of that noise: compare its "
                                     "rows with the sinusoids' regular waves rather than expecting the same stripes.")
        compare_note = gr.Markdown(elem_id="pe-note")
        rope_section, d_k, rope_length, rope_plot, distance_plot, rope_note = build_rope_section()
        alibi_section, n_heads, alibi_length, causal, alibi_plot, alibi_note = build_alibi_section()
    tab = Components(matrix=matrix, waves=waves, similarity=similarity, compare=compare, compare_note=compare_note,
                     rope_angles=rope_plot, rope_distance=distance_plot, d_k=d_k, n_heads=n_heads,
                     rope_note=rope_note, alibi_note=alibi_note)
    inputs = [d_model, length, dims, ckpt]
    outputs = named_outputs(tab, PositionalFigures)
    # the progress on the note, not the four figures: gradio's page re-reads every component that ever showed one at
    # each later status update (widgets.ui.progress_only_where_drawn)
    demo.load(answered(tab, draw_positional), inputs, outputs, api_name="positional", show_progress_on=[compare_note])
    for event in (d_model.change, length.change, dims.submit):
        event(answered(tab, clear_positional), None, outputs, queue=False, api_visibility="private").then(
            answered(tab, draw_positional), inputs, outputs, api_visibility="private", **FAST)
    # The RoPE and ALiBi controls take the checkpoint's sizes; their figures are drawn when a section opens or a
    # control changes, not on page load.
    separately(demo.load)(answered(tab, checkpoint_sizes), ckpt, named_outputs(tab, Sizes), api_visibility="private",
                          **FAST)
    followers.add(checkpoint_sizes, tab, Sizes)
    # only while their section is open: a new checkpoint's sizes redraw nothing hidden (widgets.ui.when_open)
    when_open(rope_section, d_k.change, rope_length.change)(
        answered(tab, draw_rope), [d_k, rope_length], named_outputs(tab, RopeFigures), api_name="rope", **FAST)
    when_open(alibi_section, n_heads.change, alibi_length.change, causal.change)(
        draw_alibi, [n_heads, alibi_length, causal], alibi_plot, api_name="alibi", **FAST)
    return dict(d_model=d_model, length=length, dims=dims, d_k=d_k, n_heads=n_heads, matrix=matrix)
