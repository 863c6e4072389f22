"""Attention Lab: a Gradio app that shows how a Transformer works.

`python app.py` serves on 127.0.0.1:7860 (GRADIO_SERVER_NAME / GRADIO_SERVER_PORT override it).
This file only builds the page and wires events to `transformer` (the model) and `visualize` (the figures);
the per-session work of the Train tab lives in `training_session.py`.
"""
from __future__ import annotations

import functools
import inspect
import json
import os
import random
import tempfile
import time
from pathlib import Path

import gradio as gr
import pandas as pd
import torch

import visualize as viz
from training_session import LIMITS, PRESETS, TrainingRequest, run_training_session, warm_up
from transformer import TransformerConfig
from transformer.analysis import head_scores
from transformer.checkpoint import CheckpointError, load_checkpoint
from transformer.data import TASKS
from transformer.embeddings import sinusoidal_table
from transformer.generate import cache_bytes_per_token, generate
from transformer.model import parameter_counts
from transformer.probe import KINDS, record_attention
from transformer.tokenization import UNK_ID

CHECKPOINTS = Path(__file__).parent / "checkpoints"
SHIPPED = sorted(p.parent.name for p in CHECKPOINTS.glob("*/config.json"))
MAX_PROMPT_CHARS = 2000
FAST = dict(trigger_mode="always_last", show_progress="hidden", concurrency_limit=8, concurrency_id="draw")
ATTENTION_CAP = 64  # tokens shown on a heatmap's axes
LM_PROMPTS = ["ROMEO:\n", "First Citizen:\nBefore we proceed", "KING RICHARD III:\nNow is the", "JULIET:\nO "]


class UserError(Exception):
    """Raised by handlers for bad input; shown to the user as it is."""


