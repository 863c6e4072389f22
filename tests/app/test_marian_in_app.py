"""A Marian translator (opus-mt's layout) in the local Hugging Face cache joins the checkpoint list and works in the
app: the Model tab, the Generate tab's beam translation and the Attention tab's cross-attention over the reference
Spanish cut by its own target.spm (a small random Marian saved with `transformers` in the Hub-cache layout, the
SentencePiece models trained in the test; no network)."""
from __future__ import annotations

import pytest

from tests.app_server import api_client
from tests.conftest import add_to_hub_cache
from tests.tiny_marian import build_tiny_marian
from visualize.text import markdown_text

MARIAN = "tiny-marian (pretrained)"
FILES = ("config.json", "generation_config.json", "model.safetensors", "source.spm", "target.spm", "vocab.json",
         "tokenizer_config.json")
ENGLISH, SPANISH = "My family visited us last week.", "Mi familia nos visitó la semana pasada."


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """A Hugging Face hub cache holding a tiny Marian, as `python -m transformer.pretrained` lays it out."""
    root = tmp_path_factory.mktemp("marian")
    directory = build_tiny_marian(root / "tiny-marian")
    cache = root / "hub"
    add_to_hub_cache(cache, "someone/tiny-marian", {n: directory / n for n in FILES})
    return cache


@pytest.fixture(scope="module")
def client(cache):
    from tests.app_server import serve_app_with_hub_cache

    with serve_app_with_hub_cache(cache) as url:
        yield api_client(url)


def library():
    """The same cached model loaded by the library, for the oracle."""
    from store.catalogue import pretrained
    from transformer.pretrained import load_pretrained

    return load_pretrained(pretrained()[MARIAN], device="cpu")


def test_marian_is_listed_and_translates_as_the_library_does(client):
    """Oracle: the library on the same cached files. The Model tab names an encoder-decoder; the Generate tab's
    beam-4 translation is transformer.generate.generate_text's."""
    from transformer.generate import generate_text

    api = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    assert MARIAN in api["/model"]["parameters"][0]["python_type"]["type"]
    summary, *_ = client.predict(MARIAN, api_name="/model")
    assert "encoder-decoder" in summary
    text, table, picker, notice = client.predict(MARIAN, ENGLISH, "beam", 1.0, 0, 1.0, 4, 12, 0,
                                                 api_name="/generate")
    model, tok, _ = library()
    assert text == generate_text(model, tok, ENGLISH, 12, strategy="beam", num_beams=4)


def test_attention_tab_reads_the_spanish_target_through_target_spm(client):
    """Oracle: the library's record of the same pair (the target cut by target.spm): the Attention tab opens on
    cross-attention with one query per Spanish token plus </s> (its query slider's range), as the library's record
    has; cut by source.spm the Spanish would be another number of tokens."""
    from transformer.interpretability.probe import record_attention

    notice, heads, kind, layer, head, query = client.predict(MARIAN, ENGLISH, SPANISH, api_name="/attention")
    model, tok, _ = library()
    record = record_attention(model, tok, ENGLISH, SPANISH)
    cross = record.patterns["cross"].weights
    assert cross.shape[-2:] == (len(tok.encode_target(SPANISH)) + 1, len(tok.encode(ENGLISH)) + 1)
    assert tok.encode_target(SPANISH) != tok.encode(SPANISH)  # the two SentencePiece models cut it differently
    assert kind["value"] == "cross" and query["maximum"] + 1 == cross.shape[-2]


def test_the_translation_demo_shows_what_the_generate_tab_writes_for_both_models(client):
    """Oracle: the Generate tab through the API, with the settings it opens with for a translation model (beam, 4
    beams, 120 new tokens: tabs.generate.OPENING): the translations shown beside the demo's heatmap are the ones it
    writes for the verse, ours and the cached Marian's; Marian's map is the library's record of the same verse
    read with the same reference Spanish (cut by target.spm)."""
    from limits import ATTENTION_CAP
    from tabs.attention.beside import section_texts, translations
    from tabs.demos import DEMOS
    from tabs.generate import OPENING

    demo = next(d for d in DEMOS if d.label == "Who reads whom?")
    settings = [OPENING[k] for k in ("temperature", "top_k", "top_p", "num_beams", "max_new_tokens", "seed")]
    ours, *_ = client.predict(demo.ckpt, demo.text, "beam", *settings, api_name="/generate")
    marian, *_ = client.predict(MARIAN, demo.text, "beam", *settings, api_name="/generate")
    shown = translations(demo.ckpt, demo.text, demo.target, "")
    assert (shown.ours, shown.marian, shown.marian_text) == (ours, MARIAN, marian)
    _, ours_line, marian_line = section_texts(demo.ckpt, shown, demo.target)
    assert f"“{markdown_text(ours)}”" in ours_line and f"“{markdown_text(marian)}”" in marian_line
    from transformer.interpretability.probe import record_attention

    model, tok, _ = library()
    expected = record_attention(model, tok, demo.text, demo.target, max_tokens=ATTENTION_CAP)
    assert shown.marian_record.target_ids == tok.encode_target(demo.target)
    assert shown.marian_record.patterns["cross"].weights.equal(expected.patterns["cross"].weights)
