"""Live training in a real browser ends as it says (issue 19): "Training finished" is always shown.

The live run's renderer memory is an open defect (the Train page's renderer grew to 12 GB in 7 min on 2026-11-24),
so no test here samples it; see the session notes.
"""
from __future__ import annotations

from tests.browser import tour


def _status_matches(page, pattern: str, timeout: float | None = None) -> float:
    """Wait until the status text matches the JS regex `pattern`; the page's clock (ms) when it did."""
    return page.wait_for_function(f"() => /{pattern}/.test(document.querySelector('#train-status').innerText) "
                                  f"&& performance.now()", timeout=timeout).json_value()


def test_a_short_run_ends_with_training_finished(lab):
    """Regression: "Training finished" never appeared although the model was saved. A 30-step run's last update
    says it, names the model, and the model is in the checkpoint list."""
    page = lab.page
    tour.show_tab(page, "train")
    page.get_by_text("Hyper-parameters").click()
    steps = page.get_by_label("Steps (10-5000)")
    steps.fill("30")
    steps.press("Enter")
    page.locator("#train-start").click()
    _status_matches(page, "Training finished", timeout=180_000)
    status = page.locator("#train-status").inner_text()
    assert "is now in the checkpoint list" in status and "exact match" in status, status
