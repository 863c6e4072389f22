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
    from tabs.demo_list import REPEATED
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


# --- issue 29, items 1, 2 and 10: every cell and label readable, at a minimum size, on a projector and a phone ----

# JS: of the heatmap of the figure under `sel`: its cells' side (axis length / number of categories), the font sizes
# of its tick labels and cell texts (px), how many of each, the gold circles' widths, whether the figure scrolls
# sideways in its box, and whether the colour bar reaches into the plot area.
_CELLS = """(sel) => {
    const gd = document.querySelector(sel + ' .js-plotly-plot');
    const full = gd && gd._fullLayout;
    if (!full) return null;
    const size = t => parseFloat(t.style.fontSize || getComputedStyle(t).fontSize);
    const ticks = [...gd.querySelectorAll('.xtick text, .ytick text')];
    const cells = [...gd.querySelectorAll('svg.main-svg text')].filter(t => t.closest('.heatmap-label'));
    const plot = gd.querySelector('.nsewdrag').getBoundingClientRect();
    const bar = gd.querySelector('.colorbar');
    const b = bar && bar.getBoundingClientRect();
    const into = b ? Math.max(0, Math.min(b.right, plot.right) - Math.max(b.left, plot.left)) > 1
                     && Math.max(0, Math.min(b.bottom, plot.bottom) - Math.max(b.top, plot.top)) > 1 : false;
    return {column: full.xaxis._length / full.xaxis._categories.length,
            row: full.yaxis._length / full.yaxis._categories.length,
            xticks: gd.querySelectorAll('.xtick text').length, yticks: gd.querySelectorAll('.ytick text').length,
            tick_font: Math.min(...ticks.map(size)), cells: cells.length,
            cell_font: cells.length ? Math.min(...cells.map(size)) : null,
            circles: [...gd.querySelectorAll('.scatterlayer .point')].map(p => p.getBoundingClientRect().width),
            scrolls: gd.scrollWidth > gd.clientWidth + 1, width: full.width, box: gd.clientWidth,
            bar_in_plot: into};
}"""


def _cells(page, sel: str) -> dict:
    page.locator(f"{sel} .heatmaplayer").first.wait_for()
    page.locator(sel).scroll_into_view_if_needed()
    tour.plots_drawn(page)
    tour.figure_at_rest(page, sel)  # plotly's automargin may redraw once more
    cells = page.evaluate(_CELLS, sel)
    for _ in range(50):  # caught between a figure's removal and its redraw (seen once in CI): read it again
        if cells is not None:
            break
        page.wait_for_timeout(200)
        cells = page.evaluate(_CELLS, sel)
    return cells


def _readable(cells: dict, what: str) -> None:
    """Every cell at least MIN_CELL_PX each way, every label and cell text at least MIN_LABEL_PX, the colour bar
    outside the plot area."""
    from visualize.sizes import MIN_CELL_PX, MIN_LABEL_PX

    assert cells["column"] >= MIN_CELL_PX - 0.5 and cells["row"] >= MIN_CELL_PX - 0.5, (what, cells)
    assert cells["tick_font"] >= MIN_LABEL_PX and (cells["cell_font"] or MIN_LABEL_PX) >= MIN_LABEL_PX, (what, cells)
    assert not cells["bar_in_plot"], (what, "the colour bar covers the plot", cells)


def _measured(name: str, cells: dict) -> None:
    """The sizes found, for the run's summary."""
    circles = f", circles <= {max(cells['circles']):.0f} px" if cells["circles"] else ""
    text = f", cell text {cells['cell_font']:.0f} px" if cells["cell_font"] else ""
    MEASURED[name] = (f"{cells['column']:.0f} x {cells['row']:.0f} px, labels {cells['tick_font']:.0f} px{text}"
                      f"{circles}, figure {cells['width']:.0f} px in a {cells['box']} px box")