def handler(fn):
    """Turn library errors (bad values, bad checkpoints) into a visible gr.Error instead of a stack trace."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def wrapped_generator(*args, **kwargs):
            try:
                yield from fn(*args, **kwargs)
            except (UserError, ValueError, CheckpointError) as e:
                raise gr.Error(str(e)) from None
        return wrapped_generator

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (UserError, ValueError, CheckpointError) as e:
            raise gr.Error(str(e)) from None
    return wrapped


# --- models ---------------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def shipped_model(name: str):
    """Load a shipped checkpoint once per process (on the GPU when there is one)."""
    return load_checkpoint(CHECKPOINTS / name)


def resolve(name: str, user_models: dict):
    if name in (user_models or {}):
        return user_models[name]
    if name in SHIPPED:
        return shipped_model(name)
    raise UserError(f"unknown checkpoint {name!r}: pick one from the list")


def checkpoint_choices(user_models: dict) -> list[str]:
    return SHIPPED + sorted(user_models or {})


def check_text(text: str, what: str = "input") -> str:
    if text is None or not text.strip():
        raise UserError(f"the {what} is empty: type something first")
    if len(text) > MAX_PROMPT_CHARS:
        raise UserError(f"the {what} is {len(text):,} characters long; the limit here is {MAX_PROMPT_CHARS:,}")
    return text


def unknown_notice(tokenizer, text: str) -> str:
    unknown = sorted({c for c in text if tokenizer.encode(c) == [UNK_ID]})
    if not unknown:
        return ""
    return f"Characters this model never saw became `<unk>`: {' '.join(repr(c) for c in unknown)}. "


# --- Generate ---------------------------------------------------------------------------------------------------


@handler
def example_input(ckpt: str, user_models: dict) -> str:
    _, _, info = resolve(ckpt, user_models)
    task = info.get("task")
    if task in TASKS:
        return TASKS[task].sample(random.Random())[0]
    return random.choice(LM_PROMPTS)


def _step_table(tokenizer, steps) -> pd.DataFrame:
    rows = [{"step": i, "token": repr(tokenizer.id_to_token(s.token_id)), "probability": round(s.prob, 3),
             "alternatives": "  ".join(f"{tokenizer.id_to_token(t)!r} {p:.2f}" for t, p in s.top if t != s.token_id)}
            for i, s in enumerate(steps)]
    return pd.DataFrame(rows, columns=["step", "token", "probability", "alternatives"])


@handler
def run_generate(ckpt, prompt, strategy, temperature, top_k, top_p, num_beams, max_new_tokens, seed, user_models):
    """Stream the output text and the per-step probability table as tokens are produced."""
    model, tok, _ = resolve(ckpt, user_models)
    cfg = model.config
    ids = tok.encode(check_text(prompt, "prompt"))
    notice = unknown_notice(tok, prompt)
    if cfg.is_encoder_decoder:
        if len(ids) + 1 > cfg.max_len:
            raise UserError(f"the input is {len(ids)} tokens; this model reads at most {cfg.max_len - 1}")
        ids = ids + [cfg.eos_id]
    elif len(ids) > cfg.max_len:
        ids = ids[-cfg.max_len:]
        notice += f"The prompt was cut to its last {cfg.max_len} tokens (the model's context). "
    decoding = dict(strategy=strategy, temperature=float(temperature), top_k=int(top_k) or None,
                    top_p=float(top_p) if top_p < 1 else None, num_beams=int(num_beams),
                    seed=None if seed is None or seed < 0 else int(seed))
    steps, last = [], 0.0
    for step in generate(model, ids, int(max_new_tokens), **decoding):
        steps.append(step)
        if time.perf_counter() - last > 0.1:  # at most ~10 updates a second
            last = time.perf_counter()
            yield tok.decode(s.token_id for s in steps), _step_table(tok, steps), None, gr.update(), notice
    state = {"ckpt": ckpt, "input": ids, "output": [s.token_id for s in steps],
             "top": [[(tok.id_to_token(t), p) for t, p in s.top] for s in steps]}
    picker = gr.update(maximum=max(len(steps) - 1, 1), value=0, interactive=len(steps) > 1)  # a slider needs max > min
    yield tok.decode(state["output"]), _step_table(tok, steps), state, picker, notice or "Done."


@handler
def inspect_step(gen_state, step, user_models):
    """For generated token `step`: its top alternatives, and where it looked (last layer, mean over heads)."""
    if not gen_state or not gen_state["output"]:
        return viz.empty_curves("Generate something first"), viz.empty_curves("")
    model, tok, _ = resolve(gen_state["ckpt"], user_models)
    cfg, step = model.config, min(int(step), len(gen_state["output"]) - 1)
    out = gen_state["output"]
    chosen = tok.id_to_token(out[step])
    probs = viz.token_probabilities(chosen, gen_state["top"][step], title=f"step {step}: the model's top choices")
    with torch.no_grad():
        if cfg.is_encoder_decoder:
            src = torch.tensor([gen_state["input"]], device=model.device)
            tgt = torch.tensor([[cfg.bos_id] + out[:step + 1]], device=model.device)
            att = model(src, tgt, return_attention=True).attention.cross[-1][0, :, step]  # (H, S)
            keys = gen_state["input"]
        else:
            seq = (gen_state["input"] + out)[-cfg.max_len:]
            query = len(seq) - len(out) + step - 1  # the position whose prediction was token `step`
            att = model(torch.tensor([seq[: query + 1]], device=model.device),
                        return_attention=True).attention.decoder_self[-1][0, :, query]  # (H, query + 1)
            keys = seq[: query + 1]
    keys_shown = keys[-ATTENTION_CAP:]
    weights = att.mean(0).cpu()[-ATTENTION_CAP:]
    where = viz.attended_bar(weights, [tok.id_to_token(i) for i in keys_shown],
                             title=f"where {chosen!r} looked (last layer, mean of heads)")
    return probs, where


def build_generate_tab(ckpt, user_models):
    with gr.Tab("Generate"):
        gr.Markdown("Type a prompt (language model) or a task input (seq2seq models), then watch the tokens arrive.")
        with gr.Row():
            prompt = gr.Textbox(label="Prompt or task input", lines=3, max_length=MAX_PROMPT_CHARS, scale=4,
                                elem_id="gen-prompt")
            with gr.Column(scale=1):
                example = gr.Button("New example", elem_id="gen-example")
                go = gr.Button("Generate", variant="primary", elem_id="gen-go")
        with gr.Row():
            strategy = gr.Radio(["greedy", "sample", "beam"], value="greedy", label="Decoding")
            temperature = gr.Slider(0, 2, value=1.0, step=0.05, label="Temperature (sample)")
            top_k = gr.Slider(0, 50, value=0, step=1, label="Top-k (0 = off)")
            top_p = gr.Slider(0.05, 1, value=1.0, step=0.05, label="Top-p (1 = off)")
        with gr.Row():
            num_beams = gr.Slider(1, 8, value=4, step=1, label="Beams (beam)")
            max_new = gr.Slider(1, 400, value=120, step=1, label="Max new tokens")
            seed = gr.Number(value=0, precision=0, label="Seed (-1 = random)")
        notice = gr.Markdown(elem_id="gen-notice")
        output = gr.Textbox(label="Output", lines=6, elem_id="gen-output", buttons=["copy"])
        table = gr.Dataframe(label="Each step: the token, its probability, the alternatives", max_height=300)
        gen_state = gr.State(None)
        picker = gr.Slider(0, 1, value=0, step=1, label="Pick a generated token", interactive=False,
                           elem_id="gen-picker")
        with gr.Row():
            probs_plot = gr.Plot(show_label=False, label="Top alternatives")
            where_plot = gr.Plot(show_label=False, label="Where it looked")
    example.click(example_input, [ckpt, user_models], prompt, api_name="example")
    inputs = [ckpt, prompt, strategy, temperature, top_k, top_p, num_beams, max_new, seed, user_models]
    gen_event = dict(fn=run_generate, inputs=inputs, outputs=[output, table, gen_state, picker, notice],
                     concurrency_limit=4, concurrency_id="generate")
    go.click(**gen_event, api_name="generate").then(
        inspect_step, [gen_state, picker, user_models], [probs_plot, where_plot], api_name="inspect_after_generate",
        api_visibility="private")
    prompt.submit(**gen_event, api_visibility="private")
    picker.change(inspect_step, [gen_state, picker, user_models], [probs_plot, where_plot], api_name="inspect_step",
                  trigger_mode="always_last", show_progress="hidden")


# --- Attention --------------------------------------------------------------------------------------------------


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


@handler
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


# --- Positional encoding ----------------------------------------------------------------------------------------


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


def build_positional_tab(ckpt, user_models):
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
    for control in (d_model, length, dims):
        event = control.submit if control is dims else control.change
        event(draw_positional, inputs, outputs, api_name=None, api_visibility="private", trigger_mode="always_last",
              show_progress="hidden", concurrency_limit=8, concurrency_id="draw")
    return draw_positional, inputs, outputs


# --- Train ------------------------------------------------------------------------------------------------------


@handler
def run_train(source, task, text, upload, hub, layers, heads, d_model, lr, steps, batch, models,
              progress=gr.Progress()):
    """Stream the session's training run onto the Train tab (curves, status, samples, attention, zip)."""
    request = TrainingRequest(source, task, text, upload, hub, layers, heads, d_model, lr, steps, batch)
    for update in run_training_session(request, models or {}):
        yield (update.curves, update.status, update.samples, update.attention, update.zip_path,
               gr.update(choices=checkpoint_choices(update.models)), update.models, update.control)
        if update.total:
            progress((update.step, update.total), desc="training")


