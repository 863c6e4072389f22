"""The patching demos in a real browser (issue 27): each click fills both inputs, opens "What a head does" and draws
its grids; on the induction model the previous-token head's path into the induction head runs through the key,
not the query (ground truth: the induction card's K-composition figures). IOI in GPT-2 says how to get GPT-2's
weights when they are not cached, and draws its grids when they are.

Screenshots of the section go to $TMPDIR/attention-lab-screenshots/patch-*.png."""
from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.browser import tour
from tests.browser.conftest import MEASURED

SHOTS = Path(tempfile.gettempdir()) / "attention-lab-screenshots"
FIGURES = ("#patch-residual", "#patch-heads", "#patch-dla", "#patch-into", "#patch-from")

# JS: a drawn figure's title, its row labels and its cells (plotly's own data of the figure on the page)
_GRID = """(sel) => {
    const gd = document.querySelector(sel + ' .js-plotly-plot');
    if (!gd || !gd.data || !gd.data.length) return null;
    return {title: gd.layout.title.text, rows: gd.layout.yaxis.ticktext, z: gd.data[0].z};
}"""


def _click(page, label: str) -> None:
    tour.click_demo(page, label)
    page.locator("#demo-explain", has_text=label).wait_for()


def _drawn(page, sel: str, title_has: str, timeout: float = 300_000) -> dict:
    """Wait until the figure at `sel` shows a title containing `title_has`; its data."""
    page.wait_for_function("([sel, t]) => { const gd = document.querySelector(sel + ' .js-plotly-plot');"
                           " return gd && gd.layout && (gd.layout.title.text || '').includes(t); }",
                           arg=[sel, title_has], timeout=timeout)
    return page.evaluate(_GRID, sel)


def _focus(label: str):
    """The head the demo opens: the best on its score of the record the tab computes (tabs.attention.page)."""
    from tabs.attention.page import focus_head
    from tabs.attention.record import _shipped_record
    from tabs.demos import DEMOS

    demo = next(d for d in DEMOS if d.label == label)
    return focus_head(_shipped_record(demo.ckpt, demo.text, ""), (demo.kind, demo.score))


def test_which_heads_copy_shows_k_composition(lab):
    """Induction demo: the grids are drawn, the previous-token head is open, and among its paths into later heads
    the one into the induction head 1.0's key recovers more than 0.2 while the one into its query recovers less
    than 0.1 (the card: 0.378 and 0.000)."""
    page = lab.page
    _click(page, "Which heads copy?")
    kind, layer, head = _focus("Which heads copy?")
    assert (layer, head) == (0, 1), "the previous-token head the demo opens"
    _drawn(page, "#patch-heads", "decoder self heads patched")
    out = _drawn(page, "#patch-from", "into later heads")
    assert f"from {kind} {layer}.{head}" in " ".join(out["title"].replace("<br>", " ").split()), out["title"]
    rows = dict(zip(out["rows"], out["z"]))
    key, query = rows["decoder self 1 key"][0], rows["decoder self 1 query"][0]  # into head 1.0
    MEASURED["induction demo: path 0.1 -> 1.0"] = f"key {key:.3f}, query {query:.3f}"
    assert key > 0.2 and query < 0.1, rows
    note = page.locator("#patch-note").text_content()
    assert "logit difference" in note
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#att-patch-section").screenshot(path=str(SHOTS / "patch-induction-1280.png"))


def test_who_carries_a_word_patches_the_cross_attention(lab):
    """Translation demo: the cross-attention heads grid is drawn, measured where the two runs first disagree
    (position 1 of the decoder: ' el' against ' la')."""
    page = lab.page
    _click(page, "Who carries a word?")
    heads = _drawn(page, "#patch-heads", "cross heads patched")
    assert len(heads["z"]) == 4 and len(heads["z"][0]) == 4, "translate-en-es: 4 layers x 4 heads"
    note = page.locator("#patch-note").text_content()
    assert "at position 1" in note and "el" in note and "la" in note, note
    _drawn(page, "#patch-residual", "Residual stream")
    page.locator("#att-patch-section").screenshot(path=str(SHOTS / "patch-translation-1280.png"))


@pytest.mark.parametrize("label", ["IOI in GPT-2", "Induction in GPT-2"])
def test_each_gpt2_demo_runs_or_says_how_to_get_gpt2(lab, label):
    """Both GPT-2 demos are in the row (issue 38, item 5: the induction one was hidden when GPT-2 was not cached):
    with GPT-2 cached, IOI's grids are drawn, and the induction demo's heatmap; without, the explanation gives the
    download command and the page stays as it was."""
    from store.catalogue import fixed_choices

    page = lab.page
    _click(page, label)
    if "gpt2 (pretrained)" not in fixed_choices():
        assert "python -m transformer.pretrained gpt2" in page.locator("#demo-explain").text_content()
    elif label == "IOI in GPT-2":
        _drawn(page, "#patch-heads", "decoder self heads patched", timeout=300_000)
        assert "' Mary' - ' John'" in page.locator("#patch-note").text_content()
    else:
        _drawn(page, "#att-one", "decoder self", timeout=300_000)