def _no_overlap(page, sel: str, shot: str) -> None:
    figure = next(f for f in tour.figure_texts(page, sel))
    problems = tour.text_overlaps(figure)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(sel).screenshot(path=str(SHOTS / shot))
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("width", SIZES)
def test_the_logit_lens_writes_every_token_readably(open_at, width):
    """Regression (issue 29, item 1): on the causal-mask demo's 41 positions the lens wrote no token (colours only),
    and on a phone its 14-41 columns shared ~100 px. Now each of the 7 x 41 cells writes its top token in at least
    MIN_LABEL_PX, on cells of at least MIN_CELL_PX (turned on a phone: positions down), every position labelled,
    no two texts overlapping."""
    page = open_at(width)
    tour.click_demo(page, "The causal mask")
    page.locator("#demo-explain", has_text="The causal mask").wait_for()
    _wait_title(page, "decoder self attention, layer \\d, head \\d")
    page.locator("#att-lens-section").get_by_text("Logit lens: what each layer would predict").click()
    cells = _cells(page, "#lens-grid")
    _readable(cells, f"lens at {width}")
    assert cells["cells"] == 7 * 41, cells
    assert max(cells["xticks"], cells["yticks"]) == 41, "every position labelled"
    _measured(f"logit lens cells at {width} px", cells)
    _no_overlap(page, "#lens-grid", f"fit-lens-{width}.png")


@pytest.mark.parametrize("width", SIZES)
def test_heatmaps_keep_readable_cells_and_scroll_sideways(open_at, width):
    """Regression (issue 29, item 2): heatmaps shrank their cells to fit the width (41 columns in ~170 px on a phone,
    the translation's 12 in ~100 px with 11 px labels running into each other and gold circles larger than the
    cells). Now the one-head heatmap keeps cells of at least MIN_CELL_PX and labels of at least MIN_LABEL_PX, a
    figure that cannot fit its box scrolls sideways in it, the colour bar stays out of the plot, and no gold circle
    is wider than its cell."""
    page = open_at(width)
    tour.click_demo(page, "The causal mask")
    page.locator("#demo-explain", has_text="The causal mask").wait_for()
    _wait_title(page, "decoder self attention, layer \\d, head \\d")
    page.wait_for_function("() => document.querySelectorAll('#att-one .xtick text').length === 41")  # the demo's
    mask = _cells(page, "#att-one")
    _readable(mask, f"causal mask at {width}")
    assert mask["xticks"] == 41 and mask["yticks"] == 41, "every token labelled"
    assert mask["scrolls"] == (mask["width"] > mask["box"]), mask
    if width == 1280:  # issue 38, item 3: it was 732 px in its 720 px box (the right margin's padding past it)
        assert not mask["scrolls"] and mask["width"] <= mask["box"], mask
    _no_overlap(page, "#att-one", f"fit-mask-{width}.png")
    tour.click_demo(page, "Who reads whom?")
    page.locator("#demo-explain", has_text="Who reads whom").wait_for()
    _wait_title(page, "cross attention in words, layer \\d, head \\d")
    gold = _cells(page, "#att-one")
    _readable(gold, f"translation at {width}")
    assert gold["xticks"] == 12 and gold["circles"], gold
    assert max(gold["circles"]) <= min(gold["column"], gold["row"]), ("a gold circle is wider than its cell", gold)
    _measured(f"translation heatmap cells at {width} px", gold)
    _no_overlap(page, "#att-one", f"fit-gold-{width}.png")


