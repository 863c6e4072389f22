"""Sliders fit the model (issue 19 item 7): the Attention tab's Layer and Head sliders range over the model's own
layers and heads, and where there is only one there is no slider promising a second (gradio refuses a slider whose
minimum equals its maximum, so it is hidden and the notice says "one layer (layer 0)"). Through the handlers'
outputs, with models trained here through the library (no shipped checkpoint has one layer or one head)."""
from __future__ import annotations

import json

import pytest

from store.catalogue import USER_MODELS
from tests.conftest import page_call
from tabs.attention.page import compute_attention, fit_sliders
from tabs.train.request import TrainingRequest, build_run
from widgets.controls import index_slider
from transformer.train import Trainer

KEY = "0123456789abcdef0123456789abcd19"  # a browser's key, in its page's cookie (store.sessions.browser_key)


def trained(layers: int, heads: int) -> str:
    """A reverse model of `layers` + `layers` layers and `heads` heads, trained 20 steps as the Train tab builds
    it, kept for this browser; its name in the checkpoint list."""
    request = TrainingRequest("task", "reverse", None, None, None, layers, heads, 32, 3e-3, 20, 8).validated()
    run = build_run(request)
    for _ in Trainer(run.model, run.tokenizer, run.data, run.train_cfg).run():
        pass
    name = USER_MODELS.reserve(KEY, "reverse")
    USER_MODELS.put(KEY, name, run.model, run.tokenizer, {"task": "reverse"})
    return name


def sliders(ckpt: str) -> tuple[str, dict, dict, dict]:
    """(notice, layer slider update, head slider update, query slider update) of Show attention on "attention"."""
    opened = compute_attention(ckpt, "attention", "", request=page_call(KEY))
    return opened.notice, opened.layer, opened.head, opened.query


@pytest.mark.parametrize("layers, heads", [(1, 1), (1, 4), (2, 1)])
def test_a_trained_models_sliders_range_over_its_own_layers_and_heads(layers, heads):
    """Regression: a 1-layer model's Layer slider read 0-1 (greyed); now it is hidden and the notice says the model
    has one layer; a slider with more than one choice is shown, interactive, from 0 to count - 1."""
    notice, layer, head, _ = sliders(trained(layers, heads))
    for update, count, name in ((layer, layers, "layer"), (head, heads, "head")):
        shown = update.get("visible", True)  # an update without "visible" leaves the slider shown
        assert shown is (count > 1) and update.get("interactive", True) is (count > 1), (name, update)
        assert 0 <= update["value"] <= count - 1
        if count > 1:
            assert update["maximum"] == count - 1
            assert f"one {name}" not in notice
        else:
            assert f"one {name} ({name} 0)" in notice


def test_the_shipped_models_keep_their_sliders():
    """reverse: 2 layers, 4 heads: both sliders shown over 0-1 and 0-3, and no "only one" note."""
    notice, layer, head, query = sliders("reverse")
    assert (layer["maximum"], layer.get("visible", True), head["maximum"], head.get("visible", True)) == \
        (1, True, 3, True)
    assert "nothing to choose" not in notice
    assert query.get("visible", True) and query["maximum"] >= 9  # the output's letters (and </s>) of "attention"


def test_switching_the_kind_refits_the_sliders():
    """fit_sliders (the kind radio's event) answers with the chosen kind's layers and heads; a layer beyond the
    kind's last is clamped, as the redraw clamps it, so the slider and the heatmap agree."""
    record = compute_attention("reverse", "attention", "", request=page_call(KEY)).record
    fitted = fit_sliders(record, "encoder self", 5, 2)
    layer, head = fitted.layer, fitted.head
    assert (layer["maximum"], layer["value"], head["maximum"], head["value"]) == (1, 1, 3, 2)


@pytest.mark.parametrize("count, value, expected", [(1, 0, (1, 0, False)), (2, 7, (1, 1, True)),
                                                    (64, 3, (63, 3, True))])
def test_index_slider(count, value, expected):
    """maximum, value and shown: never a range of one value (gradio raises on minimum >= maximum)."""
    update = index_slider(count, value)
    assert (update["maximum"], update["value"], update["visible"]) == expected


def test_the_grid_of_heads_has_two_columns_on_a_phone_and_four_on_a_projector():
    """The page width the browser reports at load (tabs.attention.page.adopt_page_width) reaches the grid: 390 px gives
    two heads a row, 1280 px (or no width, an API client) four; junk is no width."""
    from tabs.attention.page import adopt_page_width, draw_cached

    record = compute_attention("reverse", "attention", "", request=page_call(KEY)).record
    columns = {}
    for reported in (390, 1280, None, "wide", -5):
        width = adopt_page_width(reported)
        grid = json.loads(draw_cached(record, "cross", 0, 0, "entropy", width=width).grid.plot)
        columns[reported] = len({tuple(axis["domain"]) for name, axis in grid["layout"].items()
                                 if name.startswith("xaxis")})
    assert columns == {390: 2, 1280: 4, None: 4, "wide": 4, -5: 4}