def stop_training(control):
    """Ask this session's run to stop after its current step; the run itself reports the final status."""
    if control is None or control.is_set():
        raise gr.Error("Nothing is training in this tab: press Start first")
    control.set()
    gr.Info("Stopping after the current step…")


def build_train_tab(ckpt, user_models):
    with gr.Tab("Train"):
        gr.Markdown("Train a small model right here and watch its loss fall and its attention take shape. "
                    "The default (reverse, tiny) learns to read its input backwards in about a minute.")
        with gr.Row():
            source = gr.Radio(["task", "text"], value="task", label="Train on")
            task = gr.Dropdown(sorted(TASKS), value="reverse", label="Task")
            preset = gr.Radio(list(PRESETS), value="tiny", label="Model size")
        with gr.Accordion("Text (for “text”): paste, upload a .txt, or name a Hub dataset", open=False):
            text = gr.Textbox(label="Paste text", lines=4, max_length=LIMITS["text_chars"])
            upload = gr.File(label="Upload a .txt file", file_types=[".txt"], type="filepath")
            hub = gr.Textbox(label="Hugging Face Hub dataset (needs internet)", placeholder="e.g. tiny_shakespeare")
        with gr.Accordion("Hyper-parameters (the preset fills these)", open=False):
            with gr.Row():
                layers = gr.Number(value=PRESETS["tiny"]["layers"], precision=0, label="Layers",
                                   minimum=LIMITS["layers"][0], maximum=LIMITS["layers"][1])
                heads = gr.Number(value=PRESETS["tiny"]["heads"], precision=0, label="Heads",
                                  minimum=LIMITS["heads"][0], maximum=LIMITS["heads"][1])
                d_model = gr.Number(value=PRESETS["tiny"]["d_model"], precision=0, label="d_model",
                                    minimum=LIMITS["d_model"][0], maximum=LIMITS["d_model"][1])
            with gr.Row():
                lr = gr.Number(value=PRESETS["tiny"]["lr"], label="Peak learning rate",
                               minimum=LIMITS["lr"][0], maximum=LIMITS["lr"][1])
                steps = gr.Number(value=PRESETS["tiny"]["steps"], precision=0, label="Steps",
                                  minimum=LIMITS["steps"][0], maximum=LIMITS["steps"][1])
                batch = gr.Number(value=PRESETS["tiny"]["batch_size"], precision=0, label="Batch size",
                                  minimum=LIMITS["batch_size"][0], maximum=LIMITS["batch_size"][1])
        with gr.Row():
            start = gr.Button("Start", variant="primary", elem_id="train-start")
            stop = gr.Button("Stop", variant="stop", elem_id="train-stop")
        status = gr.Markdown("Press Start.", elem_id="train-status")
        with gr.Row():
            curves = gr.Plot(show_label=False, label="Loss and learning rate", elem_id="train-curves")
            attention = gr.Plot(show_label=False, label="Attention of one example", elem_id="train-attention")
        samples = gr.Dataframe(label="Samples at the last evaluation", max_height=250)
        download = gr.File(label="Your model as a checkpoint zip")
        control = gr.State(None)
    preset.change(lambda p: tuple(PRESETS[p][k] for k in ("layers", "heads", "d_model", "lr", "steps", "batch_size")),
                  preset, [layers, heads, d_model, lr, steps, batch], api_visibility="private")

    start.click(run_train, [source, task, text, upload, hub, layers, heads, d_model, lr, steps, batch, user_models],
                [curves, status, samples, attention, download, ckpt, user_models, control], api_name="train",
                concurrency_limit=LIMITS["concurrent_trainings"], concurrency_id="train", show_progress_on=[status])
    stop.click(stop_training, control, None, api_name="stop", concurrency_limit=None)


