"""The Attention tab fits the model and the screen (issue 19, items 7 and 10), in Debian's chromium at 1280x800 and
390x844: sliders that range over the model's own layers and heads, every token of a 24-token input labelled on
the heatmap's axes without overlapping labels, and the grid of a layer's heads readable on a phone.

Screenshots go to $TMPDIR/attention-lab-screenshots/fit-*.png (look at them after a change of layout)."""
from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.browser import tour
from tests.browser.conftest import MEASURED

SIZES = tour.SIZES
SHOTS = Path(tempfile.gettempdir()) / "attention-lab-screenshots"
MIN_HEAD_PX = 120  # a head of the grid narrower than this cannot be read on a phone

# JS: the plot areas of a figure's axes, {name: {x0, x1, y0, y1}} in px (plotly's own layout of the drawn figure).
_AXES = """(sel) => {
    const gd = document.querySelector(sel + ' .js-plotly-plot');
    const full = gd && gd._fullLayout;
    if (!full) return null;
    const boxes = {};
    for (const name of Object.keys(full)) {
        if (!/^[xy]axis\\d*$/.test(name)) continue;
        const ax = full[name];
        boxes[name] = {offset: ax._offset, length: ax._length};
    }
    return boxes;
}"""
# JS: the tick labels drawn on the one-head heatmap's x and y axes.
_TICKS = """() => ({x: [...document.querySelectorAll('#att-one .xtick text')].map(t => t.textContent),
                  y: [...document.querySelectorAll('#att-one .ytick text')].map(t => t.textContent)})"""


def _wait_title(page, pattern: str) -> str:
    page.wait_for_function("re => new RegExp(re).test((document.querySelector('#att-one .gtitle') || {}).textContent"
                           " || '')", arg=pattern)
    return page.locator("#att-one .gtitle").text_content()


def _slider(page, elem_id: str) -> dict:
    """Whether the slider is on the page, and its range."""
    box = page.locator(f"#{elem_id}")
    if not box.count() or not box.is_visible():
        return {"shown": False}
    rng = box.locator("input[type=range]")
    return {"shown": True, "min": float(rng.get_attribute("min")), "max": float(rng.get_attribute("max")),
            "disabled": rng.is_disabled()}


def _one_layer_one_head_model(page) -> str:
    """A reverse model of 1 + 1 layers and 1 head, trained 20 steps through the library, kept for this page's
    browser (the app runs in this process); the page is reloaded so that it is in the checkpoint list."""
    from store.catalogue import USER_MODELS
    from tabs.train.request import TrainingRequest, build_run
    from transformer.train import Trainer

    key = page.evaluate("() => localStorage.getItem('attention-lab-key')")
    run = build_run(TrainingRequest("task", "reverse", None, None, None, 1, 1, 32, 3e-3, 20, 8).validated())
    for _ in Trainer(run.model, run.tokenizer, run.data, run.train_cfg).run():
        pass
    name = USER_MODELS.reserve(key, "reverse")
    USER_MODELS.put(key, name, run.model, run.tokenizer, {"task": "reverse"})
    page.reload()
    page.get_by_role("tab", name="Generate").wait_for()
    return name


