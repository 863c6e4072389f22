"""A Llama and a BERT in the local Hugging Face cache, in a real browser: both are in the checkpoint list, the Llama
generates what the library generates, the BERT opens its bidirectional heads in the Attention tab and fills the mask
in the Generate tab, and fill the mask on another model names the BERT (small random models saved with
`transformers` in the Hub-cache layout; no network)."""
from __future__ import annotations

import pytest

from tests.browser import tour
from tests.hf_models import families_hub_cache

LLAMA, BERT = "tiny-llama (pretrained)", "tiny-bert (pretrained)"


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    """The app serving a hub cache with the two tiny models (overrides conftest's app_url for this module)."""
    from tests.app_server import serve_app_with_hub_cache

    with serve_app_with_hub_cache(families_hub_cache(tmp_path_factory.mktemp("families"))) as url:
        yield url


def library(name: str):
    from store.catalogue import pretrained
    from transformer.pretrained import load_pretrained

    return load_pretrained(pretrained()[name], device="cpu")


def fill_the_mask(page, text: str, expect: str) -> str:
    """Type `text` in the fill-the-mask box, press its button, wait for a notice containing `expect` (each test
    expects a notice the previous call did not give); returns the notice."""
    page.locator("#mask-text textarea").fill(text)
    page.locator("#mask-go").click()
    notice = page.locator("#mask-notice", has_text=expect)
    notice.wait_for()
    return notice.text_content()


def test_both_models_are_listed_and_the_llama_generates_as_the_library_does(lab):
    """Oracle: the library's greedy generation on the same cached files, with the tab's default 120 new tokens."""
    from transformer.generate import generate

    page = lab.page
    assert {LLAMA, BERT} <= set(tour.checkpoint_choices(page))
    tour.select_checkpoint(page, LLAMA)
    shown = tour.tour_generate(page, "Hello world")
    model, tok, _ = library(LLAMA)
    assert shown["output"] == tok.decode(s.token_id for s in generate(model, tok.encode("Hello world"), 120))
    notice = fill_the_mask(page, "The capital of [MASK] is Paris.", "encoder-only")
    assert BERT in notice
    assert not lab.guard.blocked


def test_bert_shows_its_encoder_heads_and_fills_the_mask_as_the_library_does(lab):
    """Oracle: transformer.fill_mask on the same cached BERT: the table's tokens, in order, are its top 5; the
    Attention tab draws BERT's encoder self-attention."""
    from transformer.fill_mask import fill_mask

    page = lab.page
    tour.select_checkpoint(page, BERT)
    tour.show_tab(page, "attention")
    page.wait_for_function("() => /^encoder self attention, layer \\d+, head \\d+$/.test("
                           "(document.querySelector('#att-one .gtitle') || {}).textContent || '')")
    tour.show_tab(page, "generate")
    fill_the_mask(page, "The capital of [MASK] is Paris.", "both directions")
    tokens = [row[2] for row in tour.table_rows(page, "mask-table", at_least=5)]  # mask, rank, token, probability
    model, tok, _ = library(BERT)
    [guess] = fill_mask(model, tok, "The capital of [MASK] is Paris.", 5)
    assert tokens == [t for t, _, _ in guess.candidates]
    assert not lab.guard.blocked
