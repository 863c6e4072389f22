"""The Attention tab's "What the heads write" (issue 42, item 4): the sparse features (an SAE on the layer's
concatenated head outputs) active at one position of the input the tab holds, which heads write each, where each
fires on held-out data and what it does to the logits; opening one shows where in this input it fires.

Computed only while the section is open, on the record's own input: one forward of the model reading the layer's z
and one SAE encode (transformer.interpretability.input_features); the top contexts were computed when the SAE was
made and stored beside it (feature_contexts), never in a request. Figures from visualize.features."""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from transformer.heads import AttentionKind, HeadId
from transformer.interpretability.feature_page import context_text
from transformer.interpretability.features import AttentionLayer
from transformer.interpretability.input_features import active_features, input_activations
from transformer.interpretability.patching_runs import token_name
from visualize.features import activation_strip, heads_bars
from visualize.sizes import box_width
from visualize.style import empty_curves
from visualize.text import html_text

from checks import UserError, check_index
from limits import ATTENTION_CAP, FEATURE_READINGS_KEPT, FEATURES_SHOWN
from store.catalogue import SHIPPED, ModelRef, model_ref
from store.gpu import gpu
from store.record_cache import RecordCache
from store.saes import sae_layers, sae_list, shipped_sae, shipped_unembedding
from store.sessions import browser_key
from tabs.attention.inside import selected_pattern
from tabs.figure_export import figure
from widgets.answers import Answer, Components, answered, named_outputs
from widgets.controls import Dropdown, index_control, index_slider
from widgets.errors import handler
from widgets.ui import FAST, open_states, separately, when_open

EXPLAINED = ("A sparse autoencoder (SAE) shipped with the model rewrites what the layer's heads write at each "
             "position (their outputs side by side, before W^O) as a few active features out of hundreds. For the "
             "position you pick: each active feature, how strongly it fires here, the held-out text where it "
             "fires most (the position in brackets), which heads write it (a bar per head: its share of the "
             "feature's decoder row) and, for the decoder, the tokens it pushes up and down directly. Open one to "
             "see where in this input it fires. In a context the brackets mark the token the position reads; the "
             "token after them is the one the decoder writes there (cross-attention's rows are labelled by it).")
COLUMNS = ["feature", "activation here", "heads (share)", "fires on held-out", "top held-out contexts",
           "logits up", "logits down"]
READINGS = RecordCache(FEATURE_READINGS_KEPT)


def no_sae(made_by: str, kind: str, layer: int) -> str:
    """Why there is nothing to show, in words, naming what has SAEs."""
    if made_by not in SHIPPED:
        return (f"No SAE for {made_by}: the lab ships SAEs only with its own checkpoints: {sae_list()}. Pick one "
                "of them in the checkpoint list.")
    have = ", ".join(f"{at.kind} layer {at.layer}" for at in sae_layers(made_by))
    if not have:
        return f"{made_by} ships no SAE. Checkpoints with SAEs: {sae_list()}."
    return (f"{made_by} ships no SAE for {kind} layer {layer}; it has one for {have}: pick one of them with "
            "Attention and Layer above.")


def sae_of(made_by, kind, layer) -> AttentionLayer | None:
    """The layer of the SAE the section reads, or None when the checkpoint ships none for it."""
    at = AttentionLayer(kind, layer)
    return at if made_by in SHIPPED and at in sae_layers(made_by) else None


@gpu(duration=10)
@handler
def reading_on_gpu(source: ModelRef, record, kind: str, layer: int):
    """(f (T, F) on the CPU, the model's tokenizer): the SAE's features at every position of the record's input."""
    model, tokenizer, _ = source.load()
    shipped = shipped_sae(source.name, kind, layer)
    sae = shipped.sae if model.device.type == "cpu" else copy.deepcopy(shipped.sae).to(model.device)
    return input_activations(model, sae, AttentionLayer(kind, layer), record.input_ids, record.target_ids).cpu()


