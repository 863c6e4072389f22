"""Generate tab: tokens stream out of a checkpoint, with each step's probability and where it looked."""
from __future__ import annotations

import random
import time

import gradio as gr
import pandas as pd
import torch

import visualize as viz
from transformer.data import TASKS
from transformer.generate import generate

from .common import ATTENTION_CAP, MAX_PROMPT_CHARS, UserError, check_text, handler, resolve, unknown_notice

LM_PROMPTS = ["ROMEO:\n", "First Citizen:\nBefore we proceed", "KING RICHARD III:\nNow is the", "JULIET:\nO "]


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
