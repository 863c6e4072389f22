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

After each preparation the inputs' values it held are counted too, bounded in bytes in total (server.held_inputs).

`sessions_built_on_demand` makes a new session cheap: gradio built, on its event loop, the config of every component
of the page for each new session id (~30 ms of CPU for the 502 here, while every other client's request waited; a
client may name a new session id with every request: the training floods of bench/hostile_load.py did 78 times a
minute). A session's config of a component is built when a call first reads or writes it (PageConfigs).
"""
from __future__ import annotations

from types import SimpleNamespace

import gradio as gr
from gradio.state_holder import SessionState, StateHolder

from limits import HELD_INPUTS
from server.held_inputs import HeldInputs

HELD = HeldInputs(HELD_INPUTS["bytes"], HELD_INPUTS["counted"])  # the input values every session holds, in bytes


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
            HELD.account(getattr(state, "config_values", None), [block._id for block in block_fn.inputs])

    return prepare_and_tidy


class PageConfigs(dict):
    """A session's `config_values` (gradio's copy of each component's config, which it updates with the values the
    session's calls read and write), each built the first time it is read instead of all of them when the session
    is made: a new session id cost the event loop a config of every component of the page (502 here, ~30 ms of
    CPU; gradio's SessionState), and a client may name a new one with every request. What a read finds is what
    gradio would have built for it at the session's start (the app changes no page component once it runs)."""

    def __init__(self, blocks_config, page):
        super().__init__()
        self._blocks_config, self._unbuilt = blocks_config, set(page)

    def _build(self, key):
        self._unbuilt.discard(key)
        value = self._blocks_config.config_for_block(key, [], self._blocks_config.blocks[key])
        dict.__setitem__(self, key, value)
        return value

    def _built(self, key=None):
        """This key's config built if it is not yet (every key's, with none): for what reads or removes it."""
        for k in [key] if key is not None else list(self._unbuilt):
            if k in self._unbuilt:
                self._build(k)
        return self

    def __missing__(self, key):
        if key not in self._unbuilt:
            raise KeyError(key)
        return self._build(key)

    def __contains__(self, key) -> bool:
        return dict.__contains__(self, key) or key in self._unbuilt

    def __setitem__(self, key, value) -> None:
        self._unbuilt.discard(key)
        dict.__setitem__(self, key, value)

    def __delitem__(self, key) -> None:
        dict.__delitem__(self._built(key), key)

    def pop(self, key, *default):
        return dict.pop(self._built(key), key, *default)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def forget_value(self, key) -> None:
        """Give the component `key` back its page default (built again when read): the value a call sent, which
        gradio holds here, goes (server.held_inputs)."""
        if dict.__contains__(self, key):
            dict.__delitem__(self, key)
            self._unbuilt.add(key)

    def __len__(self) -> int:
        return dict.__len__(self) + len(self._unbuilt)

    # what reads them all (gradio's deep link) finds them all built
    def __iter__(self):
        return dict.__iter__(self._built())

    def keys(self):
        return dict.keys(self._built())

    def values(self):
        return dict.values(self._built())

    def items(self):
        return dict.items(self._built())


class PageSession(SessionState):
    """gradio's SessionState, its `config_values` built on demand (PageConfigs)."""

    def __init__(self, blocks: gr.Blocks):
        # gradio's own init, given no blocks to build configs of; then the page's, built when read
        super().__init__(SimpleNamespace(default_config=blocks.default_config, blocks={}))
        self.config_values = PageConfigs(self.blocks_config, [k for k in self.blocks_config.blocks
                                                              if k in blocks.blocks])


class PageSessions(StateHolder):
    """gradio's store of sessions, making each new one a PageSession."""

    def __getitem__(self, session_id: str) -> SessionState:
        if session_id not in self.session_data:
            self.session_data[session_id] = PageSession(self.blocks)
        return super().__getitem__(session_id)


def sessions_built_on_demand(demo: gr.Blocks) -> None:
    """Make the sessions of `demo`'s server (gradio makes its store at launch: call this after) PageSessions."""
    demo.state_holder.__class__ = PageSessions
