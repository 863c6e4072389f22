"""A Llama, a BERT and a Marian in the local Hugging Face cache, in a real browser: all are in the checkpoint list,
the Llama generates what the library generates, the BERT opens its bidirectional heads in the Attention tab and fills
the mask in the Generate tab, fill the mask on another model names the BERT, and the translation demo shows the
Marian beside our model (small random models saved with `transformers` in the Hub-cache layout; no network)."""
from __future__ import annotations

import pytest

from tests.browser import tour
from tests.hf_models import families_hub_cache

LLAMA, BERT, MARIAN = "tiny-llama (pretrained)", "tiny-bert (pretrained)", "tiny-marian (pretrained)"


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
    assert {LLAMA, BERT, MARIAN} <= set(tour.checkpoint_choices(page))
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


def test_the_translation_demo_shows_a_cached_marian_beside_our_model(lab):
    """Oracle: the Generate tab's function (tabs.generate.translate_as_generate: beam search, 4 beams, as the tab
    opens for a translation model) on the same verse, and the Attention tab's own choice of head (focus_head: the
    lowest AER against the verse's gold links) on each model's record. After one demo click, beside our heatmap:
    both translations, and both cross-attention maps in words on those heads."""
    from tabs.attention.page import focus_head
    from tabs.attention.record import attention_record
    from tabs.attention.translation_view import gold_scores
    from tabs.demos import DEMOS
    from tabs.generate import translate_as_generate

    demo = next(d for d in DEMOS if d.label == "Who reads whom?")
    page = lab.page
    tour.click_demo(page, demo.label)
    page.locator("#att-beside-marian-text", has_text="writes").wait_for(timeout=60_000)
    for name, prefix, model in (("ours", "translate-en-es", demo.ckpt), ("marian", "tiny-marian", MARIAN)):
        words = translate_as_generate(model, "", demo.text)
        assert page.locator(f"#att-beside-{name}-text").text_content().strip().startswith(prefix)
        assert f"“{words}”" in page.locator(f"#att-beside-{name}-text").text_content()
        record = attention_record(model, demo.text, demo.target, "")
        _, layer, head = focus_head(record, ("cross", demo.score))
        title = f"cross attention in words, layer {layer}, head {head}"  # + its AER where the words are the verse's
        title += " · AER" if gold_scores(record, "cross") else ""  # (the tiny Marian's are not all known)
        page.wait_for_function("([id, t]) => ((document.querySelector(id + ' .gtitle') || {}).textContent || '')"
                               ".startsWith(t)", arg=[f"#att-beside-{name}", title])
    assert demo.target in page.locator("#att-beside-reference").text_content()
    assert not lab.guard.blocked


def test_the_llama_draws_its_direct_logit_attribution_in_the_patching_section(lab):
    """Issue 41: on an RMSNorm model (Llama, SmolLM2) the patching section raised a bare AttributeError. Oracle:
    direct_logit_attribution on the same cached Llama and pair, computed here: the page's DLA heatmap plots its
    per-head grid (to 1e-4), and the head's words are no refusal."""
    import torch

    from transformer.interpretability.logit_attribution import direct_logit_attribution
    from transformer.interpretability.patching_metric import logit_difference
    from transformer.interpretability.patching_runs import minimal_pair

    clean, corrupted = "Alice went to the shop and Alice", "Alice went to the shop and Bobby"
    page = lab.page
    tour.select_checkpoint(page, LLAMA)
    tour.show_tab(page, "attention")
    page.locator("#att-text input, #att-text textarea").first.fill(clean)
    page.locator("#att-show").click()
    page.locator("#att-two-section > button").first.click()
    page.locator("#two-text textarea").fill(corrupted)
    page.locator("#two-compare").click()
    page.locator("#att-patch-section > button").first.click()
    page.locator("#patch-run").click()
    page.wait_for_function("() => { const gd = document.querySelector('#patch-dla .js-plotly-plot');"
                           " return gd && gd.data && gd.data.length && gd.data[0].z; }", timeout=300_000)
    drawn = page.evaluate("() => document.querySelector('#patch-dla .js-plotly-plot').data[0].z")
    model, tok, _ = library(LLAMA)
    pair = minimal_pair(model, tok.encode(clean), tok.encode(corrupted), tokenizer=tok)
    truth = direct_logit_attribution(model, pair, logit_difference(model, pair)).heads["decoder self"]
    torch.testing.assert_close(torch.tensor(drawn, dtype=torch.float64), truth, atol=1e-4, rtol=0)
    assert "pre-norm" not in page.locator("#patch-head-note").text_content()
    assert not lab.guard.blocked
