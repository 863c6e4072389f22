"""Training curves stay small enough for live browser updates without losing the ends of the run."""
import numpy as np
import pytest

from visualize import empty_curves, parameter_breakdown, training_curves
from visualize.training import downsample_indices


def test_long_run_is_downsampled_keeping_first_and_last_step():
    """5000 train points become <= 500, the first and last step kept, each kept point a real (step, loss) pair."""
    steps = np.arange(1, 5001)
    losses = 10.0 / steps
    fig = training_curves(steps, losses)
    x, y = np.asarray(fig.data[0].x), np.asarray(fig.data[0].y)
    assert len(x) <= 500
    assert x[0] == 1 and x[-1] == 5000
    np.testing.assert_allclose(y, 10.0 / x)
    assert np.all(np.diff(x) > 0)


def test_short_run_is_untouched():
    """Below the limit every point is drawn."""
    fig = training_curves([0, 1, 2], [3.0, 2.0, 1.5])
    assert list(fig.data[0].x) == [0, 1, 2] and list(fig.data[0].y) == [3.0, 2.0, 1.5]
    assert list(downsample_indices(3)) == [0, 1, 2]


def test_validation_markers_and_learning_rate_on_a_second_axis():
    """Validation loss is drawn as given, with markers; the learning rate is dotted, on the right-hand axis."""
    steps = np.arange(2000)
    lrs = np.linspace(0, 1e-3, 2000)
    fig = training_curves(steps, np.ones(2000), val_steps=[0, 1000, 1999], val_losses=[3.0, 2.0, 1.0], lrs=lrs)
    train, val, lr = fig.data
    assert list(val.x) == [0, 1000, 1999] and list(val.y) == [3.0, 2.0, 1.0] and "markers" in val.mode
    assert lr.yaxis == "y2" and lr.line.dash == "dot"
    np.testing.assert_allclose(np.asarray(lr.y), lrs[np.asarray(lr.x).astype(int)])  # same thinning as the loss
    assert fig.layout.xaxis.title.text == "step" and fig.layout.yaxis.title.text == "loss (nats/token)"


def test_without_learning_rate_there_is_no_second_axis():
    fig = training_curves([0, 1], [2.0, 1.0])
    assert len(fig.data) == 2 and "yaxis2" not in fig.layout.to_plotly_json()


def test_mismatched_series_raise():
    """A loss list that does not match its steps is a caller bug."""
    with pytest.raises(ValueError):
        training_curves([0, 1, 2], [1.0, 2.0])
    with pytest.raises(ValueError):
        training_curves([0, 1], [1.0, 2.0], val_steps=[0], val_losses=[])
    with pytest.raises(ValueError):
        training_curves([0, 1], [1.0, 2.0], lrs=[0.1])


def test_empty_curves_shows_only_the_message():
    fig = empty_curves("Press Start to train")
    assert len(fig.data) == 0
    assert [a.text for a in fig.layout.annotations] == ["Press Start to train"]


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


def test_exact_match_is_drawn_in_percent_on_the_right_axis_at_the_evaluations():
    """The live figure of a task: the exact match of each evaluation, as given x 100, on the right axis."""
    fig = training_curves([1, 2, 3, 4], [3.0, 2.0, 1.0, 0.5], val_steps=[2, 4], val_losses=[2.5, 0.7],
                          exact_match=[0.125, 1.0])
    exact = fig.data[2]
    assert exact.name == "exact match (%)" and exact.yaxis == "y2"
    assert list(exact.x) == [2, 4] and list(exact.y) == [12.5, 100.0]
    assert fig.layout.yaxis2.title.text == "exact match (%)"
    with pytest.raises(ValueError, match="one right axis"):
        training_curves([1], [1.0], val_steps=[1], val_losses=[1.0], lrs=[0.1], exact_match=[0.5])


def test_a_compact_figure_keeps_at_most_max_points():
    fig = training_curves(np.arange(3000), np.ones(3000), max_points=150)
    assert len(fig.data[0].x) <= 150 and fig.data[0].x[-1] == 2999
