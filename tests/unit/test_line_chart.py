"""The live chart (visualize.line_chart): an SVG whose points read back, through its own axes, as the data it was
given; names escaped; empty curves drawn as empty; every curve thinned to a bounded number of points."""
from __future__ import annotations

import math

import numpy as np
import pytest

from tests.chart_reader import pixel_tolerance, read_chart
from visualize.line_chart import (COMPARISON_COLORS, LIVE_POINTS, Curve, comparison_chart, downsample_indices, line_chart, nice_ticks,
                                  phase_change_chart, training_chart)


def _assert_reads_back(curve: dict, x, y, svg: str, side: str = "left"):
    dx, dy = pixel_tolerance(svg, side)
    assert len(curve["x"]) == len(x)
    np.testing.assert_allclose(curve["x"], x, rtol=0, atol=dx)
    np.testing.assert_allclose(curve["y"], y, rtol=0, atol=dy)


def test_points_map_to_the_data_through_both_axes():
    """Oracle: every point read back through the drawn ticks is the data point (to the 0.01-unit rounding of the
    SVG coordinates): losses on the left axis, the exact match in % on the right one."""
    rng = np.random.default_rng(0)
    steps = np.arange(1, 151)
    losses = 3.0 * np.exp(-steps / 60) + 0.2 * rng.random(150)
    val_steps, val_losses, exact = [50, 100, 150], [1.4, 0.7, 0.5], [0.125, 0.5, 0.9375]
    svg = training_chart(steps, losses, val_steps, val_losses, exact, title="Training loss", x_max=400)
    chart = read_chart(svg)
    assert chart["title"] == "Training loss"
    assert chart["legend"] == ["train loss", "validation loss", "exact match (%)"]
    curves = chart["curves"]
    _assert_reads_back(curves["train loss"], steps, losses, svg)
    _assert_reads_back(curves["validation loss"], val_steps, val_losses, svg)
    _assert_reads_back(curves["exact match (%)"], val_steps, [100 * e for e in exact], svg, side="right")
    assert curves["exact match (%)"]["axis"] == "right" and curves["train loss"]["axis"] == "left"


def test_the_axes_hold_every_point_and_start_at_zero():
    """The x axis runs from 0 to at least x_max and the last step; the loss axis from 0 to at least the highest
    loss: no point is drawn outside the frame."""
    svg = training_chart([1, 2, 700], [5.3, 2.0, 0.1], x_max=500)
    chart = read_chart(svg)
    import xml.etree.ElementTree as ET

    root = ET.fromstring(svg)
    frame = next(r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.get("class") == "frame")
    x0, y0 = float(frame.get("x")), float(frame.get("y"))
    x1, y1 = x0 + float(frame.get("width")), y0 + float(frame.get("height"))
    line = next(p for p in root.iter("{http://www.w3.org/2000/svg}polyline") if p.get("data-name") == "train loss")
    for point in line.get("points").split():
        px, py = (float(v) for v in point.split(","))
        assert x0 <= px <= x1 and y0 <= py <= y1
    ticks = [float(g.get("data-value")) for g in root.iter("{http://www.w3.org/2000/svg}g")
             if g.get("class") == "tick"]
    assert 0.0 in ticks and max(ticks) >= 700
    assert chart["curves"]["train loss"]["y"][0] == pytest.approx(5.3, abs=0.01)


def test_names_are_escaped():
    """A name with markup, quotes, ampersands and template syntax stays text: the SVG parses, the legend and the
    curve's name read back as given, and nothing of it is markup or a gradio template."""
    name = 'MHA <b>"4"</b> & ${alert(1)} {{x}}'
    svg = comparison_chart({name: ([1, 2], [2.0, 1.0]), "GQA": ([1], [2.5])}, title="<i>t</i>")
    chart = read_chart(svg)
    assert chart["legend"] == [name, "GQA"] and name in chart["curves"] and chart["title"] == "<i>t</i>"
    assert "<b>" not in svg and "<i>" not in svg and "${" not in svg and "{{" not in svg


def test_empty_curves_are_drawn_empty_and_named():
    """Before the first step: axes, the legend with every curve, no point, and the message in the middle."""
    svg = training_chart([], [], [], [], exact_match=[], x_max=300, message="Starting…")
    chart = read_chart(svg)
    assert chart["message"] == "Starting…"
    assert chart["legend"] == ["train loss", "validation loss", "exact match (%)"]
    assert all(c["x"] == [] for c in chart["curves"].values())
    assert read_chart(line_chart([]))["curves"] == {}
    one = read_chart(comparison_chart({"MHA": ([5], [1.5]), "MQA": ([], [])}))["curves"]
    assert one["MQA"]["x"] == [] and one["MHA"]["x"] == [pytest.approx(5, abs=0.05)]


