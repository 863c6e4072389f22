"""What a teacher can show every device of a class, and how each view is drawn once for the class (issue 39).

A view is named by the figure a demo is about (tabs.demos.Demo.figure, the one owner of where a demo takes the
page): the Attention tab's open head ("att-one"), the heads grid of "What a head does" ("patch-heads": the patching
demos) and the Positional tab's sinusoidal matrix (tabs.positional.PE_MATRIX: "Sinusoid waves"). A demo's click
sets the teacher's choice to its own view (tabs/classroom/page.py); the Train tab's run ("train-status") streams to
the page that started it and is not pushed: the push says so in words.

Each view is drawn here from what the teacher's page already computed: the record of Show attention, the pair's
grids of the patching section (store.record_cache: the same cache entry), or the sinusoids of the tab's two sliders
(no model at all). The push is answered outside the queue, where no model may run (server.unqueued): a view whose
numbers are not computed any more is refused in words, never computed here.
"""
from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from checks import UserError
from store.catalogue import model_ref
from store.classes import Pushed
from store.gpu import ModelRefused
from store.sessions import browser_key
from store.view_link import View, to_query
from tabs.attention.link import link_query
from tabs.attention.figure_cache import draw_cached
from tabs.attention.patching import pair_grids, pair_inputs
from tabs.attention.patching_figures import boxes, heads_figure
from tabs.demos import DEMOS, Demo, demo_on_screen
from tabs.positional import PE_MATRIX, sinusoids
from visualize.reading import heatmap_cells
from visualize.style import PHONE_WIDTH
from widgets.figure_table import Plot

HEAD, PAIR, TRAINING = "att-one", "patch-heads", "train-status"
VIEWS = {HEAD: "The Attention tab's open head", PAIR: "The patching heads grid (What a head does)",
         PE_MATRIX: "The sinusoidal matrix (Positional encoding)", TRAINING: "The Train tab's run"}  # figure -> label
NOT_PUSHED = {TRAINING: "the Train tab's run streams to the page that started it, so a class follows it on the "
                        "projector: show everyone the Attention tab's head, the patching heads grid or the sinusoids"}
_plot = Plot()  # each figure named and described once, as the page's own figures are (widgets.figure_table)


@dataclass(frozen=True)
class HeadView:
    """The Attention tab's open head as the teacher's page holds it: the record, its checkpoint and (input,
    target), and the switches it is drawn with."""
    record: object
    made_by: object
    given: object
    kind: object
    layer: object
    head: object
    cells: object
    words: object
    score: object


@dataclass(frozen=True)
class PairView:
    """The patching section's pair: the second input's record and text, its answer tokens and position."""
    record_b: object = None
    given_b: object = None
    answer: object = ""
    other: object = ""
    position: object = -1


@dataclass(frozen=True)
class SinusoidView:
    """The Positional tab's two sliders the sinusoidal matrix is drawn from."""
    d_model: object = 128
    length: object = 100


def view_of(demo: Demo) -> str:
    """The view a demo's click leaves on the teacher's page (the one its figure is in)."""
    return demo.figure if demo.figure in VIEWS else HEAD


def pushed_view(which, vocab, head: HeadView, pair: PairView, waves: SinusoidView, request: gr.Request = None) \
        -> Pushed:
    """The view `which` (a key of VIEWS) drawn once for the class, from what the teacher's page computed."""
    if which in NOT_PUSHED:
        raise UserError(f"{VIEWS[which]} cannot be shown on every device: {NOT_PUSHED[which]}")
    if which == PE_MATRIX:
        _, figure = sinusoids(waves.d_model, waves.length)
        demo = next(d for d in DEMOS if d.figure == PE_MATRIX)
        return _pushed(to_query(View(tab="positional"), vocab), figure, demo, PE_MATRIX)
    if which not in (HEAD, PAIR):
        raise UserError(f"choose the view to show: {', '.join(VIEWS.values())}")
    if head.record is None or head.made_by is None:
        raise UserError("press Show attention first (or click a demo): the class is shown the view on screen")
    if which == PAIR:
        return _pair(vocab, head, pair, request)
    # drawn for a phone: its cells and labels keep their least size on a student's phone, and grow to the wider box
    # of a projector or a laptop (drawn for a projector, a phone got 13 px wide cells: tests/browser/test_class_session)
    one = draw_cached(head.record, head.kind, head.layer, head.head, head.score, head.cells, head.words, head.made_by,
                      PHONE_WIDTH, request).one
    demo = demo_on_screen(head.made_by, *(head.given or ("", "")), head.kind, head.cells, head.words,
                          head.score)
    return _pushed(_link(vocab, head, ""), one, demo, HEAD)


def _pair(vocab, head: HeadView, pair: PairView, request) -> Pushed:
    """The heads grid of the pair on the teacher's page (the patching section's cached grids)."""
    if pair.record_b is None or pair.given_b is None:
        raise UserError("open *What a head does* with a second input (a patching demo, or Compare in *Two inputs "
                        "side by side*) and wait for its heads grid: the class is shown that grid")
    args = pair_inputs(head.record, pair.record_b, pair.answer, pair.other, pair.position)
    try:
        kind, grids = pair_grids(model_ref(head.made_by, browser_key(request)), head.record, args, head.kind)
    except ModelRefused:  # not drawn on the teacher's page, or no longer kept: a push computes nothing
        raise UserError("the heads grid of this pair is not computed here: open *What a head does* (or press "
                        "Patch), wait for its heads grid, then show everyone this view") from None
    if "refused" in grids:
        raise UserError(f"this pair cannot be patched: {grids['refused']}")
    figure, _, _ = heads_figure(grids, kind, head.layer, head.head, boxes(PHONE_WIDTH)[1])
    given = head.given or ("", "")
    demo = next((d for d in DEMOS if d.figure == PAIR and (d.ckpt, d.text, d.text_b, d.kind) ==
                 (head.made_by, given[0], pair.given_b, kind)), None)
    return _pushed(_link(vocab, head, "patch", pair), figure, demo, PAIR)


def _link(vocab, head: HeadView, sections: str, pair: PairView = PairView()) -> str:
    """The query of the link to the view pushed ("" for a model trained in the teacher's browser: no link)."""
    try:
        return link_query(vocab, head.made_by, head.given, head.record, head.kind, head.layer, head.head, head.cells,
                          head.words, head.score, sections, given_b=pair.given_b, record_b=pair.record_b,
                          answer=pair.answer, other=pair.other, patch_position=pair.position)
    except UserError:
        return ""


def _pushed(query: str, figure, demo: Demo | None, which: str) -> Pushed:
    """The Pushed record of a figure (a plotly figure, or one already as gr.Plot sends it)."""
    figure = figure if hasattr(figure, "plot") else _plot.postprocess(figure)
    read = heatmap_cells(figure.plot)
    return Pushed(query, figure, tuple(read.rows), tuple(read.columns), demo.label if demo else "", which)
