"""The input values all sessions hold are bounded in bytes in total (server.held_inputs; issue 37, item 4).

Regression: gradio keeps in each session the last value every input of a call sent (a figure sent to be saved as
HTML, a pasted text), 256 sessions of them: 40 sessions each sending a 12.5 MiB figure held +1.2 GB. Bytes counted,
not RSS: after 12 sessions each save a ~1 MiB figure as HTML through the page's own call, with the budget set to
4 MiB, the values the sessions hold (walked fresh in gradio's store of sessions) weigh at most the budget, the
newest session still holds its figure, the oldest no longer does. Loopback."""
from __future__ import annotations

import json
import uuid

import pytest

from server import session_state
from server.held_inputs import held_value, value_bytes

from tests.app_server import join_and_wait, serve_demo

BUDGET, SESSIONS = 4 << 20, 12


@pytest.fixture(scope="module")
def served():
    with serve_demo() as served:
        yield served


def _figure(seed: int) -> dict:
    """A plotly heatmap of about 1 MiB of JSON (a gr.Plot value as the page sends it)."""
    z = [[(seed * 7919 + i * 131 + j) % 1000 / 997 for j in range(230)] for i in range(230)]
    return {"type": "plotly", "plot": json.dumps({"data": [{"type": "heatmap", "z": z}], "layout": {}})}


def _held(demo) -> dict[str, int]:
    """Bytes of the values each session holds that the budget counts (>= its `counted`), walked fresh."""
    counted = session_state.HELD.counted
    return {session: sum(size for key in dict.keys(state.config_values)
                         if (size := value_bytes(held_value(state.config_values, key))) >= counted)
            for session, state in demo.state_holder.session_data.items()}


def test_the_values_sessions_hold_stay_within_the_budget(served, monkeypatch):
    demo, url = served
    monkeypatch.setattr(session_state.HELD, "budget", BUDGET)
    export = next(i for i, fn in demo.fns.items() if fn.concurrency_id == "export-figure")
    sessions = [uuid.uuid4().hex[:12] for _ in range(SESSIONS)]
    for i, session in enumerate(sessions):
        done = join_and_wait(url, export, [_figure(i)], session)
        assert done.get("success"), done
    held = _held(demo)
    assert sum(held.values()) <= BUDGET, f"{sum(held.values()):,} bytes held for a budget of {BUDGET:,}"
    assert session_state.HELD.total <= BUDGET
    assert held[sessions[-1]] >= 1 << 20 and held[sessions[0]] == 0, [held.get(s) for s in sessions]


def _large_bytes(least: int) -> int:
    """How many bytes objects of at least `least` bytes a container of this process still refers to."""
    import gc

    gc.collect()
    seen = set()
    for holder in gc.get_objects():
        if type(holder).__name__ == "cell":
            try:
                items = [holder.cell_contents]
            except ValueError:
                continue
        elif isinstance(holder, dict):  # dict's own values: a subclass's may compute them (transformers' lazy
            items = list(dict.values(holder))  # auto mappings import every model: ci6 failed here)
        elif isinstance(holder, list):
            items = list(list.__iter__(holder))
        elif isinstance(holder, tuple):
            items = list(tuple.__iter__(holder))
        else:
            continue
        seen.update(id(item) for item in items if isinstance(item, bytes) and len(item) >= least)
    return len(seen)


def test_no_request_body_is_held_after_its_call(served):
    """Nothing keeps a request's body once its call is done (issue 37, item 4): the front door (server.http_gate)
    read each JSON body to check it and handed it on in a closure that a finished request's chain of receive
    functions still held, one large body (12.5 MB after a 12.5 MiB export, bench/held_memory.py --probe). Counted:
    bytes objects as large as the body a container refers to, after the call, none. Loopback."""
    demo, url = served
    export = next(i for i, fn in demo.fns.items() if fn.concurrency_id == "export-figure")
    figure = _figure(99)
    done = join_and_wait(url, export, [figure], uuid.uuid4().hex[:12])
    assert done.get("success"), done
    assert _large_bytes(len(figure["plot"])) == 0
