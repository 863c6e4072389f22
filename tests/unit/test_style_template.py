"""visualize.style's template: every figure has plotly_white whole (oracle: plotly's own registered template), given
when the figure is made, not validated again by style_figure for each figure (13 ms a figure; counted, not timed)."""
from __future__ import annotations

import plotly.graph_objects as go
import plotly.io as pio
from _plotly_utils.basevalidators import BaseTemplateValidator

from visualize.style import style_figure


def _template_of(fig) -> dict:
    return fig.to_plotly_json()["layout"]["template"]


def test_a_styled_figure_has_plotly_white_whole():
    """Oracle: the template of a styled figure is plotly's registered plotly_white, for a figure made now and for one
    made under another default (a notebook that changed it), which style_figure gives it."""
    white = pio.templates["plotly_white"].to_plotly_json()
    assert _template_of(style_figure(go.Figure(go.Heatmap(z=[[1, 2]])), "t")) == white
    before = pio.templates.default
    try:
        pio.templates.default = "plotly"
        made_elsewhere = go.Figure(go.Heatmap(z=[[1, 2]]))
    finally:
        pio.templates.default = before
    assert _template_of(made_elsewhere) != white and _template_of(style_figure(made_elsewhere, "t")) == white


def test_style_figure_does_not_validate_the_template_again(monkeypatch):
    """Cost, counted: styling a figure made in this process validates no template (before, update_layout(template=
    "plotly_white") validated the whole template for every figure: 13 ms of a first redraw's three figures)."""
    calls = []
    validate = BaseTemplateValidator.validate_coerce

    def counted(self, *args, **kwargs):
        calls.append(1)
        return validate(self, *args, **kwargs)
    fig = go.Figure(go.Heatmap(z=[[1, 2], [3, 4]]))
    monkeypatch.setattr(BaseTemplateValidator, "validate_coerce", counted)
    style_figure(fig, "a title")
    assert calls == []
