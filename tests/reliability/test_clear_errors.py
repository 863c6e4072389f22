"""Clear errors for the generic ones left: a message in words, never HTTP 500 or "raised an exception".

Regressions (issue 30, item 6, and item 8): a lone surrogate in a translate-en-es input failed inside `tokenizers`
with a TypeError (Show attention and Generate); a fn_index out of range (huge or -1) gave HTTP 500 from a KeyError
inside gradio; a generation had no memory bound (beam width x length x model). Loopback only."""
from __future__ import annotations

import httpx
import pytest

from tests.app_server import api_client


@pytest.fixture(scope="module")
def client(app_url):
    return api_client(app_url)


def test_a_lone_surrogate_is_named_in_show_attention_and_generate(client):
    with pytest.raises(Exception, match="surrogate"):
        client.predict("translate-en-es", "The cat \ud800 sat.", "", api_name="/attention")
    with pytest.raises(Exception, match="surrogate"):
        client.predict("translate-en-es", "The cat \udfff sat.", api_name="/generate")


@pytest.mark.parametrize("route", ["gradio_api/queue/join", "gradio_api/run/predict"])
@pytest.mark.parametrize("index", [10**12, -1])
def test_a_function_index_out_of_range_is_refused_with_a_message(app_url, route, index):
    body = {"data": [], "fn_index": index, "session_hash": "k3j4h5g6f7a", "event_data": None, "trigger_id": None}
    answer = httpx.post(app_url + route, json=body, timeout=30)
    assert answer.status_code == 400 and "no function" in answer.json()["detail"], answer.text


def test_a_generation_over_its_memory_bound_is_refused_with_what_to_lower(client, monkeypatch):
    """With the bound lowered under a beam-8 generation of 400 tokens, the refusal names what to lower; the real
    bound lets the largest generation of every shipped model through."""
    import limits
    import tabs.generation as generation
    from store.catalogue import SHIPPED, shipped_model
    from transformer.memory import generation_bytes

    for name in SHIPPED:
        config = shipped_model(name)[0].config
        assert generation_bytes(config, config.max_len, 400, 8) <= limits.GENERATION_BYTES, name
    monkeypatch.setattr(generation, "GENERATION_BYTES", 1 << 20)  # the bound the generation reads (tabs.generation)
    with pytest.raises(Exception, match="lower the beams"):
        client.predict("shakespeare-char", "To be, or not", "beam", 1.0, 0, 1.0, 8, 400, 0, api_name="/generate")