# --- Model ------------------------------------------------------------------------------------------------------


@handler
def describe_model(ckpt, user_models):
    model, tok, info = resolve(ckpt, user_models)
    cfg = model.config
    counts = parameter_counts(model)
    total = sum(counts.values())
    layers = (f"{cfg.n_encoder_layers} encoder + {cfg.n_decoder_layers} decoder layers" if cfg.is_encoder_decoder
              else f"{cfg.n_decoder_layers} decoder layers (no cross-attention)")
    metrics = ", ".join(f"{k} = {v:.4g}" if isinstance(v, float) else f"{k} = {v}"
                        for k, v in (info.get("metrics") or {}).items() if not isinstance(v, list))
    summary = (f"### {ckpt}: {cfg.arch}, {total:,} parameters\n"
               f"{layers}; d_model {cfg.d_model}, {cfg.n_heads} heads of d_k {cfg.d_k} "
               f"({cfg.n_kv_heads} key/value heads), d_ff {cfg.d_ff}, {cfg.activation}, "
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


def build_model_tab(ckpt, user_models):
    with gr.Tab("Model"):
        summary = gr.Markdown(elem_id="model-summary")
        with gr.Row():
            table = gr.Dataframe(label="Parameters per component")
            plot = gr.Plot(show_label=False, label="Where the parameters are")
        kv = gr.Dataframe(label="KV-cache size per generated token (fp32), for MHA / GQA / MQA variants")
    return [summary, table, plot, kv]


# --- the page ---------------------------------------------------------------------------------------------------


def build_demo() -> gr.Blocks:
    with gr.Blocks(title="Attention Lab") as demo:
        gr.Markdown("# Attention Lab\nA Transformer from *Attention Is All You Need*, written from scratch: "
                    "generate with it, look inside its attention, and train one yourself.")
        user_models = gr.State({})
        default = "reverse" if "reverse" in SHIPPED else (SHIPPED[0] if SHIPPED else None)
        ckpt = gr.Dropdown(SHIPPED, value=default, label="Checkpoint (used by every tab)", elem_id="ckpt")
        build_generate_tab(ckpt, user_models)
        build_attention_tab(demo, ckpt, user_models)
        pe_fn, pe_inputs, pe_outputs = build_positional_tab(ckpt, user_models)
        build_train_tab(ckpt, user_models)
        model_outputs = build_model_tab(ckpt, user_models)
        ckpt.change(describe_model, [ckpt, user_models], model_outputs, api_name="model",
                    concurrency_limit=8, concurrency_id="draw")
        demo.load(describe_model, [ckpt, user_models], model_outputs, api_visibility="private")
        demo.load(pe_fn, pe_inputs, pe_outputs, api_name="positional")
    demo.queue(max_size=256, default_concurrency_limit=4)
    return demo


THEME = gr.themes.Soft(text_size=gr.themes.sizes.text_lg)
CSS = ".gradio-container {max-width: 1500px !important}"


def main():
    warm_up()
    build_demo().launch(server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
                        server_port=int(os.environ.get("GRADIO_SERVER_PORT", 7860)),
                        ssr_mode=False, theme=THEME, css=CSS, footer_links=["gradio", "settings"])


if __name__ == "__main__":
    main()
