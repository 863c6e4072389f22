"""The Attention tab's "look inside" views: the Q·K step for one query, attention rollout, and head ablation.

Each works on the record the tab already holds (and the checkpoint that made it); the numbers come from
transformer.interpretability.probe, transformer.interpretability.analysis and transformer.interpretability.ablation, the figures from visualize.
"""
from __future__ import annotations

import gradio as gr
import pandas as pd

import visualize as viz
from visualize.text import html_text
from transformer.interpretability.ablation import default_eval_set, evaluate, head_importance_stream, heads_off
from transformer.interpretability.analysis import attention_rollout
from transformer.encoding import most_target_tokens
from transformer.fill_mask import masked_one_at_a_time
from transformer.generate import generate
from transformer.heads import AttentionKind, HeadId
from transformer.interpretability.probe import qk_step

from checks import UserError, check_index
from limits import ABLATION_CONCURRENCY, ATTENTION_CAP, IMPORTANCE_CONCURRENCY
from store.catalogue import ModelRef, model_ref
from store.gpu import gpu
from store.sessions import browser_key
from tabs.attention.record import inside_of
from tabs.figure_export import figure
from widgets.controls import CheckboxGroup, index_control
from widgets.errors import handler
from widgets.ui import FAST, open_states, when_open


def selected_pattern(record, kind):
    """The record's pattern of `kind`; a kind the record does not have (a redraw sent just before a new
    checkpoint's kinds reached the page) gives the record's first kind, whose name every title then shows."""
    if record is None:
        raise UserError("press Show attention first")
    return record.patterns.get(kind) or record.patterns[record.kinds[0]]


@handler
def draw_qk(made_by, record, kind, layer, head, query, shown=None, request: gr.Request = None):
    """Equation 1 for one query of the selected head, from the q, k and v of the record's own forward pass
    (in the page, only while its section is open; the first view of a record costs a forward pass, inside_of; API
    clients always get it)."""
    if shown is False:
        return gr.skip()
    pattern = selected_pattern(record, kind)
    kind = pattern.kind
    L, H = pattern.shape
    layer = check_index(layer, "layer", L)
    head = check_index(head, "head", H)
    query = check_index(query, "query", len(pattern.query_tokens))
    source = model_ref(made_by, browser_key(request))
    s = qk_on_gpu(source, record, inside_of(record, source), kind, layer, head, query)
    return viz.qk_steps(s.scores, s.scaled, s.allowed, s.weights, s.contributions, s.key_tokens, s.d_k,
                        title=f"query {query} ({html_text(repr(s.query_token))}), {kind}, layer {layer}, head {head}",
                        bias=s.bias)


@gpu(duration=10)
@handler
def qk_on_gpu(source: ModelRef, record, inside: dict, kind: str, layer: int, head: int, query: int):
    """transformer.interpretability.probe.qk_step: one head's equation 1 from the q, k and v of the record's pass
    (`inside`, tabs.attention.record.inside_of)."""
    model, _, _ = source.load()
    return qk_step(model, record, inside, kind, layer, head, query)


@handler
def draw_rollout(record, kind, shown=None):
    if shown is False:
        return gr.skip()
    pattern = selected_pattern(record, kind)
    kind = pattern.kind
    if kind == AttentionKind.CROSS:
        return viz.empty_curves("Rollout follows self-attention through its layers: pick encoder or decoder self")
    return viz.rollout_heatmap(attention_rollout(pattern.weights), pattern.key_tokens,
                               title=f"Attention rollout ({kind}, {pattern.shape[0]} layers)")


def _parse_heads(kind, labels, L, H):
    heads = []
    for label in labels or []:
        try:
            head = HeadId.parse(str(label), kind)
        except ValueError:
            raise UserError(f"heads to switch off are named layer.head, got {str(label)[:20]!r}") from None
        if not (0 <= head.layer < L and 0 <= head.head < H):
            raise UserError(f"heads to switch off: there is no head {label} here ({L} layers x {H} heads)")
        heads.append((head.kind, head.layer, head.head))
    return heads


def _continue(model, tok, record, mask) -> str:
    if model.config.is_encoder_only:  # BERT writes nothing: its guess for each word, that word hidden
        return tok.decode(masked_one_at_a_time(model, tok, record.input_ids, mask)[0])
    ids = [s.token_id for s in generate(model, record.input_ids, 40 if not model.config.is_encoder_decoder
                                        else most_target_tokens(model.config), head_mask=mask)]
    return tok.decode(ids)


def _known_kind(record, kind):
    """`kind` when the record has it (or there is no record yet: selected_pattern says so), else a UserError naming
    the Attention control."""
    if record is not None and kind not in record.patterns:
        raise UserError(f"the attention kind must be one of {', '.join(record.kinds)}; got {str(kind)[:40]!r}")
    return kind


