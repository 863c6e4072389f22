"""Generate tab: tokens stream out of a checkpoint, with each step's probability and where it looked."""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import gradio as gr

import visualize as viz
from visualize.key_window import heaviest_window
from visualize.text import html_text
from transformer.data import INDUCTION_ALPHABET, TASKS
from transformer.generate import STRATEGIES
from transformer.interpretability.probe import record_step
from transformer.translation import TASK as TRANSLATION
from transformer.translation.corpus import example_verse

from checks import check_index
from limits import ATTENTION_CAP, FILL_MASK_TOP, GENERATE, GENERATE_CONCURRENCY, MAX_PROMPT_CHARS
from store.catalogue import ModelRef, description, model_ref, resolve
from store.gpu import gpu
from store.sessions import browser_key
from tabs.figure_export import figure
from tabs.fill_mask import FILL_MASK_EXAMPLE, Filled, run_fill_mask
from tabs.generation import OPENING, Generated, generate_on_gpu, repeats_itself, run_generate, \
    translate_as_generate
from widgets.answers import Answer, Components, answered, named_outputs
from widgets.controls import Number, Radio, Slider, index_control
from widgets.errors import handler
from widgets.link import copy_link_row
from widgets.ui import Followers

__all__ = ["OPENING", "build_generate_tab", "clear_generate", "decoding_for", "generate_on_gpu",
           "inspect_step", "repeats_itself", "run_generate", "translate_as_generate"]  # the tests' and tabs' names

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


@dataclass(frozen=True)
class Decoding(Answer):
    """The decoding control and the line about the checkpoint (widgets.answers: each field sets the tab's component
    of its name)."""

    strategy: Any
    about: Any


@handler
def decoding_for(ckpt, linked=None, request: gr.Request = None) -> Decoding:
    """The decoding a checkpoint opens with: beam search for the translation model (as the paper translates,
    section 6.1), the control left as it is for the others and while a link's generation is opened (`linked`:
    the link set it); and what the checkpoint was trained on and expects."""
    key = browser_key(request)
    _, _, info = resolve(ckpt, key)
    beam = info.get("task") == TRANSLATION and not linked
    return Decoding(gr.update(value="beam") if beam else gr.update(), description(ckpt, key))


@dataclass(frozen=True)
class Inspected(Answer):
    """A generated token's top alternatives and where it looked (widgets.answers)."""

    probs: Any
    where: Any


@dataclass(frozen=True)
class GenerateCleared(Answer):
    """Before a run: the last run's output and figures gone, and what the run is made of (for its link)."""

    run: Generated
    inspected: Inspected
    generated: Any


def clear_generate(*generated) -> GenerateCleared:
    """Before a run: no output, table, plots or notice of the previous run stay on screen; what the run is made of
    (`generated`: checkpoint, prompt, decoding controls) is kept for its link (tabs.generate_link)."""
    return GenerateCleared(Generated("", None, None, gr.update(value=0, interactive=False), ""),
                           Inspected(None, None), generated)


@handler
def inspect_step(gen_state, step, page_width=None) -> Inspected:
    """For generated token `step`: its top alternatives, and where it looked (last layer, mean over heads) in the
    forward pass that produced it (transformer.interpretability.probe.record_step: the same context, the same weights):
    over more keys than fit readable on the page (`page_width`, px; visualize.bars_shown), the window of them holding
    the most weight, which the title names."""
    if not gen_state or not gen_state["output"]:
        return Inspected(viz.empty_curves("Generate something first"), viz.empty_curves(""))
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
    return Inspected(probs, where)


@gpu(duration=10)
@handler
def step_on_gpu(source: ModelRef, input_ids: list[int], output_ids: list[int], step: int):
    """(token, pattern, query row) of the forward pass that produced generated token `step`."""
    model, tok, _ = source.load()
    pattern, query = record_step(model, tok, input_ids, output_ids, step)
    return tok.id_to_token(output_ids[step]), pattern, query


def build_generate_tab(ckpt, followers: Followers, page_width: gr.State) -> Components:
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
    inspected = Components(probs=probs_plot, where=where_plot)  # the picked token's figures
    inspect = dict(fn=answered(inspected, inspect_step), inputs=[gen_state, picker, page_width],
                   outputs=named_outputs(inspected, Inspected))
    # the tab's components by name, for its answers to set and for a link to a generation to drive
    # (tabs.attention.link, tabs.generate_link): `controls` in run_generate's order, `link` the copy-link row's
    # (button, box), `inspect` the event that draws the picked token's figures
    tab = Components(prompt=prompt, strategy=strategy, temperature=temperature, top_k=top_k, top_p=top_p,
                     num_beams=num_beams, max_new=max_new, seed=seed, about=about, notice=notice, output=output,
                     table=table, gen_state=gen_state, picker=picker, inspected=inspected, inspect=inspect,
                     generated=generated, linked=linked, link=link, mask_table=mask_table, mask_notice=mask_notice,
                     controls=[strategy, temperature, top_k, top_p, num_beams, max_new, seed])
    example.click(example_input, ckpt, prompt, api_name="example")
    mask_go.click(answered(tab, run_fill_mask), [ckpt, mask_text, mask_top], named_outputs(tab, Filled),
                  api_name="fill_mask", concurrency_limit=GENERATE_CONCURRENCY, concurrency_id="generate")
    followers.add(decoding_for, tab, Decoding, inputs=[linked])
    inputs = [ckpt, prompt, *tab.controls]
    picker.change(**tab.inspect, api_name="inspect_step", trigger_mode="always_last", show_progress="hidden")
    for trigger, api in ((go.click, "generate"), (prompt.submit, None)):
        trigger(answered(tab, clear_generate), inputs, named_outputs(tab, GenerateCleared), queue=False,
                api_visibility="private").then(
            answered(tab, run_generate), inputs, named_outputs(tab, Generated), api_name=api,
            api_visibility="public" if api else "private", concurrency_limit=GENERATE_CONCURRENCY,
            concurrency_id="generate").then(
            **tab.inspect, api_visibility="private")
    return tab

