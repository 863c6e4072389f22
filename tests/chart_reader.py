"""Read a live chart (visualize.line_chart's SVG) back into numbers, as a viewer would: each curve's points are
mapped to data through the axes, whose ticks are placed at an SVG coordinate and labelled with their value.

Nothing from visualize is used: the axes' scales come from the drawing itself, so a test that compares what this
reads with the run's own history checks the drawing, not the code that made it.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def _scale(axis, coordinate: str):
    """(svg -> value) for an axis group: the linear map through its first and last tick (their line and label)."""
    ticks = axis.findall(f"{SVG}g[@class='tick']")
    if len(ticks) < 2:
        raise AssertionError(f"an axis with {len(ticks)} ticks cannot be read")
    (p0, v0), (p1, v1) = [(float(t.find(f"{SVG}line").get(coordinate)),
                           float(t.find(f"{SVG}text").text.replace(",", ""))) for t in (ticks[0], ticks[-1])]
    return lambda p: v0 + (p - p0) * (v1 - v0) / (p1 - p0)


def read_chart(svg: str) -> dict:
    """{"title", "message", "legend": [names], "curves": {name: {"axis": "left"/"right", "x": [...], "y": [...]}}}:
    every curve's points in data units (steps, losses, percent or scores)."""
    root = ET.fromstring(svg)
    axes = {g.get("class").split()[-1]: g for g in root.iter(f"{SVG}g") if "axis" in (g.get("class") or "").split()}
    x_of = _scale(axes["x-axis"], "x1")
    y_of = {side: _scale(axes[f"{side}-axis"], "y1") for side in ("left", "right") if f"{side}-axis" in axes}
    curves = {}
    for line in root.iter(f"{SVG}polyline"):
        points = [tuple(float(v) for v in p.split(",")) for p in (line.get("points") or "").split()]
        side = line.get("data-axis")
        curves[line.get("data-name")] = {"axis": side, "x": [x_of(px) for px, _ in points],
                                         "y": [y_of[side](py) for _, py in points]}
    texts = {t.get("class"): "".join(t.itertext()) for t in root.iter(f"{SVG}text") if t.get("class")}
    legend = ["".join(g.find(f"{SVG}text").itertext()) for g in root.iter(f"{SVG}g")
              if g.get("class") == "legend-item"]
    return {"title": texts.get("title", ""), "message": texts.get("message", ""), "legend": legend, "curves": curves}


def pixel_tolerance(svg: str, side: str = "left") -> tuple[float, float]:
    """How far a value read back may be from the data (x, y), from the points' 0.01-unit rounding: half a hundredth
    of an SVG unit through each scale, doubled for safety."""
    root = ET.fromstring(svg)
    axes = {g.get("class").split()[-1]: g for g in root.iter(f"{SVG}g") if "axis" in (g.get("class") or "").split()}
    x_of, y_of = _scale(axes["x-axis"], "x1"), _scale(axes[f"{side}-axis"], "y1")
    return abs(x_of(0.01) - x_of(0)), abs(y_of(0.01) - y_of(0))
