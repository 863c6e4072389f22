"""Generate tab: tokens stream out of a checkpoint, with each step's probability and where it looked."""
from __future__ import annotations

import random
import time

import gradio as gr
import pandas as pd

import visualize as viz
from visualize.key_window import heaviest_window
from visualize.text import html_text
from transformer.data import INDUCTION_ALPHABET, TASKS
from transformer.fill_mask import fill_mask
from transformer.generate import STRATEGIES, generate
from transformer.interpretability.probe import encode_input, record_step
from transformer.memory import check_generation_memory
from transformer.translation import TASK as TRANSLATION
from transformer.translation.corpus import example_verse

from checks import check_choice, check_index, check_number, check_text, unknown_notice
from limits import (ATTENTION_CAP, FILL_MASK_TOP, GENERATE, GENERATE_CONCURRENCY, GENERATION_BYTES,
                    MAX_PROMPT_CHARS, STREAM_UPDATES_PER_SECOND)
from store.about import trained_on
from store.catalogue import ModelRef, description, model_ref, pretrained, pretrained_of_arch, resolve
from store.gpu import gpu
from store.sessions import browser_key
from tabs.figure_export import figure
from widgets.controls import Number, Radio, Slider, index_control, index_slider
from widgets.errors import handler
from widgets.link import copy_link_row
from widgets.ui import Followers

LM_PROMPTS = ["ROMEO:\n", "First Citizen:\nBefore we proceed", "KING RICHARD III:\nNow is the", "JULIET:\nO "]


@handler
def example_input(ckpt, request: gr.Request = None) -> str:
    _, _, info = resolve(ckpt, browser_key(request))
    task, rng = info.get("task"), random.Random()
    if task in TASKS:
        return TASKS[task].sample(rng)[0]
    if task == TRANSLATION:  # a test verse: never trained on
        return example_verse(rng).en
    if task == "induction":  # random distinct characters, then the same again: the second copy is predictable
        first = "".join(rng.sample(INDUCTION_ALPHABET, 12))
        return first + first[:6]
    return rng.choice(LM_PROMPTS)


@handler
def decoding_for(ckpt, linked=None, request: gr.Request = None):
    """The decoding a checkpoint opens with: beam search for the translation model (as the paper translates,
    section 6.1), the control left as it is for the others and while a link's generation is opened (`linked`:
    the link set it); and what the checkpoint was trained on and expects."""
    key = browser_key(request)
    _, _, info = resolve(ckpt, key)
    beam = info.get("task") == TRANSLATION and not linked
    return (gr.update(value="beam") if beam else gr.update()), description(ckpt, key)


def _step_table(tokenizer, steps) -> pd.DataFrame:
    rows = [{"step": i, "token": repr(tokenizer.id_to_token(s.token_id)), "probability": round(s.prob, 3),
             "alternatives": "  ".join(f"{tokenizer.id_to_token(t)!r} {p:.2f}" for t, p in s.top if t != s.token_id)}
            for i, s in enumerate(steps)]
    return pd.DataFrame(rows, columns=["step", "token", "probability", "alternatives"])


# The Generate tab's controls as they open (for a translation model, beam search: decoding_for); the translation
# demo shows what the Generate tab writes with exactly these (translate_as_generate)
OPENING = {"temperature": 1.0, "top_k": 0, "top_p": 1.0, "num_beams": 4, "max_new_tokens": 120, "seed": 0}


def decoding_settings(strategy, temperature, top_k, top_p, num_beams, max_new_tokens, seed) -> dict:
    """The Generate tab's decoding controls, each checked; an error names the control."""
    seed = check_number(seed, "Seed", *GENERATE["seed"], integer=True)
    return dict(strategy=check_choice(strategy, "Decoding", STRATEGIES),
                temperature=check_number(temperature, "Temperature", *GENERATE["temperature"]),
                top_k=check_number(top_k, "Top-k", *GENERATE["top_k"], integer=True) or None,
                top_p=(lambda p: p if p < 1 else None)(check_number(top_p, "Top-p", *GENERATE["top_p"])),
                num_beams=check_number(num_beams, "Beams", *GENERATE["num_beams"], integer=True),
                max_new_tokens=check_number(max_new_tokens, "Max new tokens", *GENERATE["max_new_tokens"],
                                            integer=True),
                seed=None if seed < 0 else seed)