@pytest.mark.parametrize("width", SIZES)
def test_the_two_inputs_maps_keep_readable_cells(open_at, width):
    """Issue 29, item 2, on the two-inputs maps: the induction demo's 24 tokens against a changed copy, each map
    with cells of at least MIN_CELL_PX and every token labelled in at least MIN_LABEL_PX (they were drawn at
    plotly's thinning, every other label), side by side on a projector, one under the other on a phone."""
    page = open_at(width)
    tour.click_demo(page, "Previous-token head")
    page.locator("#demo-explain", has_text="Previous-token head").wait_for()
    _wait_title(page, "decoder self attention, layer 0, head \\d")
    page.locator("#att-two-section").get_by_text("Two inputs side by side").click()
    page.locator("#two-text input, #two-text textarea").first.fill("kqwzjxtbhmfakqwzjxtbhmfb")
    page.locator("#two-compare").click()
    for sel in ("#two-a", "#two-b"):
        cells = _cells(page, sel)
        _readable(cells, f"{sel} at {width}")
        assert cells["xticks"] == 24 and cells["yticks"] == 24, cells
        _no_overlap(page, sel, f"fit-two-{sel[1:]}-{width}.png")


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
    page.wait_for_timeout(300)
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
    page.wait_for_timeout(300)
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


@pytest.mark.parametrize("width", SIZES)
def test_the_patching_grids_keep_readable_cells(open_at, width):
    """Issue 27 on this screen: after "Which heads copy?" every figure of "What a head does" (residual
    stream, heads, direct logit attribution, the open head's paths) keeps cells of at least MIN_CELL_PX, labels and
    written values of at least MIN_LABEL_PX, its colour bar out of the plot, and no two texts overlapping; the
    39-position residual grid scrolls sideways where it does not fit."""
    page = open_at(width)
    tour.click_demo(page, "Which heads copy?")
    page.locator("#demo-explain", has_text="Which heads copy?").wait_for()
    page.wait_for_function("() => ((document.querySelector('#patch-from .gtitle') || {}).textContent || '')"
                           ".includes('into later heads')", timeout=300_000)
    for sel in ("#patch-residual", "#patch-heads", "#patch-dla", "#patch-from"):
        cells = _cells(page, sel)
        _readable(cells, f"{sel} at {width}")
        assert cells["scrolls"] == (cells["width"] > cells["box"]), cells
        _measured(f"patching {sel[1:]} cells at {width} px", cells)
        _no_overlap(page, sel, f"fit-{sel[1:]}-{width}.png")
    page.locator("#att-patch-section").screenshot(path=str(SHOTS / f"patch-section-{width}.png"))


# JS: the one-head heatmap's colour bar: its title, the bar's left and right edges and length (flat on a phone,
# upright beside a projector's plot), and the visible left and right edges of the figure's box
_BAR = """() => {
    const gd = document.querySelector('#att-one .js-plotly-plot');
    const fill = gd.querySelector('.colorbar .cbfill').getBoundingClientRect(), seen = gd.getBoundingClientRect();
    return {title: gd.querySelector('.colorbar .cbtitle').textContent, x0: fill.left, x1: fill.right,
            length: Math.max(fill.width, fill.height), left: seen.left, right: seen.right};
}"""


@pytest.mark.parametrize("width", SIZES)
def test_the_norms_colour_bar_names_the_norms_and_is_seen_whole(open_at, width):
    """Regression (issue 29, item 12, its demo): after "Weights or what moves" the colour bar said "weight" over the
    value-weighted norms' shares. Now it says "norms", and its bar keeps at least 60 px (its 0, 0.5 and 1 apart) and lies whole inside what
    the page shows of the figure (a longer title, "share of norms", took the phone's flat bar's whole 160 px: 0 px
    of scale, measured at 390), no two texts overlapping."""
    page = open_at(width)
    tour.click_demo(page, "Weights or what moves")
    page.locator("#demo-explain", has_text="Weights or what moves").wait_for()
    _wait_title(page, "value-weighted norms, layer \\d, head \\d")
    _cells(page, "#att-one")
    page.evaluate("() => { document.querySelector('#att-one .js-plotly-plot').scrollLeft = 0; }")
    bar = page.evaluate(_BAR)
    MEASURED[f"norms colour bar at {width} px"] = f"{bar['length']:.0f} px long"
    assert bar["title"] == "norms", bar
    assert bar["length"] >= 60 and bar["left"] <= bar["x0"] and bar["x1"] <= bar["right"], bar
    _no_overlap(page, "#att-one", f"fit-norms-{width}.png")
