"""A GPT-2 in the local Hugging Face cache joins the checkpoint list and every tab works with it (tested with a small
random GPT-2 saved into a temporary Hub-cache layout; no network)."""
from __future__ import annotations

import json

import pytest

from tests.app_server import api_client
from tests.conftest import TINY_GPT2_REPO


@pytest.fixture(scope="module")
def client(tiny_gpt2_hub_cache):
    from tests.app_server import serve_app_with_hub_cache

    with serve_app_with_hub_cache(tiny_gpt2_hub_cache) as url:
        yield api_client(url)


NAME = TINY_GPT2_REPO.split("/")[-1] + " (pretrained)"


def test_the_cached_gpt2_is_listed_and_every_tab_works(client):
    api = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    choices = api["/model"]["parameters"][0]["python_type"]["type"]
    assert NAME in choices
    summary, params, plot, kv = client.predict(NAME, api_name="/model")
    assert "decoder-only" in summary and "gpt2-bpe" in summary
    text, table, picker, notice = client.predict(NAME, "Hello world, this is", "greedy", 1.0, 0, 1.0, 4, 5, 0,
                                                 api_name="/generate")
    from store.catalogue import pretrained
    from transformer.generate import generate
    from transformer.pretrained import load_pretrained

    model, tok, _ = load_pretrained(pretrained()[NAME], device="cpu")  # the library, on the same cached weights
    steps = list(generate(model, tok.encode("Hello world, this is"), 5))
    assert text == tok.decode(s.token_id for s in steps) and len(table["data"]) == len(steps) >= 1
    notice, heads, kind, layer, head, query = client.predict(NAME, "Hello world! Hello world!", "",
                                                             api_name="/attention")
    assert kind["value"] == "decoder self"
    one, grid, overview, scores = client.predict("decoder self", 0, 0, "induction", api_name="/draw_attention")
    title = json.loads(one["plot"])["layout"]["title"]["text"]
    assert "decoder self attention" in title and {"induction", "previous token"} <= set(scores["headers"])
    table = client.predict("decoder self", ["0.0"], api_name="/ablate")
    assert table["headers"][-1] == "loss" and len(table["data"]) == 2
    *_, note = client.predict(64, 50, "0, 1", NAME, api_name="/positional")
    assert NAME in note


def test_fill_the_mask_without_a_cached_bert_says_how_to_get_one(client):
    """Honest about what is not there: with no encoder-only model in the cache, fill the mask on GPT-2 returns no
    table and a notice giving the download command, instead of failing."""
    table, notice = client.predict(NAME, "The capital of France is [MASK].", 5, api_name="/fill_mask")
    assert not (table or {}).get("data")
    assert "none is in this machine's Hugging Face cache" in notice
    assert "python -m transformer.pretrained bert-base-uncased" in notice