@handler
def run_ablation(made_by, record, kind, labels, request: gr.Request = None):
    """The model's output and its score on a fixed evaluation set, with every head on and with the chosen heads
    off (zeroed before the output projection, for this call only)."""
    pattern = selected_pattern(record, _known_kind(record, kind))
    source = model_ref(made_by, browser_key(request))
    heads = _parse_heads(kind, labels, *pattern.shape)
    if not heads:
        raise UserError("tick one or more heads to switch off")
    return pd.DataFrame(ablation_on_gpu(source, record, heads, f"{kind} {', '.join(str(x) for x in labels)} off"))


@gpu(duration=30)
@handler
def ablation_on_gpu(source: ModelRef, record, heads: list, label: str) -> list[dict]:
    """The rows of run_ablation: output and score with every head on, then with `heads` off."""
    model, tok, info = source.load()
    mask = heads_off(model, heads)
    eval_set = default_eval_set(model, tok, info.get("task"), record.input_ids, record.target_ids)
    return [{"heads": "all on", "output": _continue(model, tok, record, None),
             eval_set.metric: round(evaluate(model, tok, eval_set), 3)},
            {"heads": label, "output": _continue(model, tok, record, mask),
             eval_set.metric: round(evaluate(model, tok, eval_set, mask), 3)}]


@handler
def run_importance(made_by, record, kind, request: gr.Request = None, progress=gr.Progress()):
    """Each head switched off alone: how much worse the model gets, as a layers x heads grid of the selected kind
    (checked before the minute of computing, not after)."""
    selected_pattern(record, _known_kind(record, kind))
    for done, result in importance_on_gpu(model_ref(made_by, browser_key(request)), record):
        if result is None:
            progress(done, desc="heads")
    grid, metric = result
    what = "drop in exact match" if metric == "exact match" else "rise in loss (nats)"
    return viz.overview(grid[kind], what, title=f"{what} with only that head off ({kind})")


@gpu(duration=60)
@handler
def importance_on_gpu(source: ModelRef, record):
    """transformer.interpretability.ablation.head_importance as a stream of plain values: ((done, total), None)
    after each head, then (None, ({kind: (layers, heads)}, the metric it used))."""
    model, tok, info = source.load()
    eval_set = default_eval_set(model, tok, info.get("task"), record.input_ids, record.target_ids)
    for item in head_importance_stream(model, tok, eval_set):
        yield (None, (item, eval_set.metric)) if isinstance(item, dict) else (item, None)


def build_inside(demo, record, made_by, kind, layer, head):
    """The three views, under the heatmaps of the Attention tab."""
    with gr.Accordion("The Q·K step for one query", open=False, elem_id="att-qk-section") as qk_section:
        query = index_control(ATTENTION_CAP, label="Query (row of the heatmap)", elem_id="att-query")
        qk_plot = figure("Q·K step", "att-qk")
    with gr.Accordion("Attention rollout", open=False, elem_id="att-rollout-section") as rollout_section:
        gr.Markdown("Rollout multiplies each layer's head-averaged attention, plus the residual path counted as "
                    "attention to itself, through the layers (Abnar & Zuidema 2020): row t estimates how much of "
                    "the last layer's token t comes from each input token. It ignores values, feed-forward layers "
                    "and norms, so it is a rough picture of the flow, not an explanation.")
        rollout_plot = figure("Rollout", "att-rollout")
    with gr.Accordion("Switch heads off", open=False, elem_id="att-ablate-section"):
        gr.Markdown("Tick heads of the selected kind and run: their outputs are zeroed before the layer's output "
                    "projection, for this run only. The score is exact match on 100 fresh examples (seq2seq tasks), "
                    "the loss of the target given the source (translation: the reference Spanish when you gave "
                    "it, else the model's own translation), or the loss on the input (language models). Head "
                    "importance switches off one head at a time.")
        heads = CheckboxGroup([], label="Heads to switch off (layer.head)", elem_id="att-ablate-heads")
        with gr.Row():
            run = gr.Button("Run with these heads off", elem_id="att-ablate")
            importance = gr.Button("Head importance (one head off at a time)", elem_id="att-importance")
        ablation = gr.Dataframe(label="With and without", elem_id="att-ablation", wrap=True)
        importance_plot = figure("Head importance", "att-importance-plot")
    qk_shown, rollout_shown = open_states(demo, qk_section, rollout_section)
    when_open(qk_section, record.change, kind.change, layer.change, head.change, query.change)(
        draw_qk, [made_by, record, kind, layer, head, query, qk_shown], qk_plot, api_name="draw_qk", **FAST)
    when_open(rollout_section, record.change, kind.change)(
        draw_rollout, [record, kind, rollout_shown], rollout_plot, api_name="draw_rollout", **FAST)
    run.click(run_ablation, [made_by, record, kind, heads], ablation, api_name="ablate",
              concurrency_limit=ABLATION_CONCURRENCY)
    importance.click(run_importance, [made_by, record, kind], importance_plot, api_name="head_importance",
                     concurrency_limit=IMPORTANCE_CONCURRENCY)
    return query, heads
