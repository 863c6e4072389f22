"""Model tab: the selected checkpoint's architecture, parameter counts and KV-cache sizes."""
from __future__ import annotations

import gradio as gr
import pandas as pd

import visualize as viz
from transformer import TransformerConfig
from transformer.generate import cache_bytes_per_token
from transformer.model import parameter_counts

from .common import browser_key, handler, resolve


@handler
def describe_model(ckpt, key, request: gr.Request = None):
    model, tok, info = resolve(ckpt, browser_key(key, request))
    cfg = model.config
    counts = parameter_counts(model)
    total = sum(counts.values())
    layers = (f"{cfg.n_encoder_layers} encoder + {cfg.n_decoder_layers} decoder layers" if cfg.is_encoder_decoder
              else f"{cfg.n_decoder_layers} decoder layers (no cross-attention)")
    metrics = ", ".join(f"{k} = {v:.4g}" if isinstance(v, float) else f"{k} = {v}"
                        for k, v in (info.get("metrics") or {}).items() if not isinstance(v, list))
    summary = (f"### {ckpt}: {cfg.arch}, {total:,} parameters\n"
               f"{layers}; d_model {cfg.d_model}, {cfg.n_heads} heads of d_k {cfg.d_k} "
               f"({cfg.n_kv_heads} key/value heads), "
               f"{'attention-only (no feed-forward)' if cfg.attention_only else f'd_ff {cfg.d_ff}, {cfg.activation}'}, "
               f"{'pre' if cfg.norm_first else 'post'}-norm, {cfg.pos_encoding} positions up to {cfg.max_len}, "
               f"{tok.kind} tokenizer of {cfg.vocab_size} tokens, tied embeddings: {cfg.tie_embeddings}.  \n"
               f"Task: {info.get('task') or 'language modelling'}. Metrics: {metrics or 'none recorded'}. "
               f"Device: {model.device}.")
    table = pd.DataFrame([{"component": k, "parameters": v, "share": f"{100 * v / total:.1f}%"}
                          for k, v in counts.items()])
    kv_rows = []
    group_sizes = [d for d in (cfg.n_heads // 4, cfg.n_heads // 2) if 1 < d < cfg.n_heads and cfg.n_heads % d == 0]
    variants = [("MHA", cfg.n_heads)] + [("GQA", d) for d in group_sizes[:1]] + [("MQA", 1)]
    for label, kv in variants:
        variant = TransformerConfig.from_dict({**cfg.to_dict(), "n_kv_heads": kv})
        per_token = cache_bytes_per_token(variant)
        kv_rows.append({"attention": f"{label} ({kv} kv heads)", "KV cache bytes / token": per_token,
                        f"KiB for {cfg.max_len} tokens": round(per_token * cfg.max_len / 1024, 1),
                        "this model": "yes" if kv == cfg.n_kv_heads else ""})
    return summary, table, viz.parameter_breakdown(counts, title=f"Parameters of {ckpt}"), pd.DataFrame(kv_rows)


def build_model_tab(demo, ckpt, key):
    with gr.Tab("Model", id="model"):
        summary = gr.Markdown(elem_id="model-summary")
        with gr.Row():
            table = gr.Dataframe(label="Parameters per component")
            plot = gr.Plot(show_label=False, label="Where the parameters are")
        kv = gr.Dataframe(label="KV-cache size per generated token (fp32), for MHA / GQA / MQA variants")
    outputs = [summary, table, plot, kv]
    ckpt.change(describe_model, [ckpt, key], outputs, api_name="model", concurrency_limit=8,
                concurrency_id="draw")
    demo.load(describe_model, [ckpt, key], outputs, api_visibility="private")