@handler
def run_generate(ckpt, prompt, strategy, temperature, top_k, top_p, num_beams, max_new_tokens, seed,
                 request: gr.Request = None):
    """Stream the output text and the per-step probability table as tokens are produced."""
    key = browser_key(request)
    source = model_ref(ckpt, key)
    decoding = decoding_settings(strategy, temperature, top_k, top_p, num_beams, max_new_tokens, seed)
    for text, table, state, n_steps, notice in generate_on_gpu(source, ckpt, key, check_text(prompt, "prompt"),
                                                                decoding):
        picker = gr.update() if n_steps is None else index_slider(n_steps, 0)
        if state is not None and decoding["strategy"] != "sample" and repeats_itself(state["output"]):
            notice = (notice.removesuffix("Done.") + REPEAT_NOTE).strip()
        yield text, table, state, picker, notice


def translate_as_generate(ckpt: str, key: str, text: str) -> str:
    """What the Generate tab writes for `text` on checkpoint `ckpt` when a translation model opens it (beam search,
    the OPENING settings): the same function, the text of its last update."""
    decoding = decoding_settings("beam", *(OPENING[k] for k in ("temperature", "top_k", "top_p", "num_beams",
                                                                 "max_new_tokens", "seed")))
    *_, (output, *_) = generate_on_gpu(model_ref(ckpt, key), ckpt, key, check_text(text, "prompt"), decoding)
    return output


REPEAT_NOTE = ("The output repeats itself: greedy and beam decoding always take the likeliest continuation, and a "
               "language model then often falls into a loop. Choose **sample** (temperature 0.8) for varied text.")


def repeats_itself(ids: list[int], n: int = 8, times: int = 3) -> bool:
    """Whether some run of `n` tokens occurs at least `times` times in `ids` (a decoding loop)."""
    counts: dict[tuple, int] = {}
    for i in range(len(ids) - n + 1):
        gram = tuple(ids[i:i + n])
        counts[gram] = counts.get(gram, 0) + 1
        if counts[gram] >= times:
            return True
    return False


@gpu(duration=30)
@handler
def generate_on_gpu(source: ModelRef, ckpt: str, key: str, prompt: str, decoding: dict):
    """run_generate's stream: (text, step table, state, steps, notice), at most STREAM_UPDATES_PER_SECOND a
    second, then the last, the only one with the state and the number of steps (None before). A generation whose
    estimated memory (beam width x length x model: transformer.memory.generation_bytes) is over GENERATION_BYTES is
    refused before it decodes."""
    model, tok, info = source.load()
    encoded = encode_input(model, tok, prompt)
    beams = decoding["num_beams"] if decoding["strategy"] == "beam" else 1
    check_generation_memory(model.config, len(encoded.ids), decoding["max_new_tokens"], beams, GENERATION_BYTES)
    notice = unknown_notice(tok, prompt) + encoded.cut_message()
    if unknown_notice(tok, prompt):  # the input is not what the model learned from: say what it expects
        notice += "\n\n" + trained_on(info.get("task"), info.get("training"), pretrained=ckpt in pretrained())
    steps, last = [], 0.0
    for step in generate(model, encoded.ids, decoding.pop("max_new_tokens"), **decoding):
        steps.append(step)
        if time.perf_counter() - last > 1 / STREAM_UPDATES_PER_SECOND:
            last = time.perf_counter()
            yield tok.decode(s.token_id for s in steps), _step_table(tok, steps), None, None, notice
    state = {"ckpt": ckpt, "key": key, "input": encoded.ids, "output": [s.token_id for s in steps],
             "top": [[(tok.id_to_token(t), p) for t, p in s.top] for s in steps]}
    yield tok.decode(state["output"]), _step_table(tok, steps), state, len(steps), notice or "Done."


FILL_MASK_EXAMPLE = "The capital of France is [MASK]."
GET_BERT = ("`python -m transformer.pretrained bert-base-uncased` downloads bert-base-uncased (440 MB) where the "
            "Hugging Face Hub is reachable; restart the app and pick **bert-base-uncased (pretrained)**.")


