"""Figures that are redrawn many times a second while a run streams: styled once, then only their points change.

Building and validating a whole plotly figure costs ~50 ms on an idle machine and over a second on a loaded one,
on the thread that trains. A LiveFigure keeps the JSON of a styled figure and writes each update's points into it.
"""
from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go

from .training import MAX_POINTS, downsample_indices


class LiveFigure:
    """`to_json(series)`: the figure's plotly JSON with trace i drawing series[i] = (x, y), each thinned to at most
    `max_points` points (first and last kept); every other property is the figure's own."""

    def __init__(self, figure: go.Figure, max_points: int = MAX_POINTS):
        self._spec, self.max_points = json.loads(figure.to_json()), max_points
        self.names = [trace.get("name") for trace in self._spec["data"]]

    def to_json(self, series) -> str:
        if len(series) != len(self._spec["data"]):
            raise ValueError(f"the figure has {len(self._spec['data'])} traces, got {len(series)} series")
        data = []
        for trace, (x, y) in zip(self._spec["data"], series):
            x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
            if len(x) != len(y):
                raise ValueError(f"trace {trace.get('name')!r}: {len(x)} x values but {len(y)} y values")
            keep = downsample_indices(len(x), self.max_points)
            data.append({**trace, "x": x[keep].tolist(), "y": y[keep].tolist()})
        return json.dumps({**self._spec, "data": data})
