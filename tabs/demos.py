"""One-click demos for a class: the buttons above the tabs, and what a click sets (the checkpoint, the input, the
view and what to look for) and runs. The demos themselves, as data, are tabs.demo_list.

The head a demo opens is the one that scores best on the demo's score (tabs.attention.choose.focus_head), or for a
demo of the value-weighted norms the one where they look most unlike the weights (demo_focus), never a hard-coded
layer and head, so a retrained checkpoint still opens on the right head.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from store.catalogue import fixed_choices
from store.saes import main_head
from tabs.ask_first import ask_first_row, in_view_when_drawn
from tabs.attention.views import SHOW
from tabs.attention.figure_cache import Figures
from tabs.attention.patching import Patched
from tabs.demo_list import DEMOS, Demo
from tabs.train.tab import Recipe
from tabs.train.request import HYPER_PARAMETERS
from widgets.answers import Answer, Components, answered, named_outputs
from widgets.errors import refusal

__all__ = ["DEMOS", "Demo", "DemoSets", "apply_demo", "available_demos", "demo_buttons", "demo_focus",
           "demo_on_screen", "runs", "wire_demos"]


def available_demos() -> list[Demo]:
    """The demos whose checkpoint is here (shipped, or pretrained in the local Hugging Face cache), and those that
    say how to get theirs."""
    return [d for d in DEMOS if d.ckpt is None or d.missing or d.ckpt in fixed_choices()]


def runs(demo: Demo) -> bool:
    """Whether the demo can run here: its checkpoint (if any) is shipped or cached."""
    return demo.ckpt is None or demo.ckpt in fixed_choices()


@dataclass(frozen=True)
class PatchSets(Answer):
    """What a patching demo sets in the patching section (tabs.attention.patching.PatchSection): the section opened
    and marked open (so it draws), its answer tokens, the position, and its figures cleared."""

    section: Any
    shown: Any
    answer: Any
    other: Any
    position: Any
    figures: Patched


@dataclass(frozen=True)
class FeatureSets(Answer):
    """What a demo of "What the heads write" sets in that section (tabs.attention.features): the section opened and
    marked open (so it draws when the record arrives), the demo's row, and its feature the one to open."""

    section: Any
    shown: Any
    position: Any
    opened: Any


@dataclass(frozen=True)
class DemoSets(Answer):
    """What a demo's click sets, each field the component of its name (widgets.answers): the tab, the
    checkpoint, the Attention tab's input, target, focus and overview colour, the explanation, the Train tab's source
    and task, the words and "Cells show" switches, the Attention tab's record and figures, the recipe and the
    patching section."""

    tabs: Any
    ckpt: Any
    text: Any
    target: Any
    focus: Any
    score: Any
    explain: Any
    source: Any
    task: Any
    words: Any
    cells: Any
    record: Any
    figures: Figures
    recipe: Recipe
    text_b: Any
    patch: PatchSets
    features: FeatureSets


@dataclass(frozen=True)
class DemoNote(Answer):
    """A demo whose checkpoint is not here: only its explanation, which says how to get it."""

    explain: Any


def apply_demo(label: str, ckpt: str) -> DemoSets | DemoNote:
    """What a demo's click sets (DemoSets); a demo whose checkpoint is not here only says how to get it (DemoNote).
    An attention demo clears the record and the figures in the same update that shows its explanation, so the
    previous input's heads are never seen under the new explanation (the Attention tab shows its progress on the
    empty heatmap until the demo's head is drawn).
    """
    demo = next((d for d in available_demos() if d.label == label), None)
    if demo is None:
        raise refusal(f"unknown demo {str(label)[:40]!r}")
    if not runs(demo):
        return DemoNote(f"**{demo.label}.** {demo.missing}")
    keep = gr.update()
    cleared = Figures() if demo.kind else Figures(keep, keep, keep, keep)
    recipe = Recipe(**(demo.recipe or dict.fromkeys(HYPER_PARAMETERS, keep)))
    return DemoSets(tabs=gr.Tabs(selected=demo.tab), ckpt=demo.ckpt or ckpt, text=demo.text or keep,
                    target=demo.target if demo.text else keep, focus=demo_focus(demo) if demo.kind else None,
                    score=demo.score or keep, explain=f"**{demo.label}.** {demo.explain}",
                    source="task" if demo.task else keep, task=demo.task or keep,
                    words=demo.words if demo.kind else keep, cells=demo.show if demo.kind else keep,
                    record=None if demo.kind else keep, figures=cleared, recipe=recipe,
                    text_b=demo.text_b or keep, patch=patch_sets(demo), features=feature_sets(demo))


def demo_on_screen(ckpt, text, target, kind, show, words, score=None) -> Demo | None:
    """The demo whose question a class can be asked about the one-head heatmap computed from checkpoint `ckpt` on
    (`text`, `target`) and drawn as `kind` with `show` and `words`: an attention demo of that view (any head: its
    rule reads the heatmap shown) whose question has choices, the one of overview colour `score` first (Previous-
    token head and Induction head open one input); None when no such demo shows it."""
    shown = [d for d in DEMOS if d.question is not None and d.question.choices is not None
             and d.question.figure == "att-one" and (d.ckpt, d.text, d.target, d.kind, d.show, bool(d.words))
             == (ckpt, text, target, kind, show, bool(words))]
    return next((d for d in shown if d.score == score), shown[0] if shown else None)


