"""Predict, then reveal (issue 29, "what teachers ask"): every question a demo asks is true of the figure the class
is then shown. Oracle: the figure itself, computed afresh as the page gets it (the same handlers, the demo's
checkpoint, input, head and view: weights or value-weighted norms, tokens or words) and read back as a viewer reads
it (visualize.reading: its cells and labels)."""
from __future__ import annotations

import json

import pytest

from tabs.attention.page import compute_attention, draw_view
from tabs.attention.patching import draw_patching
from tabs.attention.two_inputs import compare_inputs
from store.catalogue import SHIPPED
from tabs.demos import DEMOS, demo_focus
from tabs.positional import draw_positional
from tests.conftest import page_call
from visualize.reading import heatmap_cells

ASKING = [d for d in DEMOS if d.question]
PE_DEFAULTS = (128, 100, "0, 1, 6, 7, 40")  # the Positional tab's sliders as the page opens (tabs.positional)


def revealed_figure(demo) -> str:
    """The JSON of the figure the demo's question is about, as the page receives it after the demo's click."""
    request = page_call("questions")
    if demo.question.figure == "pe-matrix":
        return draw_positional(*PE_DEFAULTS, "reverse", request=request).matrix.to_json()
    opened = compute_attention(demo.ckpt, demo.text, demo.target, demo_focus(demo), request=request)
    view, record = opened.view, opened.record
    if demo.question.figure == "patch-heads":  # the second input's record, then the patching section's grids
        record_b = compare_inputs(demo.ckpt, record, demo.text_b, request=request)
        return draw_patching(demo.ckpt, record, record_b, *view, *demo.answers, -1, request=request).heads.to_json()
    one = draw_view(record, view, demo.score, demo.show, demo.words, demo.ckpt, None, request=request).one
    return one.plot


def test_every_demo_with_a_figure_to_hide_asks_something():
    """Every demo asks a question but the two that train live (their figure forms over minutes in front of the
    class: nothing to hide) and the two on GPT-2 (what its heads do is not known without GPT-2's weights here to
    check it): every question asked is checked below, on a shipped checkpoint."""
    unasked = {d.label for d in DEMOS if not d.question}
    assert unasked == {"Attention forming", "Induction forming", "IOI in GPT-2", "Induction in GPT-2"}
    assert all(d.ckpt in SHIPPED + [None] for d in ASKING), [d.label for d in ASKING if d.ckpt not in SHIPPED + [None]]


@pytest.mark.parametrize("demo", ASKING, ids=[d.label for d in ASKING])
def test_the_revealed_figure_gives_the_answer_the_demo_states(demo):
    """For every asking demo: the rule written beside it, applied to its freshly drawn figure, gives the answer it
    states (e.g. the argmax of the named row of the heatmap)."""
    cells = heatmap_cells(json.loads(revealed_figure(demo)))
    assert demo.question.rule(cells) == demo.question.expected, (demo.label, cells.rows, cells.columns)


CLASS_ASKED = [d for d in ASKING if d.question.figure == "att-one"]


def test_every_question_about_the_heatmap_can_be_sent_to_a_class():
    """A class is shown the one-head heatmap (tabs.classroom): each demo whose question is about it gives choices."""
    assert CLASS_ASKED and all(d.question.choices is not None for d in CLASS_ASKED)


@pytest.mark.parametrize("demo", CLASS_ASKED, ids=[d.label for d in CLASS_ASKED])
def test_a_class_is_marked_by_the_demos_own_rule(demo):
    """The choices a class gets on the demo's freshly drawn figure: distinct, within the class's bounds, and
    exactly one of them takes the answer the demo states (`expected`, which the rule reads off this figure: the
    test above); class_choices marks that one right."""
    from limits import CLASS

    cells = heatmap_cells(json.loads(revealed_figure(demo)))
    labels, right = demo.question.class_choices(cells)
    options = demo.question.choices(cells)
    assert len(set(labels)) == len(labels) and 2 <= len(labels) <= CLASS["choices"]
    assert all(0 < len(label) <= CLASS["choice_chars"] for label in labels)
    assert [i for i, o in enumerate(options) if o.fits(demo.question.expected)] == [right], (labels, right)