def fill_mask_notice(ckpt: str) -> str:
    """Why fill the mask cannot run on `ckpt` (not an encoder-only model), and how to get one that can."""
    berts = pretrained_of_arch("encoder-only")
    if berts:
        return (f"Fill the mask needs an encoder-only model (BERT); {ckpt} is not one. Pick "
                f"{' or '.join(f'**{name}**' for name in berts)} in the checkpoint list.")
    return ("Fill the mask needs an encoder-only model (BERT), and none is in this machine's Hugging Face cache. "
            + GET_BERT)


@handler
def run_fill_mask(ckpt, text, top_k, request: gr.Request = None):
    """(table of the top tokens at each [MASK], notice): what an encoder-only model predicts where words are missing;
    for any other model, a notice saying which model can and how to get one."""
    key = browser_key(request)
    text = check_text(text, "text")
    top_k = check_number(top_k, "Top tokens per mask", *FILL_MASK_TOP, integer=True)
    _, _, info = resolve(ckpt, key)
    if info["model"]["arch"] != "encoder-only":
        return None, fill_mask_notice(ckpt)
    return fill_mask_on_gpu(model_ref(ckpt, key), text, top_k)


@gpu(duration=10)
@handler
def fill_mask_on_gpu(source: ModelRef, text: str, top_k: int):
    model, tok, _ = source.load()
    guesses = fill_mask(model, tok, text, top_k)
    rows = [{"mask": n + 1, "rank": rank + 1, "token": token, "probability": round(p, 4)}
            for n, guess in enumerate(guesses) for rank, (token, _, p) in enumerate(guess.candidates)]
    notice = (f"{len(guesses)} masks: each row is P(token | every other token), read in both directions at once."
              if len(guesses) > 1 else "Each row is P(token | every other token), read in both directions at once.")
    return pd.DataFrame(rows, columns=["mask", "rank", "token", "probability"]), notice


def clear_generate(*generated):
    """Before a run: no output, table, plots or notice of the previous run stay on screen; what the run is made of
    (`generated`: checkpoint, prompt, decoding controls) is kept for its link (tabs.generate_link)."""
    return "", None, None, gr.update(value=0, interactive=False), "", None, None, generated


@handler
def inspect_step(gen_state, step, page_width=None):
    """For generated token `step`: its top alternatives, and where it looked (last layer, mean over heads) in the
    forward pass that produced it (transformer.interpretability.probe.record_step: the same context, the same weights):
    over more keys than fit readable on the page (`page_width`, px; visualize.bars_shown), the window of them holding
    the most weight, which the title names."""
    if not gen_state or not gen_state["output"]:
        return viz.empty_curves("Generate something first"), viz.empty_curves("")
    source = model_ref(gen_state["ckpt"], gen_state["key"])
    step = check_index(step, "step", len(gen_state["output"]))
    chosen, pattern, query = step_on_gpu(source, gen_state["input"], gen_state["output"], step)
    probs = viz.token_probabilities(chosen, gen_state["top"][step], title=f"step {step}: the model's top choices")
    weights = pattern.weights[-1, :, query].mean(0)  # (S,): last layer, mean of heads
    size = viz.bars_shown(page_width, ATTENTION_CAP)
    shown = heaviest_window(weights, size)  # where the weight is, when there are more keys than fit
    cut = (f"; tokens {shown.start}-{shown.stop - 1} of {len(weights)}, holding {float(weights[shown].sum()):.0%} "
           f"of its weight" if len(weights) > size else "")
    where = viz.attended_bar(weights[shown], pattern.key_tokens[shown],
                             title=f"where {html_text(repr(chosen))} looked (last layer, mean of heads{cut})")
    return probs, where


@gpu(duration=10)
@handler
def step_on_gpu(source: ModelRef, input_ids: list[int], output_ids: list[int], step: int):
    """(token, pattern, query row) of the forward pass that produced generated token `step`."""
    model, tok, _ = source.load()
    pattern, query = record_step(model, tok, input_ids, output_ids, step)
    return tok.id_to_token(output_ids[step]), pattern, query


