"""The Attention tab fits the model and the screen (issue 19, items 7 and 10), in Debian's chromium at 1280x800 and
390x844: sliders that range over the model's own layers and heads, the comparison table and "where it looked"
readable. The checks of what a demo opens (every token of a 24-token input labelled, the grid of a layer's heads two
by two on a phone, the lens, the causal mask, the gold links, the two inputs, the patching grids, the norms' colour
bar) are made on test_layout.py's one walk over the demos (tests/browser/demo_walk.py).

Screenshots go to $TMPDIR/attention-lab-screenshots/fit-*.png (look at them after a change of layout)."""
from __future__ import annotations

import pytest

from tests.browser import figure_checks, tour
from tests.browser.conftest import MEASURED

SIZES = tour.SIZES
SHOTS = figure_checks.SHOTS


def _no_overlap(page, sel: str, shot: str) -> None:
    problems = figure_checks.overlaps(page, sel, shot)
    assert not problems, "\n".join(problems[:20])


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
    figure_checks.wait_title(page, "decoder self attention, layer \\d, head \\d")
    assert _slider(page, "att-layer") == {"shown": True, "min": 0, "max": 1, "disabled": False}
    assert _slider(page, "att-head") == {"shown": True, "min": 0, "max": 3, "disabled": False}

    name = _one_layer_one_head_model(page)
    tour.select_checkpoint(page, name)
    tour.show_tab(page, "attention")
    title = figure_checks.wait_title(page, "cross attention, layer \\d, head \\d")
    assert title == "cross attention, layer 0, head 0"
    page.locator("#att-notice", has_text="one layer (layer 0) and one head (head 0)").wait_for()
    assert not _slider(page, "att-layer")["shown"] and not _slider(page, "att-head")["shown"]
    # the hidden sliders' value (0) still reaches the handlers: the encoder's attention draws layer 0, head 0
    page.locator("#att-kind").get_by_text("encoder self").click()
    figure_checks.wait_title(page, "^encoder self attention, layer 0, head 0$")
    tour.small_screenshot(page, SHOTS / f"fit-sliders-{width}.png")


# --- issue 29, item 10: every cell and label readable, at a minimum size, on a projector and a phone ------------

@pytest.mark.parametrize("width", SIZES)
def test_where_it_looked_is_readable(open_at, width):
    """Issue 29's readability checks on "where it looked" (the Generate tab, `reverse` on "attention"): every key
    has a bar slot of at least MIN_CELL_PX and a label of at least MIN_LABEL_PX, no two texts overlap."""
    from visualize.sizes import MIN_CELL_PX, MIN_LABEL_PX

    page = open_at(width)
    tour.select_checkpoint(page, "reverse")
    tour.show_tab(page, "generate")
    page.locator("#gen-prompt textarea").fill("attention")
    page.locator("#gen-go").click()
    page.locator("#gen-where .gtitle", has_text="looked").wait_for()
    page.locator("#gen-where").scroll_into_view_if_needed()
    tour.plots_drawn(page)
    tour.figure_at_rest(page, "#gen-where")  # plotly's automargin may redraw once more
    found = page.evaluate("""() => { const gd = document.querySelector('#gen-where .js-plotly-plot');
        const ax = gd._fullLayout.xaxis, ticks = [...gd.querySelectorAll('.xtick text')];
        return {slot: ax._length / ax._categories.length, keys: ax._categories.length,
                font: Math.min(...ticks.map(t => parseFloat(t.style.fontSize || getComputedStyle(t).fontSize)))}; }""")
    MEASURED[f"where it looked at {width} px"] = f"{found['keys']} keys, {found['slot']:.0f} px each, labels " \
                                                f"{found['font']:.0f} px"
    assert found["keys"] == 10 and found["slot"] >= MIN_CELL_PX and found["font"] >= MIN_LABEL_PX, found
    _no_overlap(page, "#gen-where", f"fit-where-{width}.png")


LONG_SOURCE = ("And he said unto them, Go ye into all the world, and preach the gospel to every creature. He that "
               "believeth and is baptized shall be saved; but he that believeth not shall be damned. And these signs "
               "shall follow them that believe; In my name shall they cast out devils; they shall speak with new "
               "tongues.")  # Mark 16:15-17: 76 source tokens, more than the bars hold (limits.ATTENTION_CAP)


@pytest.mark.parametrize("width", SIZES)
def test_where_it_looked_on_a_long_source_is_not_cut(open_at, width):
    """Regression (issue 29, item 7, on a phone): for a translation whose source has more tokens than the bars
    hold, the title says which tokens are shown and what share of the weight they hold; on two lines its second
    ran 174 px past the phone's figure ("… holdi"). Now no text of the figure is cut or overlaps, at both sizes.
    And the bars are readable (issue 29, item 7): its 64 bars were ~8 px each at 1280 and 4 px at 390; now it shows
    as many as fit at MIN_CELL_PX (visualize.bars_shown: 31 at 1280, 14 at 390), each at least that wide, the window
    holding the most weight, and the title says which tokens of the 76 these are."""
    import re

    from limits import ATTENTION_CAP
    from visualize import bars_shown
    from visualize.sizes import MIN_CELL_PX

    page = open_at(width)
    tour.select_checkpoint(page, "translate-en-es")
    tour.show_tab(page, "generate")
    page.locator("#gen-prompt textarea").fill(LONG_SOURCE)
    page.locator("#gen-go").click()
    page.locator("#gen-where .gtitle", has_text="of 76, holding").wait_for()
    page.locator("#gen-where").scroll_into_view_if_needed()
    tour.plots_drawn(page)
    tour.figure_at_rest(page, "#gen-where")  # plotly's automargin may redraw once more
    _no_overlap(page, "#gen-where", f"fit-where-long-{width}.png")
    found = page.evaluate("""() => { const gd = document.querySelector('#gen-where .js-plotly-plot');
        const ax = gd._fullLayout.xaxis;
        return {slot: ax._length / ax._categories.length, keys: ax._categories.length,
                title: gd.querySelector('.gtitle').textContent}; }""")
    MEASURED[f"where it looked, long source, at {width} px"] = f"{found['keys']} keys, {found['slot']:.0f} px each"
    shown = bars_shown(width, ATTENTION_CAP)
    assert found["keys"] == shown and found["slot"] >= MIN_CELL_PX, found
    said = re.search(r"tokens (\d+)-(\d+) of 76", found["title"])
    assert said and int(said[2]) - int(said[1]) + 1 == shown, found


