"""The model's size figure (visualize.model.parameter_breakdown): each bar its count and share. That its labels fit
is measured in a browser: tests/browser/test_figure_labels.py."""
from visualize import parameter_breakdown


def test_parameter_breakdown_counts_and_percent():
    """Each component's bar is its count, labelled with the count and its share of the total; long names go on
    two lines so the bars keep room on a phone."""
    fig = parameter_breakdown({"token embedding": 1000, "<encoder>": 3000, "decoder self-attention": 2000})
    assert list(fig.data[0].x) == [1000, 3000, 2000]
    assert list(fig.data[0].text) == ["1,000 (16.7%)", "3,000 (50.0%)", "2,000 (33.3%)"]
    assert list(fig.layout.yaxis.ticktext) == ["token<br>embedding", "&lt;encoder&gt;", "decoder<br>self-attention"]
    assert list(fig.data[0].customdata) == ["token embedding", "&lt;encoder&gt;", "decoder self-attention"]
