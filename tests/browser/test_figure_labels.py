"""The model's size figure (visualize.parameter_breakdown) drawn by plotly.js in chromium, at the widths the Model
tab gives it (a projector's half row, a phone's column): every text of the figure, the bars' "count (percent)"
labels first, lies inside the drawn figure, measured on the boxes of plotly's rendered SVG text
(tests.browser.tour.text_overlaps). Issue 26 item 7: the unit test asserted plotly settings (textposition,
cliponaxis, the axis range), not that a label fits; this one fails when a label is cut off (tried: every label
placed after its bar, the axis ending at the longest bar: labels cut off at the figure's edge by 63-81 px)."""
from __future__ import annotations

import pytest

from tests.browser import tour

# what the Model tab shows: a small model with a dominant component (the label of the longest bar must fit inside
# it or after it), a model of equal parts, and long two-line component names
COUNTS = {
    "dominant": {"a": 10, "b": 1000},
    "even": {"token embedding": 4096, "encoder": 4000, "decoder": 4100, "output projection": 4096},
    "translation": {"token embedding": 4_194_304, "<encoder>": 6_304_768, "decoder self-attention": 1_050_624,
                    "decoder cross-attention": 1_050_624, "decoder feed-forward": 2_100_224, "final norm": 512},
}
WIDTHS = (600, 340)  # px of the plot's box: beside the table on a projector, the whole column on a phone


@pytest.fixture(scope="module")
def page(browser):
    """A page holding plotly.js (plotly's own bundle, inline: no request leaves the page) and a box to draw in."""
    from plotly.offline import get_plotlyjs

    page = browser.new_page(viewport=tour.PROJECTOR, reduced_motion=tour.REDUCED_MOTION)
    page.set_content(f"<html><body><script>{get_plotlyjs()}</script><div id='fig'></div></body></html>")
    yield page
    page.close()


def draw(page, fig, width: int) -> dict:
    """The figure drawn by plotly.js in a box `width` px wide; its texts as tests.browser.tour.figure_texts reads
    them."""
    page.evaluate("""([figure, width]) => {
        const box = document.getElementById('fig');
        Plotly.purge(box);
        box.style.width = width + 'px';
        return Plotly.newPlot(box, figure.data, figure.layout, {responsive: true});
    }""", [fig.to_plotly_json(), width])
    figures = tour.figure_texts(page)
    assert len(figures) == 1, figures
    return figures[0]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", list(COUNTS))
def test_parameter_breakdown_labels_are_never_cut_off(page, name, width):
    from visualize import parameter_breakdown

    counts = COUNTS[name]
    figure = draw(page, parameter_breakdown(counts), width)
    texts = {t["text"] for t in figure["texts"]}
    labels = [label for label in parameter_breakdown(counts).data[0].text]
    assert set(labels) <= texts, f"the bars' labels are not all drawn: {sorted(texts)}"
    problems = tour.text_overlaps(figure)
    assert not problems, f"{name} at {width} px: {problems}"
