"""The Generate tab's "Fill the mask": what an encoder-only model (BERT) predicts at each [MASK] of a text, read in
both directions at once; for any other model, which model can and how to get one."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from transformer.fill_mask import fill_mask

from checks import check_number, check_text
from limits import FILL_MASK_TOP
from store.catalogue import ModelRef, model_ref, pretrained_of_arch, resolve
from store.gpu import gpu
from store.sessions import browser_key
from widgets.answers import Answer
from widgets.errors import handler

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


@dataclass(frozen=True)
class Filled(Answer):
    """The table of the top tokens at each [MASK] and the notice (widgets.answers)."""

    mask_table: Any
    mask_notice: Any


@handler
def run_fill_mask(ckpt, text, top_k, request: gr.Request = None) -> Filled:
    """The table of the top tokens at each [MASK] and a notice: what an encoder-only model predicts where words are missing;
    for any other model, a notice saying which model can and how to get one."""
    key = browser_key(request)
    text = check_text(text, "text")
    top_k = check_number(top_k, "Top tokens per mask", *FILL_MASK_TOP, integer=True)
    _, _, info = resolve(ckpt, key)
    if info["model"]["arch"] != "encoder-only":
        return Filled(None, fill_mask_notice(ckpt))
    return Filled(*fill_mask_on_gpu(model_ref(ckpt, key), text, top_k))


@gpu(duration=10)
@handler
def fill_mask_on_gpu(source: ModelRef, text: str, top_k: int) -> tuple[pd.DataFrame, str]:
    """(the table of the top tokens at each [MASK], the notice under it)."""
    model, tok, _ = source.load()
    guesses = fill_mask(model, tok, text, top_k)
    rows = [{"mask": n + 1, "rank": rank + 1, "token": token, "probability": round(p, 4)}
            for n, guess in enumerate(guesses) for rank, (token, _, p) in enumerate(guess.candidates)]
    notice = (f"{len(guesses)} masks: each row is P(token | every other token), read in both directions at once."
              if len(guesses) > 1 else "Each row is P(token | every other token), read in both directions at once.")
    return pd.DataFrame(rows, columns=["mask", "rank", "token", "probability"]), notice
