"""A link to a generation (issue 29): "Copy link to this generation" in the Generate tab makes a link of the
checkpoint, the prompt and the decoding controls the output on screen was generated with (not what the boxes say
after an edit); opened in any browser, the page's load (tabs.attention.link.open_link) puts them into the controls
and the link's generation runs as Generate runs it. store.view_link owns the fields of the link and their checks;
this module turns them into the tab's controls and back."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from checks import UserError
from store.view_link import DECODING, View, Vocabulary, to_query
from tabs.generation import Generated, run_generate
from widgets.answers import Answer

FIELDS = ("decoding", *DECODING)  # the View fields of the decoding controls, in the tab's order (strategy first)


def generation_query(vocab: Vocabulary, generated) -> str:
    """The query of the link to the generation on screen: `generated` = (checkpoint, prompt, strategy, temperature,
    top-k, top-p, beams, max new tokens, seed) of its run (tabs.generate.clear_generate keeps them)."""
    if not generated:
        raise UserError("press Generate first: the link generates the output on the screen again")
    ckpt, prompt, *controls = generated
    return to_query(View(tab="generate", ckpt=ckpt, prompt=prompt, **dict(zip(FIELDS, controls))), vocab)


@dataclass(frozen=True)
class LinkedDecoding(Answer):
    """What a link sets in the Generate tab: the prompt, the decoding controls, and the switch that runs the link's
    generation once the page has them (widgets.answers: each field sets the tab's component of its name)."""

    prompt: Any
    strategy: Any
    temperature: Any
    top_k: Any
    top_p: Any
    num_beams: Any
    max_new: Any
    seed: Any
    linked: Any


def generate_updates(view: View) -> LinkedDecoding:
    """The prompt and the decoding controls (a field the link does not set is kept), and the switch that runs the
    link's generation once the page has them (left off when the link has no prompt)."""
    keep = gr.update()
    controls = tuple(keep if getattr(view, name) is None else getattr(view, name) for name in FIELDS)
    if view.prompt is None:
        return LinkedDecoding(keep, *controls, keep)
    return LinkedDecoding(view.prompt, *controls, True)


@dataclass(frozen=True)
class LinkedGeneration(Answer):
    """An update of the link's generation (the Generate tab's own) and what it was made of, for its own link."""

    run: Generated
    generated: Any


def generate_linked(linked, ckpt, prompt, *controls, request: gr.Request = None):
    """The link's generation, as Generate runs it (tabs.generate.run_generate) with the controls the link set, and
    what it was made of (for its own link); nothing when the page was not opened by a link to a generation."""
    if not linked:
        yield LinkedGeneration(Generated(*[gr.skip()] * 5), gr.skip())
        return
    made_of = (ckpt, prompt, *controls)
    for update in run_generate(ckpt, prompt, *controls, request=request):
        yield LinkedGeneration(update, made_of)
