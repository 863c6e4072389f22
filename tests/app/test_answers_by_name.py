"""No handler of the app's pages returns a tuple matched to its outputs by position (issue 41 item 5): a handler
with several outputs answers by name (widgets.answers: each field of its Answer sets the component of its name),
read from the built app's events."""
from __future__ import annotations

import pytest

# Handlers with several outputs that still answer by position, not yet converted, each with where it is: the list
# only shrinks (test_every_exception_still_answers_by_position)
BY_POSITION = {
    ("tabs.attention.beside", "fill"): "Marian's map beside ours (6 outputs)",
    ("tabs.attention.features", "draw_features"): "What the heads write (issue 42's section, new on main)",
    ("tabs.attention.link", "opened_by_link"): "a link's opening (24 outputs, the Generate tab's among them)",
    ("tabs.classroom.page", "<lambda>"): "the Class tab (issue 39 changes it in parallel)",
    ("tabs.classroom.page", "ended"): "the Class tab",
    ("tabs.classroom.page", "link_join"): "the Class tab",
    ("tabs.classroom.page", "pushed"): "the Class tab",
    ("tabs.classroom.page", "tapped"): "the Class tab",
    ("tabs.classroom.page", "teacher_started"): "the Class tab",
    ("tabs.classroom.page", "typed_join"): "the Class tab",
    ("tabs.classroom.student", "answer_label"): "the Class tab",
    ("tabs.classroom.student", "poll"): "the Class tab",
    ("tabs.figure_export", "html_file"): "a figure's HTML download",
    ("tabs.generate", "clear_generate"): "the Generate tab",
    ("tabs.generate", "inspect_step"): "the Generate tab",
    ("tabs.generate", "run_fill_mask"): "the Generate tab",
    ("tabs.generate", "run_generate"): "the Generate tab",
    ("tabs.generate_link", "generate_linked"): "the Generate tab",
    ("tabs.model", "describe_model"): "the Model tab",
    ("tabs.positional", "checkpoint_sizes"): "the Positional encoding tab",
    ("tabs.positional", "clear_positional"): "the Positional encoding tab",
    ("tabs.positional", "draw_positional"): "the Positional encoding tab",
    ("tabs.positional", "draw_rope"): "the Positional encoding tab",
    ("widgets.ui", "<lambda>"): "open_states' page load (one False per section)",
    ("widgets.ui", "follow"): "what follows the checkpoint (Followers: each tab's own list)",
}


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
    """Invariant: every handler with several outputs answers by name but the named exceptions. Failed before: the
    Attention tab (compute_attention's 11 outputs, compute_and_draw's 15, draw_attention's 4, ...), the Train tab
    (run_train's 11, ...), a demo's click (apply_demo's 35) and their sections all answered by position."""
    assert {"compute_and_draw", "run_train", "apply_demo", "draw_patching"} <= {name for _, name in handlers}
    by_position = {key for key, named in handlers.items() if not named}
    assert by_position - set(BY_POSITION) == set(), "answer by name (widgets.answers)"


def test_every_exception_still_answers_by_position(handlers):
    """An exception is only for a handler that still answers by position: one converted since leaves the list."""
    assert {key for key in BY_POSITION if handlers.get(key, True)} == set()
