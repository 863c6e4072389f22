"""One training per browser, and every refusal or wait said in words (issue 38, item 4): a second Start while one
trains, a second tab of the same browser, a run waiting for a place in the training line; the "already running"
notice gone once the run it was about has ended; no refused call sent (each logged an HTTP 422 in the console)."""
from __future__ import annotations

import pytest

from tests.browser import tour

_NOTICE = "() => document.querySelector('#train-notice').innerText"
_STATUS = "() => document.querySelector('#train-status').innerText"
# JS: whether an element is shown, and its text (the sentence under the buttons is hidden by the page's CSS)
_BUSY = """() => { const b = document.querySelector('#train-busy');
    return b && b.offsetParent !== null ? b.innerText : ''; }"""


class Console:
    """What a page logs in its console as an error, and every answer of 400 or more it gets."""

    def __init__(self, page):
        self.errors, self.refused = [], []
        page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        page.on("response", lambda r: r.status >= 400 and self.refused.append(f"{r.status} {r.url}"))


def _status_has(page, text: str) -> None:
    page.wait_for_function(f"() => document.querySelector('#train-status').innerText.includes({text!r})",
                           timeout=tour.TRAINING_MS)


def _open(context, url: str, size: int):
    page = context.new_page()
    page.set_default_timeout(tour.TIMEOUT_MS)
    page.set_viewport_size(tour.SIZES[size])
    tour.OfflineGuard().install(page)
    seen = Console(page)
    tour.open_app(page, url)
    tour.show_tab(page, "train")
    return page, seen


def _stop(page) -> None:
    page.locator("#train-stop").click()
    _status_has(page, "Training stopped")
    page.wait_for_function("() => !document.querySelector('#train-start').disabled")


@pytest.fixture
def context(browser):
    context = browser.new_context(reduced_motion=tour.REDUCED_MOTION)
    yield context
    context.close()


def test_a_second_start_is_said_in_words_sends_nothing_and_its_notice_goes_after_stop(context, app_url):
    """Regression: while a run trained, Start showed only a disabled "Training…" button, no sentence; a training demo
    clicked meanwhile was refused in words but its call still went to the server, which refused it at the door
    (HTTP 422, logged in the console); and its "already running" notice stayed after Stop, when nothing ran. Now a
    sentence under the buttons says why they are disabled, exactly while they are; the refused click sends nothing;
    the notice is gone once the run has ended."""
    page, seen = _open(context, app_url, 1280)
    assert page.evaluate(_BUSY) == ""
    page.locator("#train-start").click()
    _status_has(page, "step")
    # the run's first update disables the buttons; the page may draw the status of that update a frame before the
    # buttons (CI, 1 run in 8: the sentence read '' right after "step"): the sentence is checked once Start is disabled
    page.wait_for_function("() => document.querySelector('#train-start').disabled")
    assert "One training at a time per browser" in page.evaluate(_BUSY)
    tour.click_demo(page, "Induction forming")
    page.wait_for_function("() => document.querySelector('#train-notice').innerText.includes('already running')")
    page.wait_for_timeout(1000)  # a refused call, if one was sent, has been answered
    assert seen.refused == [] and seen.errors == [], (seen.refused, seen.errors)
    tour.show_tab(page, "train")
    _stop(page)
    page.wait_for_function("() => !document.querySelector('#train-notice').innerText.trim()")
    assert page.evaluate(_BUSY) == ""


def test_a_second_tab_of_the_same_browser_does_not_train_and_says_why(context, app_url):
    """Regression: the README says one training per browser, but a second tab of the same browser (same key in its
    local storage and cookie, another gradio session) started a second training. Now the server counts a browser's
    trainings by its key, and the second tab's notice says in words that this browser trains in another tab; its
    status is not a run's, nothing is sent to be refused, and its Start stays usable."""
    first, _ = _open(context, app_url, 1280)
    second, seen = _open(context, app_url, 1280)
    first.locator("#train-start").click()
    _status_has(first, "step")
    second.locator("#train-start").click()
    second.wait_for_function("() => document.querySelector('#train-notice').innerText.includes('another tab')")
    assert "did not start" in second.evaluate(_NOTICE)
    second.wait_for_timeout(1500)  # what a run would have written by now
    assert "step" not in second.evaluate(_STATUS) and not second.locator("#train-start").is_disabled()
    assert seen.refused == [] and seen.errors == [], (seen.refused, seen.errors)
    _stop(first)


@pytest.mark.parametrize("size", [1280, 390])
def test_a_run_waiting_for_a_place_says_so_in_words(browser, app_url, monkeypatch, size):
    """Regression: a run queued behind the trainings of other browsers showed "queue: 1/1 | 5.3/208.4s" on a status
    that still said "Press Start.", with Start enabled, as if nothing had happened. Here the training line has one
    place (set in the server, which runs in this process) and another browser trains: the status now says in words
    that the run waits for a place and starts by itself, in view; once the other run stops, it trains."""
    from limits import TRAINING_GROUP
    from tests.app_server import running_app

    contexts = [browser.new_context(reduced_motion=tour.REDUCED_MOTION), browser.new_context(reduced_motion=tour.REDUCED_MOTION)]  # two browsers: two keys
    try:
        other, _ = _open(contexts[0], app_url, 1280)
        waiting, _ = _open(contexts[1], app_url, size)
        other.locator("#train-start").click()
        _status_has(other, "step")
        line = running_app()._queue.event_queue_per_concurrency_id[TRAINING_GROUP]  # made by the first training
        monkeypatch.setattr(line, "concurrency_limit", 1)
        waiting.locator("#train-start").click()
        _status_has(waiting, "Waiting for a place to train")
        assert "starts by itself" in waiting.evaluate(_STATUS)
        box = waiting.locator("#train-status").bounding_box()
        assert 0 <= box["y"] and box["y"] + 20 <= tour.SIZES[size]["height"], f"the status is out of view: {box}"
        _stop(other)
        _status_has(waiting, "step")
        _stop(waiting)
    finally:
        for context in contexts:
            context.close()
