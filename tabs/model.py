"""Model tab: the selected checkpoint's architecture, parameter counts and the cache sizes of its attention
variants (MHA, GQA, MQA, MLA)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

import visualize as viz
from transformer import TransformerConfig
from transformer.train.compare import kv_head_variants
from transformer.generate import cache_bytes_per_token
from transformer.heads import layer_and_head
from transformer.model import parameter_counts

from limits import DRAW_CONCURRENCY, METRIC_NOTE_CHARS
from store.catalogue import resolve
from store.sessions import browser_key
from tabs.figure_export import figure
from widgets.answers import Answer, Components, answered, named_outputs
from widgets.errors import handler
from widgets.ui import separately


LAYERS = {"encoder-decoder": "{e} encoder + {d} decoder layers",  # each arch's stacks, as the summary says them
          "encoder-only": "{e} encoder layers (bidirectional; no decoder)",
          "decoder-only": "{d} decoder layers (no cross-attention)"}


@dataclass(frozen=True)
class Described(Answer):
    """The checkpoint's summary, its parameters per component (a table and a figure) and the cache sizes of its
    attention variants (widgets.answers: each field sets the tab's component of its name)."""

    summary: Any
    table: Any
    plot: Any
    kv: Any


@handler
def describe_model(ckpt, request: gr.Request = None) -> Described:
    model, tok, info = resolve(ckpt, browser_key(request))
    cfg = model.config
    counts = parameter_counts(model)
    total = sum(counts.values())
    layers = LAYERS[cfg.arch].format(e=cfg.n_encoder_layers, d=cfg.n_decoder_layers)
    metrics = metrics_tables(info.get("metrics") or {})
    kv_heads = (f"latent attention, latent {cfg.kv_latent_dim}" if cfg.attention == "mla"
                else f"{cfg.n_kv_heads} key/value heads")
    summary = (f"### {ckpt}: {cfg.arch}, {total:,} parameters\n"
               f"{layers}; d_model {cfg.d_model}, {cfg.n_heads} heads of d_k {cfg.d_k} "
               f"({kv_heads}), "
               f"{'attention-only (no feed-forward)' if cfg.attention_only else f'd_ff {cfg.d_ff}, {cfg.activation}'}, "
               f"{'pre' if cfg.norm_first else 'post'}-norm, {cfg.pos_encoding} positions up to {cfg.max_len}, "
               f"{tok.kind} tokenizer of {cfg.vocab_size} tokens, tied embeddings: {cfg.tie_embeddings}.  \n"
               f"Task: {info.get('task') or 'language modelling'}. Device: {model.device}.\n\n"
               f"{metrics or 'Metrics: none recorded.'}")
    table = pd.DataFrame([{"component": k, "parameters": v, "share": f"{100 * v / total:.1f}%"}
                          for k, v in counts.items()])
    return Described(summary, table, viz.parameter_breakdown(counts, title=f"Parameters of {ckpt}"), cache_table(cfg))


def _value(v, key: str = "") -> str:
    """A card's value as a table shows it: a head in words ("0.1", HeadId.label, or [layer, head]: never a number),
    a list by its length, a number rounded or with thousands separators."""
    heads = _head_words(v) if key.endswith("head") else None
    if heads:
        return heads
    if isinstance(v, list):
        return f"{len(v)} entries (not shown)"
    if isinstance(v, float):
        return f"{v:.4g}"
    return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)


def _head_words(v) -> str | None:
    """A card's head, written "layer.head" (HeadId.label) or [layer, head], in words: "layer 0, head 1" (shown as
    "0.1" it read as the number 0.1, and [3, 3] as "2 entries")."""
    if isinstance(v, list) and len(v) == 2 and all(isinstance(x, int) for x in v):
        v = f"{v[0]}.{v[1]}"
    place = layer_and_head(v) if isinstance(v, str) else None
    return place and f"layer {place[0]}, head {place[1]}"


# A card's metric keys in words (metric_label): a word of a key by its name, a whole key where its words alone would
# not say it. Raw keys such as `bleu_copy_source` were broken mid-word to fit a phone's narrow column (issue 29).
METRIC_WORDS = {"bleu": "BLEU", "chrf": "chrF", "aer": "AER", "bpc": "bits per character", "val": "validation",
                "char": "character", "chars": "characters", "beam4": "beam search (4)", "beam": "beam search"}
METRIC_NAMES = {
    "bleu_copy_source": "BLEU of the source copied as is", "chrf_copy_source": "chrF of the source copied as is",
    "seconds_greedy": "seconds to translate, greedy", "seconds_beam": "seconds to translate, beam search",
    "bleu_greedy_all": "BLEU greedy, all verses", "chrf_greedy_all": "chrF greedy, all verses",
    "in_context_accuracy_first_copy": "in-context accuracy, first copy",
    "in_context_accuracy_second_copy": "in-context accuracy, second copy",
    "anti_diagonal_cross_attention": "anti-diagonal of cross-attention", "near_duplicate_share": "near-duplicate share",
    "near_duplicates": "near-duplicates", "best_layer_mean": "best layer (mean AER)",
    "measured_on": "Measured on", "patching_measured_on": "Patching measured on",
}


