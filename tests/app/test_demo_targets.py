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



def test_every_demo_of_a_model_that_is_not_here_stays_and_says_how_to_get_it(monkeypatch):
    """Issue 38, item 5: "Induction heads in GPT-2" was hidden when GPT-2 was not cached while "IOI in GPT-2" stayed
    and said how to download it. Every demo of a pretrained model (one that is not shipped) is in the row when its
    weights are not here, and its click says the download command instead of computing (a class learns what
    exists); no other demo is hidden."""
    import tabs.demos as demos
    from tabs.demos import DemoNote, apply_demo
    from store.catalogue import fixed_choices

    shipped = {c for c in fixed_choices() if "pretrained" not in c}
    monkeypatch.setattr(demos, "fixed_choices", lambda: sorted(shipped))
    pretrained = [d for d in DEMOS if d.ckpt and "pretrained" in d.ckpt]
    assert {d.label for d in pretrained} >= {"Induction in GPT-2", "IOI in GPT-2"}
    assert [d.label for d in available_demos()] == [d.label for d in DEMOS]
    for demo in pretrained:
        assert not runs(demo), demo.label
        said = apply_demo(demo.label, "reverse")
        assert isinstance(said, DemoNote), demo.label  # only its explanation changes: nothing is computed
        assert "python -m transformer.pretrained gpt2" in said.explain, demo.label