def build_generate_tab(ckpt, followers: Followers, page_width: gr.State):
    with gr.Tab("Generate", id="generate"):
        gr.Markdown("Type a prompt (language model) or a task input (seq2seq models), then watch the tokens arrive.")
        about = gr.Markdown(description(ckpt.value, ""), elem_id="gen-about")  # what the checkpoint expects
        with gr.Row():
            prompt = gr.Textbox(label="Prompt or task input", lines=3, max_length=MAX_PROMPT_CHARS, scale=4,
                                elem_id="gen-prompt")
            with gr.Column(scale=1):
                example = gr.Button("New example", elem_id="gen-example")
                go = gr.Button("Generate", variant="primary", elem_id="gen-go")
        with gr.Row():
            strategy = Radio(list(STRATEGIES), value="greedy", label="Decoding", elem_id="gen-decoding")
            temperature = Slider(*GENERATE["temperature"], value=OPENING["temperature"], step=0.05,
                                 label="Temperature (sample)")
            top_k = Slider(*GENERATE["top_k"], value=OPENING["top_k"], step=1, label="Top-k (0 = off)")
            top_p = Slider(*GENERATE["top_p"], value=OPENING["top_p"], step=0.05, label="Top-p (1 = off)")
        with gr.Row():
            num_beams = Slider(*GENERATE["num_beams"], value=OPENING["num_beams"], step=1, label="Beams (beam)")
            max_new = Slider(*GENERATE["max_new_tokens"], value=OPENING["max_new_tokens"], step=1,
                             label="Max new tokens")
            seed = Number(value=OPENING["seed"], precision=0, label="Seed (-1 = random)", elem_id="gen-seed")
        notice = gr.Markdown(elem_id="gen-notice")
        output = gr.Textbox(label="Output", lines=6, elem_id="gen-output", buttons=["copy"])
        link = copy_link_row("gen-link", "Copy link to this generation",
                             "a link that generates this again: same model, prompt and decoding")
        table = gr.Dataframe(label="Each step: the token, its probability, the alternatives", max_height=300)
        gen_state = gr.State(None)
        generated = gr.State(None)  # the run on screen's settings, for its link (tabs.generate_link)
        linked = gr.Checkbox(False, visible=False)  # a link's generation is being opened (the page reads it)
        picker = index_control(2, label="Pick a generated token", interactive=False, elem_id="gen-picker")
        with gr.Row():
            probs_plot = figure("Top alternatives", "gen-probs")
            where_plot = figure("Where it looked", "gen-where")
        gr.Markdown("### Fill the mask\nAn encoder-only model (BERT) does not write text: it reads a whole text at "
                    "once, both directions, and guesses the words written **[MASK]**.")
        with gr.Row():
            mask_text = gr.Textbox(value=FILL_MASK_EXAMPLE, label="Text with [MASK]", lines=2, scale=4,
                                   max_length=MAX_PROMPT_CHARS, elem_id="mask-text")
            with gr.Column(scale=1):
                mask_top = Slider(*FILL_MASK_TOP, value=5, step=1, label="Top tokens per mask")
                mask_go = gr.Button("Fill the mask", variant="primary", elem_id="mask-go")
        mask_notice = gr.Markdown(elem_id="mask-notice")
        mask_table = gr.Dataframe(label="The likeliest tokens at each mask", max_height=300, elem_id="mask-table")
    example.click(example_input, ckpt, prompt, api_name="example")
    mask_go.click(run_fill_mask, [ckpt, mask_text, mask_top], [mask_table, mask_notice], api_name="fill_mask",
                  concurrency_limit=GENERATE_CONCURRENCY, concurrency_id="generate")
    followers.add(decoding_for, [strategy, about], inputs=[linked])
    inputs = [ckpt, prompt, strategy, temperature, top_k, top_p, num_beams, max_new, seed]
    cleared = [output, table, gen_state, picker, notice, probs_plot, where_plot, generated]
    inspect = dict(fn=inspect_step, inputs=[gen_state, picker, page_width], outputs=[probs_plot, where_plot])
    picker.change(**inspect, api_name="inspect_step", trigger_mode="always_last", show_progress="hidden")
    for trigger, api in ((go.click, "generate"), (prompt.submit, None)):
        trigger(clear_generate, inputs, cleared, queue=False, api_visibility="private").then(
            run_generate, inputs, [output, table, gen_state, picker, notice], api_name=api,
            api_visibility="public" if api else "private", concurrency_limit=GENERATE_CONCURRENCY,
            concurrency_id="generate").then(
            **inspect, api_visibility="private")
    return dict(prompt=prompt, controls=inputs[2:], outputs=[output, table, gen_state, picker, notice],
                inspect=inspect, generated=generated, linked=linked, link=link)
