"""A training the server refuses at the queue's door (a full line, one already running for this client) must leave
the Train tab usable: issue 18's open item, "Start may stay busy after a refused training"."""
from __future__ import annotations

from limits import BROWSER_WAITING, TRAINING_GROUP
from tests.browser import tour

_BUTTONS = """() => ['#train-start', '#train-compare'].map(id => {
    const b = document.querySelector(id); return [b.disabled, b.innerText.trim()]; })"""


def test_a_refused_start_leaves_the_buttons_usable(lab, monkeypatch):
    """Regression: Start and Compare were disabled ("Training…") by a step before the queue and enabled again by a
    step after the run; gradio skips the steps after a call refused at the queue's door (422), so a refused Start
    stayed at "Training…" until the page was reloaded. Here every training is refused (as if this client already
    had one): the refusal is shown, and Start and Compare stay clickable."""
    monkeypatch.setitem(BROWSER_WAITING, TRAINING_GROUP, 0)  # every training: "you already have one"
    page = lab.page
    tour.show_tab(page, "train")
    page.locator("#train-start").click()
    page.wait_for_function("() => document.body.innerText.includes('already have a training')")
    page.wait_for_timeout(1500)  # any step still to come has come
    assert page.evaluate(_BUTTONS) == [[False, "Start"], [False, "Compare variants (trains once per variant)"]]