@gpu(duration=10)
@handler
def active_on_gpu(source: ModelRef, kind: str, layer: int, f_t):
    """transformer.interpretability.input_features.active_features at one position (its logit effects read the
    model's unembedding, kept in float64 by store.saes)."""
    model, _, _ = source.load()
    shipped = shipped_sae(source.name, kind, layer)
    sae = shipped.sae if model.device.type == "cpu" else copy.deepcopy(shipped.sae).to(model.device)
    return active_features(model, sae, AttentionLayer(kind, layer), f_t, shipped.contexts, FEATURES_SHOWN,
                           unembedding=shipped_unembedding(source.name))


def _reading(made_by, record, kind, layer, request):
    """(f (T, F), the pattern's query tokens, the layer) of the record's input at `kind` layer `layer`, cached
    per record; UserError in words when no SAE is shipped for it."""
    pattern = selected_pattern(record, kind)
    L, _ = pattern.shape
    layer = check_index(layer, "layer", L)
    at = sae_of(made_by, pattern.kind, layer)
    if at is None:
        raise UserError(no_sae(made_by, pattern.kind, layer))
    if len(pattern.query_tokens) > ATTENTION_CAP:
        raise UserError(f"the input has {len(pattern.query_tokens)} positions here; the section reads at most "
                        f"{ATTENTION_CAP}: shorten it")
    source = model_ref(made_by, browser_key(request))
    f = READINGS.get(record, ("features", str(at.kind), at.layer),
                     lambda: reading_on_gpu(source, record, str(at.kind), at.layer))
    return f, pattern.query_tokens, at, source


def feature_rows(active, tokenizer, layer: AttentionLayer) -> pd.DataFrame:
    """The table of the features active at a position: one row each, as COLUMNS says."""
    rows = []
    for a in active:
        heads = ", ".join(f"{HeadId(layer.kind, layer.layer, h).label} {s:.0%}"
                          for h, s in sorted(enumerate(a.share), key=lambda p: -p[1]))
        contexts = " · ".join(context_text(tokenizer, c) for c in a.contexts[:3])
        effect = a.logit_effect
        up = ", ".join(token_name(tokenizer, t) for t, _ in effect.top) if effect else "—"
        down = ", ".join(token_name(tokenizer, t) for t, _ in effect.bottom) if effect else "—"
        rows.append([a.feature, round(a.activation, 3), heads, f"{a.frequency:.2%}", contexts, up, down])
    return pd.DataFrame(rows, columns=COLUMNS)


def feature_choice(feature: int, activation: float) -> str:
    return f"feature {feature} ({activation:.2f})"


@dataclass(frozen=True)
class FeaturesDrawn(Answer):
    """The section's note, the table of the features active at the position, their heads' bars, the choice of the
    feature to open and where it fires (widgets.answers: each field sets the section's component of its name)."""

    note: Any
    table: Any
    heads: Any
    opened: Any
    strip: Any


@handler
def draw_features(made_by, record, kind, layer, position, opened=None, shown=None, width=None,
                  request: gr.Request = None) -> FeaturesDrawn:
    """The section: a note, the table of the features active at `position`, their heads' bars, the choice of the
    feature to open (the one `opened` already, while it is active here; else the most active) and where it fires in
    this input. Nothing while the section is closed."""
    if shown is False or (record is None and shown):  # the page: closed, or a new input on its way (a demo's)
        return FeaturesDrawn(*[gr.skip()] * 5)
    if record is None:
        raise UserError("press Show attention first")
    pattern = selected_pattern(record, kind)
    at = sae_of(made_by, pattern.kind, check_index(layer, "layer", pattern.shape[0]))
    if at is None:
        return FeaturesDrawn(no_sae(made_by, pattern.kind, int(layer)), pd.DataFrame(columns=COLUMNS), None,
                             gr.update(choices=[], value=None), None)
    f, tokens, at, source = _reading(made_by, record, kind, layer, request)
    t = check_index(position, "position", len(tokens))
    active = active_on_gpu(source, str(at.kind), at.layer, f[t])
    _, tokenizer, _ = source.load()
    where = f"position {t} ({html_text(repr(tokens[t]))}), {at}"
    note = ("" if active else f"No feature of this SAE fires at {where}. ") + \
        ("The input was cut as the heatmaps say; the features are read on what the model read. "
         if record.truncated else "")
    heads = heads_bars([a.share for a in active], [f"f{a.feature} ({a.activation:.2f})" for a in active],
                       [HeadId(at.kind, at.layer, h).label for h in range(pattern.shape[1])],
                       title=f"Heads per feature at {t} ({html_text(repr(tokens[t]))})") if active else None
    choices = [(feature_choice(a.feature, a.activation), str(a.feature)) for a in active]  # a Dropdown sends text
    keep = [a.feature for a in active if str(a.feature) == str(opened)]
    chosen = (keep or [a.feature for a in active] or [None])[0]
    strip = _strip(f, tokens, at, chosen, t, width) if active else None
    return FeaturesDrawn(note, feature_rows(active, tokenizer, at), heads,
                         gr.update(choices=choices, value=None if chosen is None else str(chosen)), strip)