def metric_label(key: str) -> str:
    """A card's metric key in words, the one rule for it: "bleu_copy_source" -> "BLEU of the source copied as is"
    (METRIC_NAMES), "val_bpc" -> "validation bits per character" (METRIC_WORDS, word by word), any other key with
    its underscores as spaces."""
    return METRIC_NAMES.get(key) or " ".join(METRIC_WORDS.get(word, word) for word in str(key).split("_"))


def metrics_tables(metrics: dict) -> str:
    """A card's metrics as Markdown tables, each name in words (metric_label): its numbers in one table, each group
    of numbers (a nested dict, such as the translation card's `unseen` and `eflomal`, and a group inside one) in a
    table of its own; a list (examples, a per-head grid) is named with its length, not printed; a sentence (what it
    was measured on) is said under its table (the translation card came out as one raw nested dict, issue 29 item
    5)."""
    def table(title: str, items: dict) -> list[str]:
        rows, notes = [], []
        for k, v in items.items():
            if isinstance(v, dict):
                continue
            if isinstance(v, str) and len(v) > METRIC_NOTE_CHARS:
                notes.append(f"*{metric_label(k)}*: {v}")
            else:
                rows.append(f"| {metric_label(k)} | {_value(v, k)} |")
        body = f"**{title}**\n\n| metric | value |\n|---|---|\n" + "\n".join(rows) if rows else ""
        return [part for part in [body] + notes if part]

    def groups(title: str, items: dict) -> list[str]:
        return table(title, items) + [part for k, v in items.items() if isinstance(v, dict)
                                      for part in groups(f"{title}, {metric_label(k)}" if title != "Metrics"
                                                         else f"Metrics: {metric_label(k)}", v)]
    return "\n\n".join(groups("Metrics", metrics))


def cache_table(cfg: TransformerConfig) -> pd.DataFrame:
    """Cache bytes per generated token of this model's MHA, GQA, MQA and MLA variants (same sizes otherwise), from
    transformer.generate.cache_bytes_per_token; "this model" marks the checkpoint's own attention. The MHA / GQA / MQA
    variants are those a comparison trains (transformer.train.compare.kv_head_variants)."""
    mla = cfg.attention == "mla"
    variants = [(v.name, v.n_kv_heads) for v in kv_head_variants(cfg.n_heads)]  # the comparison's own choice of GQA
    rows = []
    for label, kv in variants:
        variant = TransformerConfig.from_dict({**cfg.to_dict(), "attention": "mha", "n_kv_heads": kv,
                                               "kv_latent_dim": None})
        rows.append(_cache_row(f"{label} ({kv} kv heads)", cache_bytes_per_token(variant), cfg.max_len,
                               not mla and kv == cfg.n_kv_heads))
    try:  # an MLA model keeps its own latent size; any other gets MLA's default (None = 4 d_k)
        variant = TransformerConfig.from_dict({**cfg.to_dict(), "attention": "mla", "n_kv_heads": None,
                                               "kv_latent_dim": cfg.kv_latent_dim if mla else None})
    except ValueError as e:  # e.g. RoPE with d_k / 2 odd: MLA's decoupled rotary key cannot be built
        rows.append(_cache_row(f"MLA (not possible with this model: {e})", None, cfg.max_len, False))
    else:
        rows.append(_cache_row(f"MLA (latent {variant.kv_latent_dim})", cache_bytes_per_token(variant), cfg.max_len,
                               mla))
    return pd.DataFrame(rows)


def _cache_row(label: str, per_token: int | None, max_len: int, own: bool) -> dict:
    """One row of the cache table; a variant that cannot be built (per_token None) shows a dash."""
    return {"attention": label, "cache bytes / token": "—" if per_token is None else per_token,
            f"KiB for {max_len} tokens": "—" if per_token is None else round(per_token * max_len / 1024, 1),
            "this model": "yes" if own else ""}


def build_model_tab(demo, ckpt):
    with gr.Tab("Model", id="model", elem_id="model-tab") as tab:
        summary = gr.Markdown(elem_id="model-summary")
        with gr.Row():
            table = gr.Dataframe(label="Parameters per component")
            plot = figure("Where the parameters are", "model-parameters")
        kv = gr.Dataframe(label="Cache size per generated token (fp32): keys and values for MHA / GQA / MQA, the "
                                "latent (and rotary key) for MLA", elem_id="model-cache")
    shown = Components(summary=summary, table=table, plot=plot, kv=kv)
    outputs, describe = named_outputs(shown, Described), answered(shown, describe_model)
    # drawn only on screen: a new checkpoint (a demo's) redraws nothing in a hidden tab; shown again, it redraws
    # the progress on the summary at the top, not the tables and the figure: gradio's page re-reads every component
    # that ever showed one at each later status update (widgets.ui.progress_only_where_drawn)
    draw = dict(concurrency_limit=DRAW_CONCURRENCY, concurrency_id="draw", show_progress_on=[summary])
    separately(ckpt.change, only_shown="model-tab")(describe, ckpt, outputs, api_name="model", **draw)
    tab.select(describe, ckpt, outputs, api_visibility="private", **draw)
    demo.load(describe, ckpt, outputs, api_visibility="private", show_progress_on=[summary])
