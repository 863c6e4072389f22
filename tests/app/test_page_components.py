"""Every component of the page is one the browser can draw.

The page picks the code that draws a component by its type, which gradio takes from the component's class name.
The app subclasses a few gradio components to check their values (widgets.controls); a subclass named otherwise
(a `CheckpointDropdown`) is sent as a type the browser does not have, and the page does not draw it (the
browser tests failed from the first click on).
"""
from __future__ import annotations


def test_every_subclassed_component_keeps_the_type_of_its_gradio_component():
    import app

    demo = app.build_demo()
    ours = [b for b in demo.blocks.values() if not type(b).__module__.startswith("gradio.")]
    assert {type(b).__name__ for b in ours} >= {"Slider", "Radio", "Number"}  # the check sees them
    wrong = {}
    for block in ours:
        base = next(c for c in type(block).__mro__ if c.__module__.startswith("gradio."))
        if block.get_block_name() != base.__name__.lower():
            wrong[type(block).__qualname__] = (block.get_block_name(), base.__name__.lower())
    assert not wrong, f"components sent as a type the page cannot draw (sent, expected): {wrong}"