@pytest.mark.parametrize("width", SIZES)
def test_sliders_range_over_the_models_layers_and_heads(open_at, width):
    """The shipped induction model (2 layers, 4 heads): Layer 0-1 and Head 0-3, both movable. A model of one layer
    and one head (trained here): regression, its Layer slider read 0-1 (greyed); now neither slider is shown, the
    notice says "one layer (layer 0) and one head (head 0)", and the heatmap is layer 0, head 0."""
    page = open_at(width)
    tour.select_checkpoint(page, "induction")
    tour.show_tab(page, "attention")
    page.locator("#att-text input, #att-text textarea").first.fill("abcdefabcdef")
    page.locator("#att-show").click()
    _wait_title(page, "decoder self attention, layer \\d, head \\d")
    assert _slider(page, "att-layer") == {"shown": True, "min": 0, "max": 1, "disabled": False}
    assert _slider(page, "att-head") == {"shown": True, "min": 0, "max": 3, "disabled": False}

    name = _one_layer_one_head_model(page)
    tour.select_checkpoint(page, name)
    tour.show_tab(page, "attention")
    title = _wait_title(page, "cross attention, layer \\d, head \\d")
    assert title == "cross attention, layer 0, head 0"
    page.locator("#att-notice", has_text="one layer (layer 0) and one head (head 0)").wait_for()
    assert not _slider(page, "att-layer")["shown"] and not _slider(page, "att-head")["shown"]
    # the hidden sliders' value (0) still reaches the handlers: the encoder's attention draws layer 0, head 0
    page.locator("#att-kind").get_by_text("encoder self").click()
    _wait_title(page, "^encoder self attention, layer 0, head 0$")
    tour.small_screenshot(page, SHOTS / f"fit-sliders-{width}.png")


@pytest.mark.parametrize("width", SIZES)
def test_every_token_of_a_24_token_input_is_labelled_without_overlap(open_at, width):
    """Regression: at 24 tokens (the induction demo's input) the heatmap labelled every other token. Now every
    query and every key has its label, at 1280 and 390 px, and no two texts of the figure overlap."""
    page = open_at(width)
    tour.click_demo(page, "Induction head")
    page.locator("#demo-explain", has_text="Induction head").wait_for()
    _wait_title(page, "decoder self attention, layer 1, head \\d")
    tour.plots_drawn(page)
    page.wait_for_timeout(300)  # plotly's automargin may redraw once more
    from tabs.attention.record import _shipped_record
    from tabs.demos import REPEATED
    from visualize import axis_labels

    tokens = axis_labels(_shipped_record("induction", REPEATED, "").patterns["decoder self"].key_tokens)
    assert len(tokens) >= 24
    ticks = page.evaluate(_TICKS)
    assert ticks["x"] == tokens and ticks["y"] == tokens, ticks
    figure = next(f for f in tour.figure_texts(page, "#att-one"))
    problems = tour.text_overlaps(figure)
    tour.small_screenshot(page, SHOTS / f"fit-ticks-{width}.png")
    assert not problems, "\n".join(problems[:20])


def test_a_phone_shows_the_heads_of_a_layer_two_by_two(open_at):
    """Regression: at 390x844 the grid of a layer's four heads gave each ~35 px. Now two heads a row, each at least
    MIN_HEAD_PX wide, with their labels not overlapping; at 1280x800 the grid keeps its four heads a row."""
    widths = {}
    for width in SIZES:
        page = open_at(width)
        tour.click_demo(page, "Reading backwards")
        page.locator("#demo-explain", has_text="Reading backwards").wait_for()
        _wait_title(page, "cross attention, layer \\d, head \\d")
        page.locator("#att-grid .heatmaplayer").first.wait_for()
        page.locator("#att-grid").scroll_into_view_if_needed()
        tour.plots_drawn(page)
        page.wait_for_timeout(300)
        axes = page.evaluate(_AXES, "#att-grid")
        x = sorted((a["offset"], a["length"]) for n, a in axes.items() if n.startswith("x"))
        widths[width] = x
        columns = len({offset for offset, _ in x})
        assert len(x) == 4 and columns == (4 if width == 1280 else 2), (width, x)
        figure = next(f for f in tour.figure_texts(page, "#att-grid"))
        problems = tour.text_overlaps(figure)
        assert not problems, "\n".join(problems[:20])
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.locator("#att-grid").screenshot(path=str(SHOTS / f"fit-grid-{width}.png"))
    narrowest = min(length for _, length in widths[390])
    MEASURED["grid head width at 390 px"] = f"{narrowest:.0f} px (at 1280: {min(l for _, l in widths[1280]):.0f})"
    assert narrowest >= MIN_HEAD_PX, f"a head of the grid is {narrowest:.0f} px wide at 390 px"