def test_an_ended_comparison_lists_only_the_variants_with_a_curve():
    """Regression (issue 29, item 10): after Stop the legend still named the variants that never trained. Ended
    (planned=False): only the curves with points, each in the colour it had while running."""
    series = {"MHA": ([5], [1.5]), "GQA": ([2], [1.7]), "MQA": ([], [])}
    running, ended = comparison_chart(series), comparison_chart(series, planned=False)
    assert read_chart(running)["legend"] == ["MHA", "GQA", "MQA"]
    assert read_chart(ended)["legend"] == ["MHA", "GQA"] and list(read_chart(ended)["curves"]) == ["MHA", "GQA"]
    assert 'data-name="GQA" data-axis="left" points' in ended and running.count(COMPARISON_COLORS[1]) == \
        ended.count(COMPARISON_COLORS[1])


def test_a_long_run_is_thinned_to_a_bounded_chart():
    """100,000 steps: at most LIVE_POINTS points per curve, the first and last step kept, each a real (step, loss)
    pair of the run; the SVG stays as small as a short run's (it is sent twice a second)."""
    steps = np.arange(1, 100_001)
    losses = 10.0 / np.sqrt(steps)
    svg = training_chart(steps, losses, steps[::1000], losses[::1000])
    curve = read_chart(svg)["curves"]["train loss"]
    assert len(curve["x"]) <= LIVE_POINTS
    dx, dy = pixel_tolerance(svg)
    assert curve["x"][0] == pytest.approx(1, abs=dx) and curve["x"][-1] == pytest.approx(100_000, abs=dx)
    # each kept point is one of the run's: its loss is the loss at its step (the step read back to the nearest one)
    for x, y in zip(curve["x"], curve["y"]):
        nearest = np.clip(np.round(x).astype(int), 1, 100_000)
        assert min(abs(10 / math.sqrt(s) - y) for s in range(max(1, nearest - int(dx) - 1),
                                                           min(100_000, nearest + int(dx) + 1) + 1)) <= dy
    short = training_chart(steps[:LIVE_POINTS], losses[:LIVE_POINTS], steps[:LIVE_POINTS:2], losses[:LIVE_POINTS:2])
    assert len(svg) < 1.1 * len(short) and len(svg) < 20_000


def test_thinning_keeps_short_series_whole_and_the_ends_of_long_ones():
    """At most max_points indices, strictly increasing, the first and last kept; a series that fits is untouched."""
    assert list(downsample_indices(3, 500)) == [0, 1, 2]
    assert list(downsample_indices(150, 150)) == list(range(150))
    for n, most in [(5000, 500), (3000, 150), (101, 100)]:
        keep = downsample_indices(n, most)
        assert len(keep) <= most and keep[0] == 0 and keep[-1] == n - 1 and np.all(np.diff(keep) > 0)


def test_phase_change_chart_puts_the_scores_on_the_right_axis():
    svg = phase_change_chart([1, 2, 3, 4], [4.1, 4.1, 2.0, 1.9], [2, 4], [4.0, 1.8],
                             {"previous token": [0.3, 0.9], "induction": [0.05, 0.8]}, window=(2, 4))
    curves = read_chart(svg)["curves"]
    assert list(curves) == ["train loss", "validation loss", "best previous token score", "best induction score"]
    _assert_reads_back(curves["best induction score"], [2, 4], [0.05, 0.8], svg, side="right")
    assert 'class="band"' in svg and 'class="rule"' in svg


def test_bad_curves_are_refused():
    with pytest.raises(ValueError, match="2 steps but 1 values"):
        line_chart([Curve("a", [1, 2], [1.0], "red")])
    with pytest.raises(ValueError, match="right_range"):
        line_chart([Curve("a", [1], [1.0], "red", right=True)])


@pytest.mark.parametrize("low, high", [(0, 1), (0, 3.2), (0, 1500), (0, 100), (0, 0.037), (0, 7), (2, 2)])
def test_nice_ticks_cover_the_range_with_round_steps(low, high):
    ticks = nice_ticks(low, high)
    assert ticks[0] <= low and ticks[-1] >= high and 2 <= len(ticks) <= 8
    step = ticks[1] - ticks[0]
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert min(abs(mantissa - m) for m in (1, 2, 5)) < 1e-9
    assert np.allclose(np.diff(ticks), step)
