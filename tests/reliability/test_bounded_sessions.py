"""Bounded sessions: gradio keeps a SessionState for every session id that reaches it (a copy of the page's config,
~0.4 MB, and every component an event updated), and by default keeps 10,000 of them: a client inventing session
ids (any request names one, even a refused component call) grew the server by about 4 GB before gradio let any go.
The app keeps SESSIONS (limits.py), least recently used out first, so a session in use stays.

Bounded: SESSIONS + 100 cheap requests and 16 views, all to 127.0.0.1."""
from __future__ import annotations

import re
import uuid

import httpx
import pytest

from tests.app_server import api_client, serve_demo, streaming

from limits import SESSIONS


@pytest.fixture(scope="module")
def served():
    with serve_demo() as served:
        yield served


def new_session(http: httpx.Client, url: str, session: str, component: int) -> int:
    """A request that only names a session (a call to a component function that does not exist: 404)."""
    body = {"session_hash": session, "component_id": component, "fn_name": "nothing", "data": None}
    return http.post(url + "gradio_api/component_server", json=body).status_code


def test_invented_session_ids_are_bounded_and_a_session_in_use_stays(served):
    demo, url = served
    mine, component = uuid.uuid4().hex, next(iter(demo.blocks))
    with httpx.Client(timeout=30) as http:
        assert new_session(http, url, mine, component) == 404
        for i in range(SESSIONS + 100):
            assert new_session(http, url, uuid.uuid4().hex, component) == 404
            if i % 50 == 0:
                new_session(http, url, mine, component)  # the class keeps using its page
    sessions = demo.state_holder.session_data
    assert len(sessions) <= SESSIONS, f"{len(sessions)} sessions kept; the limit is {SESSIONS}"
    assert mine in sessions


def test_a_session_keeps_the_page_size_however_many_requests_it_makes(served):
    """Regression: each "update a slider, then read it" cycle (Show attention sets the layer and head sliders'
    ranges, a redraw reads them) added a component and its config to the session, forever: gradio files the
    updated component under its new id when it is next an input. 20 clients grew the server by ~40 MB per 1,000
    requests (bench/RESULTS.md, issue 18)."""
    demo, url = served
    client = api_client(url)
    for i in range(8):
        client.predict("reverse", ["attention", "transformer"][i % 2], "", api_name="/attention")
        client.predict("cross", i % 2, i % 4, "entropy", api_name="/draw_attention")
    session = demo.state_holder.session_data[client.session_hash]
    page = set(demo.default_config.blocks)
    assert set(session.blocks_config.blocks) == page, \
        f"{len(set(session.blocks_config.blocks) - page)} components beyond the page's {len(page)}"
    assert set(session.config_values) <= page


LONG = ("task", "reverse", "", None, "", 1, 4, 32, 3e-3, 5000, 8)  # minutes, unless stopped


def test_a_page_whose_session_was_let_go_keeps_its_models_and_its_stop(served):
    """A page idle while SESSIONS newer sessions came finds its gr.State values back at their defaults. Its browser
    key (its trained models, from the page's cookie) and its running training's Stop must survive that
    (store.sessions): before, Stop answered "Nothing is training" while the run went on, and the page's models
    were "unknown" until a reload."""
    from store.catalogue import USER_MODELS
    from store.sessions import KEY_COOKIE

    demo, url = served
    key = uuid.uuid4().hex
    client = api_client(url, headers={"Cookie": f"{KEY_COOKIE}={key}"})  # the page's cookie
    job = client.submit(*LONG, api_name="/train")
    streaming(job)
    demo.state_holder.session_data.pop(client.session_hash)  # gradio lets the session's state go
    client.predict(api_name="/stop")  # raised "Nothing is training in this tab" before
    outputs = job.result(timeout=120)
    status = outputs[1]
    assert "Training stopped" in status, status
    name = re.search(r"“(my reverse model #\d+)”", status).group(1)
    assert USER_MODELS.get(key, name) is not None, "the model went to the session, not to the browser's key"
    demo.state_holder.session_data.pop(client.session_hash, None)
    client.predict(name, "abc", "", api_name="/attention")  # its own model, found through its key
