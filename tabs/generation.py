"""A generation's run for the Generate tab: its decoding controls checked, the tokens streamed with the table of
steps (at most STREAM_UPDATES_PER_SECOND updates a second) as the tab's answers (Generated), a decoding loop
noticed, and what the tab writes for a translation model's opening settings (the translation demo shows it)."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from transformer.generate import STRATEGIES, generate
from transformer.interpretability.probe import encode_input
from transformer.memory import check_generation_memory

from checks import check_choice, check_number, check_text, unknown_notice
from limits import GENERATE, GENERATION_BYTES, STREAM_UPDATES_PER_SECOND
from store.about import trained_on
from store.catalogue import ModelRef, model_ref, pretrained
from store.gpu import gpu
from store.sessions import browser_key
from widgets.answers import Answer
from widgets.controls import index_slider
from widgets.errors import handler

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


def _step_table(tokenizer, steps) -> pd.DataFrame:
    rows = [{"step": i, "token": repr(tokenizer.id_to_token(s.token_id)), "probability": round(s.prob, 3),
             "alternatives": "  ".join(f"{tokenizer.id_to_token(t)!r} {p:.2f}" for t, p in s.top if t != s.token_id)}
            for i, s in enumerate(steps)]
    return pd.DataFrame(rows, columns=["step", "token", "probability", "alternatives"])


@dataclass(frozen=True)
class Generated(Answer):
    """One update of a generation: the text so far, the table of steps, the finished run (for its steps' figures:
    None until the last update), the token picker and the notice (widgets.answers)."""

    output: Any
    table: Any
    gen_state: Any
    picker: Any
    notice: Any


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
        yield Generated(text, table, state, picker, notice)


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