def demo_focus(demo: Demo) -> tuple:
    """What the Attention tab opens an attention demo on (tabs.attention.page.compute_attention): (checkpoint, kind,
    score), the head that scores best on it; a demo of the value-weighted norms adds the view, and opens the head of
    its input where they look most unlike the weights (tabs.attention.views.norms_focus)."""
    if demo.features:  # the head that writes most of the feature (its decoder row's largest share: store.saes)
        layer, _, feature = demo.features
        return demo.ckpt, demo.kind, demo.score, layer, main_head(demo.ckpt, demo.kind, layer, feature)
    return (demo.ckpt, demo.kind, demo.score) + ((demo.show,) if demo.show != SHOW[0] else ())


def patch_sets(demo: Demo) -> PatchSets:
    """A patching demo's second input, the section opened (and marked open, so it draws), its answers, the
    automatic position, and the section's figures cleared: the previous pair's grids are never seen under the new
    explanation, and the page brings the heads grid into view once it is drawn anew (in_view_when_drawn waits for
    a drawn figure). Other demos leave them."""
    keep = gr.update()
    if not demo.text_b:
        return PatchSets(keep, keep, keep, keep, keep, Patched(*(keep,) * 7))
    return PatchSets(gr.Accordion(open=True), True, *demo.answers, -1, Patched(keep, head_note=keep))


def feature_sets(demo: Demo) -> FeatureSets:
    """A demo of the features: their section opened (and marked open, so it draws when the record arrives) at the
    demo's row, its feature the one to open (the section opens it while it is active there). Other demos leave it."""
    keep = gr.update()
    if not demo.features:
        return FeatureSets(keep, keep, keep, keep)
    return FeatureSets(gr.Accordion(open=True), True, demo.features[1],
                       gr.update(choices=[str(demo.features[2])], value=str(demo.features[2])))


def demo_buttons():
    """A row of demo buttons (built above the tabs) and the sentence that says what to look for; with "Ask first"
    on, a demo that has a question asks it first (ask_first_row). The question or answer and the sentence are the
    demo's notes (#demo-notes), which a projector keeps in view above the figure they are about."""
    with gr.Row(elem_id="demo-row"):
        gr.Markdown("**Demos:**", elem_id="demo-label")
        ask_first = gr.Checkbox(False, label="Ask first", elem_id="demo-ask-first", scale=0, min_width=0)
        buttons = [gr.Button(d.label, size="sm", elem_id=f"demo-{i}", min_width=120)
                   for i, d in enumerate(available_demos())]
    with gr.Column(elem_id="demo-notes"):  # pinned at a projector's top while the page scrolls (app.py's CSS)
        ask_first_row(buttons, [d.question if runs(d) else None for d in available_demos()],
                      [d.label for d in available_demos()], ask_first)
        explain = gr.Markdown(elem_id="demo-explain")
    return buttons, explain


def wire_demos(buttons, explain, tabs, ckpt, attention, train):
    """Each button sets the checkpoint, input and view of its demo; attention demos then compute the heatmap."""
    targets = Components(  # what a demo's click sets (DemoSets), by the names of its fields
        tabs=tabs, ckpt=ckpt, text=attention.text, target=attention.target, focus=attention.focus,
        score=attention.score, explain=explain, source=train.source, task=train.task, words=attention.words,
        cells=attention.cells, record=attention.record, one=attention.one, grid=attention.grid,
        overview=attention.overview, table=attention.table, **train.hyper, text_b=attention.text_b,
        patch=attention.patch,  # the patching section's own (tabs.attention.patching.PatchSection)
        features=attention.features)  # "What the heads write"'s own (tabs.attention.features)
    outputs = named_outputs(targets, DemoSets)
    for button, d in zip(buttons, available_demos()):
        event = button.click(answered(targets, apply_demo), [gr.State(d.label), ckpt], outputs,
                             api_visibility="private", queue=False)
        if not runs(d):
            continue
        # the figure it is about in view once drawn (the page scrolls only when it is not: no server call); a
        # patching demo's heads grid is drawn later, once the second input's record has arrived; what a training
        # demo streams to as soon as the Train tab shows it (the Sinusoid waves' matrix was never brought into view)
        in_view = dict(fn=None, inputs=None, outputs=None, js=in_view_when_drawn(d.figure, streaming=d.streams),
                       api_visibility="private")
        if d.kind:  # recompute even when the checkpoint did not change (its .change then does not fire)
            drawn = attention.compute_after(event.then, api_visibility="private")
            drawn.then(**in_view)
            if d.text_b:  # then the second input: the patching section draws the pair when it arrives
                drawn.then(**attention.compare, api_visibility="private")
        else:
            event.then(**in_view)
        if d.watch:
            train.watch_after(event.then, api_visibility="private")
