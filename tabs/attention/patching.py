"""The Attention tab's patching section: what a head *does* on a minimal pair, not only where it looks.

The clean run is the tab's input (A), the corrupted run the second input of "Two inputs side by side" (B), read by
the same model (a translation model's decoder reads A's target in both runs). The numbers come from
transformer.interpretability (activation_patching, logit_attribution, path_patching, attribution_patching), the
figures from visualize.patching_grid. Computed only while the section is open, cached per record.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

import visualize as viz
from transformer.encoding import target_tokens
from transformer.heads import AttentionKind, HeadId
from transformer.interpretability.activation_patching import head_patching, residual_patching
from transformer.interpretability.attribution_patching import attribution_patching
from transformer.interpretability.logit_attribution import direct_logit_attribution
from transformer.interpretability.patching_demos import diverging_position
from transformer.interpretability.patching_metric import logit_difference
from transformer.interpretability.patching_runs import attention_kind, minimal_pair, run_pair, stack_layers
from transformer.interpretability.path_patching import path_patching, path_patching_into, receivers

from checks import UserError
from limits import ABLATION_CONCURRENCY, MAX_PROMPT_CHARS, PATCHING, PATCHINGS_KEPT
from store.catalogue import ModelRef, model_ref
from store.gpu import gpu
from store.record_cache import RecordCache
from store.sessions import browser_key
from visualize.text import markdown_text
from tabs.attention.patching_figures import boxes, grid_figure, heads_figure, paths_figure
from tabs.figure_export import figure
from widgets.answers import Answer, answered, named_outputs
from widgets.controls import Number
from widgets.errors import handler
from widgets.ui import FAST, open_states, when_open

PATCHING_EXPLAINED = (
    "**Clean** = the input above (A), **corrupted** = the second input of *Two inputs side by side* (B, same number "
    "of tokens). The metric is the logit difference of two answer tokens (by default each run's top token). Each "
    "cell runs the corrupted input with one activation copied from the clean run: **1 = the clean run's answer is "
    "back, 0 = nothing changed** (red: towards the clean answer, blue: away from it). Attention weights say where a "
    "head looks; patching says whether what it moves changes the answer.")
DLA_EXPLAINED = ("**Direct logit attribution**: each head's output read straight through the unembedding, in logits "
                 "of the difference, with the final LayerNorm's scale frozen at the clean run's (the usual "
                 "convention). **Path patching**: only the path from one head into another head's query, key or "
                 "value is patched (NaN, blank: no such path).")
NO_PAIR = "Type a second input in *Two inputs side by side* and press Compare: it is the corrupted run."
PATCHINGS = RecordCache(PATCHINGS_KEPT)


def _pair_and_metric(model, tok, clean, corrupted, target, answer, other, position):
    """The library's PairRun (the pair's two inputs run once, which every grid and path of the click reads) and
    LogitDifference from plain values (answers as token text, '' = top token; position -1 = the last, or for an
    encoder-decoder the first where the runs' top tokens differ)."""
    pair = run_pair(model, minimal_pair(model, list(clean), list(corrupted),
                                        list(target) if target is not None else None, tokenizer=tok))
    ids = []
    for name, text in (("answer", answer), ("other answer", other)):
        token = target_tokens(tok, text) if text else []  # what the decoder writes: Marian's target.spm
        if text and len(token) != 1:
            raise ValueError(f"the {name} {text!r} is {len(token)} tokens for this model; type one token")
        ids.append(token[0] if token else None)
    T = pair.pair.length("decoder")
    if position == -1:
        position = diverging_position(model, pair) if pair.pair.encoder is not None else T - 1
    if not 0 <= position < T:
        raise ValueError(f"position: the decoder reads {T} positions (0 to {T - 1}), got {position}")
    return pair, logit_difference(model, pair, *ids, position=position)


@gpu(duration=60)
@handler
def grids_on_gpu(source: ModelRef, clean, corrupted, target, answer, other, position, kind) -> dict:
    """The residual grid and the heads grid of `kind` (plain values out), or {"refused": the reason in words}."""
    model, tok, _ = source.load()
    try:
        pair, metric = _pair_and_metric(model, tok, clean, corrupted, target, answer, other, position)
        kind = attention_kind(model, kind)
        stack = "encoder" if pair.pair.encoder is not None else "decoder"
        cells = stack_layers(model, stack) * pair.pair.length(stack)
        if cells > PATCHING["residual_cells"]:
            raise ValueError(f"residual patching here takes {cells} patched runs (layers x positions); the app runs "
                             f"at most {PATCHING['residual_cells']}: use a shorter input")
        true = kind.n_layers(model.config) * model.config.n_heads <= PATCHING["true_heads"]
        heads = head_patching(model, pair, metric, kind) if true else attribution_patching(model, pair, metric)[
            str(kind)]
        return dict(metric=metric.describe(tok), position=metric.position, answers=(metric.answer, metric.other),
                    residual=residual_patching(model, pair, metric, stack), heads=heads, approximate=not true)
    except ValueError as e:
        return {"refused": str(e)}


def _paths(model, kind, layer, into: bool) -> int:
    """How many (head, input) paths path patching measures for a head of `kind` at `layer`, either way."""
    cfg, H = model.config, model.config.n_heads
    if into:
        return sum(H for k in AttentionKind.of(cfg) for i in range(k.n_layers(cfg))
                   for rk, ri, _ in receivers(model, k, i) if (rk, ri) == (kind, layer))
    return len(receivers(model, kind, layer)) * H


@gpu(duration=60)
@handler
def head_on_gpu(source: ModelRef, clean, corrupted, target, answer, other, position, kind, layer, head) -> dict:
    """One head's direct logit attribution (every head of its kind) and its path-patching partners both ways;
    each part a value or the reason in words it was refused."""
    model, tok, _ = source.load()
    out = {}
    try:
        pair, metric = _pair_and_metric(model, tok, clean, corrupted, target, answer, other, position)
        kind = attention_kind(model, kind)
    except ValueError as e:
        return {"refused": str(e)}
    try:
        dla = direct_logit_attribution(model, pair, metric)
        if str(kind) not in dla.heads:
            raise ValueError(f"{kind} heads write into the encoder's stream, not the decoder's: they have no direct "
                             "effect on the logits (choose decoder self or cross)")
        out["dla"] = (dla.heads[str(kind)], dla.logit_difference)
    except ValueError as e:
        out["dla"] = str(e)
    for name, into, fn in (("senders", True, path_patching_into), ("receivers", False, path_patching)):
        try:
            paths = _paths(model, kind, layer, into)
            if paths > PATCHING["path_cells"]:
                raise ValueError(f"{paths} paths {'into' if into else 'from'} this head; the app measures at most "
                                 f"{PATCHING['path_cells']}: choose a head in a {'earlier' if into else 'later'} "
                                 "layer")
            out[name] = fn(model, pair, metric, HeadId(kind, layer, head))
        except ValueError as e:
            out[name] = str(e)
    return out


def pair_inputs(record, record_b, answer, other, position):
    """The plain values both computations take, checked: (clean, corrupted, target, answer, other, position)."""
    for name, text in (("answer", answer), ("other answer", other)):
        if not isinstance(text, str) or len(text) > MAX_PROMPT_CHARS:
            raise UserError(f"the {name} must be a token's text (empty: the run's top token)")
    try:
        position = int(position if position is not None else -1)
    except (TypeError, ValueError):
        raise UserError(f"position must be a whole number (-1: automatic), got {str(position)[:20]!r}") from None
    target = tuple(record.target_ids) if record.target_ids is not None else None
    return tuple(record.input_ids), tuple(record_b.input_ids), target, answer, other, position


def pair_grids(source: ModelRef, record, args: tuple, kind) -> tuple[str, dict]:
    """(the kind patched: `kind`, or the record's first when it has no such kind; its grids as grids_on_gpu gives
    them) for the pair's checked `args` (_inputs), computed once per record and inputs (PATCHINGS)."""
    kind = str(AttentionKind.parse(kind)) if kind in record.patterns else record.kinds[0]
    return kind, PATCHINGS.get(record, ("grids", kind) + args[1:], lambda: grids_on_gpu(source, *args, kind))


@dataclass(frozen=True)
class PatchSection:
    """The section's components by name (a Patched answer's fields set those of their names: widgets.answers)."""

    section: Any
    shown: Any
    answer: Any
    other: Any
    position: Any
    note: Any
    residual: Any
    heads: Any
    dla: Any
    into: Any
    out_of: Any
    head_note: Any


@dataclass(frozen=True)
class Patched(Answer):
    """What draw_patching answers: the metric's note, the residual grid, the heads grid, the direct logit
    attribution, the paths into the head and out of it, the head in words."""

    note: Any
    residual: Any = None
    heads: Any = None
    dla: Any = None
    into: Any = None
    out_of: Any = None
    head_note: Any = ""


def draw_patching(made_by, record, record_b, kind, layer, head, answer="", other="", position=-1, shown=None,
                  width=None, request: gr.Request = None) -> Patched:
    """The section's figures and words (Patched); nothing drawn while the section is closed in the page. On a page
    `width` px wide the residual grid takes the section's width, the others half of it (all of it on a phone),
    each cell readable."""
    if shown is False:
        return Patched(*(gr.skip(),) * 7)
    if record is None or record_b is None:  # a new input is on its way (a demo clears the record first)
        return Patched(("Press Show attention first. " if record is None else "") + NO_PAIR)
    args = pair_inputs(record, record_b, answer, other, position)
    source = model_ref(made_by, browser_key(request))
    kind, grids = pair_grids(source, record, args, kind)
    if "refused" in grids:
        return Patched(f"**Cannot patch:** {markdown_text(grids['refused'])}")
    how = "attribution patching (a gradient estimate)" if grids["approximate"] else "activation patching"
    note = (f"Metric: **{markdown_text(grids['metric'])}**. Heads by {how}; the selected head is outlined. "
            f"Patching tells which parts carry the difference; not how they compute it.")
    full, half = boxes(width)
    residual = grid_figure(grids["residual"], "Residual stream patched at one position", "recovered (1 = clean)",
                            full)
    heads, layer, head = heads_figure(grids, kind, layer, head, half)
    L, H = grids["heads"].values.shape
    one = PATCHINGS.get(record, ("head", kind, layer, head) + args[1:],
                        lambda: head_on_gpu(source, *args, kind, layer, head))
    label = HeadId(kind, layer, head)
    words = [f"**Head {label}**: patched alone it recovers **{float(grids['heads'].values[layer, head]):.3f}**."]
    if isinstance(one["dla"], str):
        dla, words = None, words + [f"Direct logit attribution: {markdown_text(one['dla'])}"]
    else:
        values, total = one["dla"]
        hover = [[f"layer {i}, head {h}: {float(values[i, h]):+.3f} logits directly" for h in range(H)]
                 for i in range(L)]
        dla = viz.patching_grid(values.tolist(), [str(i) for i in range(L)], [str(h) for h in range(H)], hover,
                                f"Direct logit attribution ({kind})", "logits of the difference", row_title="layer",
                                column_title="head", chosen=(layer, head), container_px=half)
        words.append(f"Directly it adds **{float(values[layer, head]):+.3f}** of the clean run's logit difference "
                     f"{total:.3f}.")
    figures = []
    for name, title in (("senders", f"Paths from earlier heads into {label}"), ("receivers", f"Paths from {label} "
                                                                                            "into later heads")):
        if isinstance(one[name], str):
            figures.append(None)
            words.append(f"Path patching ({'into' if name == 'senders' else 'from'} the head): "
                         f"{markdown_text(one[name])}")
        else:
            figures.append(paths_figure(one[name], title, half))
    return Patched(note, residual, heads, dla, *figures, " ".join(words))


def build_patching(demo, record, record_b, made_by, kind, layer, head, page_width):
    """The section, under "Two inputs side by side" in the Attention tab."""
    with gr.Accordion("What a head does: patching the two inputs", open=False,
                      elem_id="att-patch-section") as section:
        gr.Markdown(PATCHING_EXPLAINED)
        with gr.Row(equal_height=True):
            answer = gr.Textbox(label="Answer token (empty: the clean run's top token)", max_length=MAX_PROMPT_CHARS,
                                elem_id="patch-answer")
            other = gr.Textbox(label="Other token (empty: the corrupted run's top token)",
                               max_length=MAX_PROMPT_CHARS, elem_id="patch-other")
            position = Number(-1, precision=0, label="Position (-1: the last; translation: where the runs "
                                                     "first differ)", elem_id="patch-position")
            run = gr.Button("Patch", elem_id="patch-run", min_width=80)
        note = gr.Markdown(elem_id="patch-note")
        residual = figure("Residual stream", "patch-residual")
        gr.Markdown(DLA_EXPLAINED)
        head_note = gr.Markdown(elem_id="patch-head-note")
        with gr.Row():
            heads = figure("Heads", "patch-heads")
            dla = figure("Direct logit attribution", "patch-dla")
        with gr.Row():
            senders = figure("Paths into the head", "patch-into")
            receivers_ = figure("Paths from the head", "patch-from")
    [shown] = open_states(demo, section)
    patch = PatchSection(section=section, shown=shown, answer=answer, other=other, position=position, note=note,
                         residual=residual, heads=heads, dla=dla, into=senders, out_of=receivers_,
                         head_note=head_note)
    when_open(section, record_b.change, kind.input, layer.input, head.input, run.click, answer.submit,
              other.submit)(
        answered(patch, handler(draw_patching)), [made_by, record, record_b, kind, layer, head, answer, other,
                                                  position, shown, page_width],
        named_outputs(patch, Patched), api_name="patching",
        **dict(FAST, concurrency_limit=ABLATION_CONCURRENCY, concurrency_id="patching"))
    return patch