def _strip(f, tokens, at: AttentionLayer, feature: int, position: int, width):
    """Where `feature` fires along the layer's stream; cross-attention's rows are labelled by the token each
    position writes (as the heatmap's), self-attention's by the token it reads."""
    writes = at.kind == AttentionKind.CROSS
    return activation_strip(f[:, feature], tokens, title=f"Where feature {feature} of {at} fires in this input",
                            chosen=position, container_px=box_width(width, in_section=True) if width else None,
                            axis_title="position (the token it writes)" if writes else "position (the token it reads)")


@handler
def draw_strip(made_by, record, kind, layer, position, feature, shown=None, width=None,
               request: gr.Request = None):
    """Where one feature (the one opened) fires in this input: its activation at each position."""
    if shown is False:
        return gr.skip()
    pattern = selected_pattern(record, kind)
    at = sae_of(made_by, pattern.kind, check_index(layer, "layer", pattern.shape[0]))
    if at is None:  # the section's note says it too
        return empty_curves(no_sae(made_by, pattern.kind, int(layer)))
    if feature is None or feature == "":
        raise UserError("pick a feature to open (the features active at the position)")
    f, tokens, at, _ = _reading(made_by, record, kind, layer, request)
    if not (isinstance(feature, str) and feature.isdigit() and int(feature) < f.size(1)):
        raise UserError(f"feature: this SAE has features 0 to {f.size(1) - 1}, got {str(feature)[:20]!r}")
    feature = int(feature)
    return _strip(f, tokens, at, feature, check_index(position, "position", len(tokens)), width)


def section_positions(record, kind) -> int:
    """How many positions the section can read: the query rows of the record's `kind` (1 without a record)."""
    if record is None:
        return 1
    return len(selected_pattern(record, kind).query_tokens)


def build_features(demo, record, made_by, kind, layer, page_width):
    """The section, under the heatmaps of the Attention tab; returns its components by name (for the demos)."""
    with gr.Accordion("What the heads write: sparse features", open=False,
                      elem_id="att-features-section") as section:
        gr.Markdown(EXPLAINED)
        note = gr.Markdown(elem_id="features-note")
        position = index_control(ATTENTION_CAP, label="Position (row of the heatmap)", elem_id="features-position")
        table = gr.Dataframe(headers=COLUMNS, label="Features active at the position", wrap=True,
                             elem_id="features-table", max_height=420)
        heads = figure("Which heads write them", "features-heads")
        opened = Dropdown(choices=[], value=None, label="Open a feature: where it fires in this input",
                          elem_id="features-open")
        strip = figure("Where the feature fires", "features-strip")
    [shown] = open_states(demo, section)
    own = Components(section=section, shown=shown, position=position, opened=opened, note=note, table=table,
                     heads=heads, strip=strip)
    when_open(section, record.change, kind.change, layer.change, position.change)(
        answered(own, draw_features), [made_by, record, kind, layer, position, opened, shown, page_width],
        named_outputs(own, FeaturesDrawn), api_name="what_heads_write", **FAST)
    separately(opened.input)(draw_strip, [made_by, record, kind, layer, position, opened, shown, page_width], strip,
                             api_name="feature_strip", **FAST)
    when_open(section, record.change, kind.change)(
        lambda r, k, t: gr.update() if r is None else index_slider(section_positions(r, k), t), [record, kind, position],
        position,
        queue=False, api_visibility="private")
    return own
