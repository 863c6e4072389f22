"""No handler of the app's pages returns a tuple matched to its outputs by position (issue 41 item 5): a handler
with several outputs answers by name (widgets.answers: each field of its Answer sets the component of its name),
read from the built app's events."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def handlers():
    """{(module, name): answers by name} of every event handler with more than one output."""
    import app

    found = {}
    for fn in app.build_demo().fns.values():
        if fn.fn is not None and len(fn.outputs) > 1:
            key = (getattr(fn.fn, "__module__", "?"), getattr(fn.fn, "__name__", "?"))
            found[key] = found.get(key, True) and bool(getattr(fn.fn, "answers_by_name", False))
    return found


def test_the_pages_handlers_answer_by_name(handlers):
    """Invariant: every handler with several outputs answers by name. Failed before: the Attention tab
    (compute_attention's 11 outputs, compute_and_draw's 15, draw_attention's 4, ...), the Train tab (run_train's
    11, ...), a demo's click (apply_demo's 35) and their sections all answered by position; then 25 handlers were
    left (the Generate, Positional encoding, Model and Class tabs, a link's opening, Marian's map, the features
    section, a figure's HTML download, widgets.ui's follow and open_states' page load)."""
    assert {"compute_and_draw", "run_train", "apply_demo", "draw_patching", "poll", "run_generate",
            "opened_by_link", "follow"} <= {name for _, name in handlers}
    by_position = {key for key, named in handlers.items() if not named}
    assert by_position == set(), "answer by name (widgets.answers)"
