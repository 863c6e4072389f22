"""A Llama (SmolLM2's layout) and a BERT in the local Hugging Face cache join the checkpoint list and work in the
app: generation, the Attention tab, the Model tab, and fill the mask for the BERT (small random models saved with
`transformers` in the Hub-cache layout; no network)."""
from __future__ import annotations

import pytest
import torch

from tests.app_server import api_client
from tests.hf_models import families_hub_cache

LLAMA, BERT = "tiny-llama (pretrained)", "tiny-bert (pretrained)"


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return families_hub_cache(tmp_path_factory.mktemp("families"))


@pytest.fixture(scope="module")
def client(cache):
    from tests.app_server import serve_app_with_hub_cache

    with serve_app_with_hub_cache(cache) as url:
        yield api_client(url)


def library(name: str):
    """The same cached model loaded by the library, for the oracle."""
    from store.catalogue import pretrained
    from transformer.pretrained import load_pretrained

    return load_pretrained(pretrained()[name], device="cpu")


def test_both_families_are_listed_and_the_llama_generates_as_the_library_does(client):
    """Oracle: the library on the same cached files. Both models are in the checkpoint list; the Model tab names the
    Llama decoder-only and the BERT encoder-only; the Generate tab's greedy text from the Llama is the library's."""
    api = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    choices = api["/model"]["parameters"][0]["python_type"]["type"]
    assert LLAMA in choices and BERT in choices
    summary, *_ = client.predict(LLAMA, api_name="/model")
    assert "decoder-only" in summary
    summary, *_ = client.predict(BERT, api_name="/model")
    assert "encoder-only" in summary and "2 encoder layers" in summary
    text, table, picker, notice = client.predict(LLAMA, "Hello world", "greedy", 1.0, 0, 1.0, 4, 6, 0,
                                                 api_name="/generate")
    from transformer.generate import generate

    model, tok, _ = library(LLAMA)
    assert text == tok.decode(s.token_id for s in generate(model, tok.encode("Hello world"), 6))


def test_bert_fills_the_mask_as_the_library_does_and_refuses_to_generate(client):
    """Oracle: transformer.fill_mask.fill_mask on the same cached BERT: the same tokens and probabilities, rank by
    rank; generating with a BERT is refused with a message that says why and what to use instead."""
    from transformer.fill_mask import fill_mask

    table, notice = client.predict(BERT, "The capital of [MASK] is Paris.", 3, api_name="/fill_mask")
    model, tok, _ = library(BERT)
    [guess] = fill_mask(model, tok, "The capital of [MASK] is Paris.", 3)
    assert [row[2] for row in table["data"]] == [t for t, _, _ in guess.candidates]
    assert [row[3] for row in table["data"]] == pytest.approx([round(p, 4) for _, _, p in guess.candidates])
    assert "both directions" in notice
    with pytest.raises(Exception, match="encoder-only"):
        client.predict(BERT, "Hello", "greedy", 1.0, 0, 1.0, 4, 6, 0, api_name="/generate")


def test_fill_the_mask_on_another_model_names_the_cached_bert(client):
    """Honest: with the Llama selected, fill the mask returns no table and a notice naming the cached BERT."""
    table, notice = client.predict(LLAMA, "a [MASK] here", 5, api_name="/fill_mask")
    assert not (table or {}).get("data")
    assert "encoder-only" in notice and BERT in notice


def test_the_attention_tab_shows_berts_bidirectional_heads(client):
    """Behaviour, with the library's record of the same text as the oracle of its shape: the Attention tab opens
    BERT's one kind, encoder self-attention, over [CLS] text [SEP], where the first token sees the last; switching
    heads off works on it (its loss: each token hidden in turn) and changes that loss."""
    notice, heads, kind, layer, head, query = client.predict(BERT, "the capital of france is paris .", "",
                                                             api_name="/attention")
    assert kind["value"] == "encoder self"
    from transformer.interpretability.probe import record_attention

    model, tok, _ = library(BERT)
    record = record_attention(model, tok, "the capital of france is paris .")
    weights = record.patterns["encoder self"].weights
    assert weights.shape[-1] == len(tok.encode("the capital of france is paris .")) + 2  # [CLS] ... [SEP]
    assert float(weights[0, :, 0, -1].max()) > 0 and torch.isfinite(weights).all()
    table = client.predict("encoder self", ["1.0", "1.1"], api_name="/ablate")  # BERT: judged token by token
    assert table["headers"][-1] == "loss" and len(table["data"]) == 2
    assert table["data"][0][-1] != table["data"][1][-1]


def test_the_llama_shows_its_direct_logit_attribution_as_the_library_computes_it(client):
    """Issue 41: a class opening SmolLM2 met a raw AttributeError (RMSNorm has no bias) in the patching section.
    Oracle: transformer.interpretability's direct_logit_attribution on the same cached Llama and pair, computed here:
    the section plots its per-head grid (to 1e-4), and no message of the head says it was refused."""
    from tests.app.test_app_api import decode, plot_json
    from transformer.interpretability.logit_attribution import direct_logit_attribution
    from transformer.interpretability.patching_metric import logit_difference
    from transformer.interpretability.patching_runs import minimal_pair

    clean, corrupted = "Alice went to the shop and Alice", "Alice went to the shop and Bobby"
    model, tok, _ = library(LLAMA)
    if len(tok.encode(clean)) != len(tok.encode(corrupted)):
        pytest.fail("the test's pair must have as many tokens in both runs")
    client.predict(LLAMA, clean, "", api_name="/attention")
    client.predict(corrupted, api_name="/compare_inputs")
    note, residual, heads, dla, into, out, head_note = client.predict("decoder self", 1, 0, "", "", -1,
                                                                      api_name="/patching")
    assert dla is not None, head_note
    pair = minimal_pair(model, tok.encode(clean), tok.encode(corrupted), tokenizer=tok)
    truth = direct_logit_attribution(model, pair, logit_difference(model, pair)).heads["decoder self"]
    drawn = torch.tensor(decode(plot_json(dla)["data"][0]["z"]), dtype=torch.float64)
    torch.testing.assert_close(drawn, truth, atol=1e-4, rtol=0)