# JS: the comparison table as laid out: its box's right edge, how many of its elements scroll sideways, and each
# header and body cell that shows (gradio 6's Dataframe draws the body as [role=gridcell] divs in virtual rows; its
# `tbody` is a hidden copy of one row that sizes the columns): its text, type size, box, and whether its text is cut
# (the text's span clips what overflows it with an ellipsis, or the text runs past the cell's padding)
_COMPARISON = """() => { const e = document.querySelector('#train-compare-table');
    const cells = [...e.querySelectorAll('[role=columnheader], [role=gridcell]')].map(c => {
        const text = c.querySelector('span.text') || c, box = c.getBoundingClientRect(), style = getComputedStyle(c);
        const range = document.createRange();
        range.selectNodeContents(text);
        const inked = range.getBoundingClientRect();
        return {text: text.textContent.trim(), header: c.getAttribute('role') === 'columnheader',
                row: c.dataset.row, font: parseFloat(getComputedStyle(text).fontSize), width: box.width,
                height: box.height, right: box.right,
                cut: text.scrollWidth > text.clientWidth + 1 || text.scrollHeight > text.clientHeight + 1
                    || inked.left < box.left + parseFloat(style.paddingLeft) - 1
                    || inked.right > box.right - parseFloat(style.paddingRight) + 1}; });
    return {right: e.getBoundingClientRect().right, cells,
            scrolls: [...e.querySelectorAll('*')].filter(n => n.scrollWidth > n.clientWidth + 1
                && ['auto', 'scroll'].includes(getComputedStyle(n).overflowX)).length}; }"""


@pytest.mark.parametrize("width", SIZES)
def test_the_comparison_table_is_readable_and_fits_a_projector(open_at, width):
    """Regression (issue 29, item 10): at 1280 the comparison table was 1,511 px in its 1,216 px box ("Decoding" cut,
    "Looks back" hidden), and parameter counts had no thousands separators. Now at 1280 nothing of the table
    scrolls sideways and every header is shown whole; at both sizes (on a phone it scrolls sideways, and says so:
    test_layout) every header and every cell of the three variants' rows is readable: type of at least
    MIN_LABEL_PX, cells of at least MIN_CELL_PX each way, no text cut, and counts read 117,888."""
    import re

    from visualize.sizes import MIN_CELL_PX, MIN_LABEL_PX

    page = open_at(width)
    tour.show_tab(page, "train")
    page.get_by_text("Hyper-parameters (the preset fills these)").click()
    steps = page.get_by_label(re.compile("^Steps"))
    steps.fill("20")
    steps.press("Tab")
    page.wait_for_function("e => e.value === '20'", arg=steps.element_handle())  # the box holds it when Compare reads it
    page.locator("#train-compare").click()
    page.locator("#train-status", has_text="Done").wait_for(timeout=300_000)
    table = page.locator("#train-compare-table")
    table.scroll_into_view_if_needed()
    found = page.evaluate(_COMPARISON)
    cells = found["cells"]
    headers = [c for c in cells if c["header"]]
    rows = [[c for c in cells if c["row"] == str(r)] for r in range(3)]
    MEASURED[f"comparison table at {width} px"] = (
        f"right edge {max(c['right'] for c in headers):.0f} px (box {found['right']:.0f}), type "
        f"{min(c['font'] for c in cells):.0f} px, cells >= {min(c['width'] for c in cells):.0f} x "
        f"{min(c['height'] for c in cells):.0f} px, {sum(c['cut'] for c in cells)} of {len(cells)} cut")
    table.screenshot(path=str(SHOTS / f"fit-compare-{width}.png"))
    assert [c["text"] for c in headers][-1] == "Looks back" and len(headers) == 8, headers
    assert [row[0]["text"] for row in rows] == ["MHA (4 kv heads)", "GQA (2 kv heads)", "MQA (1 kv heads)"], rows
    assert all(len(row) == len(headers) and all(c["text"] for c in row) for row in rows), rows
    assert all(re.fullmatch(r"\d{1,3}(,\d{3})+", row[2]["text"]) for row in rows), rows
    said = [f"{c['text']!r}: {c['font']:.0f} px type, {c['width']:.0f} x {c['height']:.0f} px"
            f"{', cut' if c['cut'] else ''}" for c in cells]
    small = [s for s, c in zip(said, cells) if c["font"] < MIN_LABEL_PX or min(c["width"], c["height"]) < MIN_CELL_PX]
    assert not small, f"at {width} px, below {MIN_LABEL_PX} px type or {MIN_CELL_PX} px cells: {small}"
    cut = [s for s, c in zip(said, cells) if c["cut"]]
    assert not cut, f"at {width} px, text cut: {cut}"
    if width == 1280:
        edge = max(c["right"] for c in headers)
        assert not found["scrolls"] and edge <= found["right"] + 1, \
            f"the table scrolls sideways at 1280: its headers end at {edge:.0f} px, its box at {found['right']:.0f}"
