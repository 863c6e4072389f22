"""The model's size figure (visualize.model.parameter_breakdown): each bar its count and share, labels that fit."""
from visualize import parameter_breakdown


def test_parameter_breakdown_counts_and_percent():
    """Each component's bar is its count, labelled with the count and its share of the total; long names go on
    two lines so the bars keep room on a phone."""
    fig = parameter_breakdown({"token embedding": 1000, "<encoder>": 3000, "decoder self-attention": 2000})
    assert list(fig.data[0].x) == [1000, 3000, 2000]
    assert list(fig.data[0].text) == ["1,000 (16.7%)", "3,000 (50.0%)", "2,000 (33.3%)"]
    assert list(fig.layout.yaxis.ticktext) == ["token<br>embedding", "&lt;encoder&gt;", "decoder<br>self-attention"]
    assert list(fig.data[0].customdata) == ["token embedding", "&lt;encoder&gt;", "decoder self-attention"]


def test_parameter_breakdown_labels_are_never_cut_off():
    """A label goes inside its bar when it fits there (the longest bar) and otherwise just after it, upright, in a
    range that leaves room for it: the issue was the longest bar's label cut off at the figure's edge."""
    fig = parameter_breakdown({"a": 10, "b": 1000})
    bar = fig.data[0]
    assert bar.textposition == "auto" and bar.textangle == 0 and bar.cliponaxis is False
    assert fig.layout.xaxis.range[1] >= 1.3 * 1000
