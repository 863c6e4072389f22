"""Where a demo takes the page (issue 38, item 3): the figure each demo is about (tabs.demos.Demo.figure, the one
owner) is on the page, and the page brings it into view after the demo's click. "Sinusoid waves" looked for
`pe-matrix` while the matrix's id was `pe-pe`, and no demo without an attention kind scrolled at all: at 1280 its
figure sat at y 448-898, on a phone from y 896. Read from the page's own config (what the browser is sent)."""
from __future__ import annotations

import re

import pytest

from tabs.demos import DEMOS, available_demos, runs

SCROLLS_TO = re.compile(r'const figure = document\.getElementById\("([^"]+)"\)')  # tabs.ask_first.in_view_when_drawn


@pytest.fixture(scope="module")
def config():
    import app

    return app.build_demo().get_config_file()


def test_every_demo_is_about_a_figure_on_the_page(config):
    """Every demo's figure (and its question's, which Reveal brings into view) is the elem_id of a component."""
    ids = {c["props"].get("elem_id") for c in config["components"]}
    assert {"att-one", "patch-heads"} <= ids  # the check sees the page's ids
    missing = {d.label: d.figure for d in DEMOS if d.figure not in ids}
    assert not missing, f"demos about a figure the page does not have: {missing}"
    assert all(d.question.figure == d.figure for d in DEMOS if d.question)


def test_every_demo_that_runs_brings_its_figure_into_view(config):
    """After each demo's click the page runs the in-view step for its figure (once drawn, or for a training's status
    line once laid out): every demo that runs here, the positional and training ones too."""
    targets = {m for dep in config["dependencies"] for m in SCROLLS_TO.findall(dep.get("js") or "")}
    shown = [d for d in available_demos() if runs(d)]
    assert any(d.tab == "positional" for d in shown) and any(d.tab == "train" for d in shown)
    missing = {d.label: d.figure for d in shown if d.figure not in targets}
    assert not missing, f"demos whose figure is never brought into view: {missing}"

