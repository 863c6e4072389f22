"""Each browser session's copy of the page, kept at the page's size.

gradio keeps, per session, the components an event updated: a new component object for each update (the layer and
head sliders' range after Show attention), which gets a new id. When such a component is then an event's input
(a redraw reads the sliders), gradio's input preparation files the new object under that new id as well (gradio
6.31, `Blocks.preprocess_data`: `if block._id not in state: state[block._id] = block`), and the next update makes
another. Every "update, then read" cycle added a component and its config to the session, for as long as the
session lived: 20 clients grew the server by ~40 MB per 1,000 requests (bench/RESULTS.md, issue 18).

`tidying` removes those entries after each input preparation. The app builds no components while it runs (no
gr.render), so a session needs exactly the page's ids; the entries under them (the updated components themselves)
stay.
"""
from __future__ import annotations

import gradio as gr


def drop_stray_components(state, page: frozenset) -> int:
    """Remove the components (and their configs) filed under ids the page does not have; how many went."""
    if state is None:
        return 0
    blocks = state.blocks_config.blocks
    stray = [key for key in blocks if key not in page]
    for key in stray:
        del blocks[key]
        state.config_values.pop(key, None)
    return len(stray)


def tidying(prepare, demo: gr.Blocks):
    """gradio's input preparation (Blocks.preprocess_data) that leaves every session of `demo` at the page's
    components after it (`demo` built); server.guard decides where it goes among the other wraps."""
    page = frozenset(demo.default_config.blocks)

    async def prepare_and_tidy(block_fn, inputs, state=None, *args, **kwargs):
        try:
            return await prepare(block_fn, inputs, state, *args, **kwargs)
        finally:
            drop_stray_components(state, page)

    return prepare_and_tidy
