"""A phone stacks the plots that share a row (app.py's CSS on the class widgets.ui.FIGURE_ROW), and no rule of the page's
CSS is a :has() over a figure's inside: on a phone, after the two-inputs maps and a comparison, a change of checkpoint
froze the page 60-75 s recalculating `.row:has(.js-plotly-plot)` (a page with the rule froze in 5 of 5 tries, 0 of 2
without it; tests/browser/test_fit_the_screen.py at 390 px is the browser's check)."""
import re

import gradio as gr

import app
from widgets.ui import FIGURE_ROW


def _holds_plot(block) -> bool:
    return isinstance(block, gr.Plot) or any(_holds_plot(c) for c in getattr(block, "children", None) or [])


def test_every_row_holding_a_plot_and_only_those_is_marked():
    demo = app.build_demo()
    rows = [b for b in demo.blocks.values() if isinstance(b, gr.Row)]
    marked = {b._id for b in rows if FIGURE_ROW in (b.elem_classes or [])}
    holding = {b._id for b in rows if _holds_plot(b)}
    assert holding and marked == holding
    config = demo.get_config_file()
    assert sum(FIGURE_ROW in (c.get("props", {}).get("elem_classes") or []) for c in config["components"]) == len(holding)


def test_no_css_rule_is_a_has_over_the_inside_of_a_figure():
    assert f".row.{FIGURE_ROW}" in app.CSS
    assert not re.search(r":has\([^)]*(plotly|\.js-plotly-plot)", app.CSS)
