"""The translation checkpoint in the app, through its HTTP API: beam search in the Generate tab, and the Attention
tab's gold view of a held-out verse (the head's AER in the title equals the library's, the circles are the verse's
gold links, the overview colours heads by AER and the demo's head is the best one)."""
from __future__ import annotations

import re

import pytest

from tests.app.test_app_api import decode, generate, plot_json
from transformer import load_checkpoint
from transformer.generate import generate_text
from transformer.interpretability.probe import record_attention
from transformer.translation.corpus import find_verse
from transformer.translation.gold import aer_per_head, cross_words, gold_links, head_alignment

CKPT = "translate-en-es"
VERSE = find_verse("The disciples were filled with joy and with the Holy Spirit.")


@pytest.fixture(scope="module")
def library():
    from store.catalogue import CHECKPOINTS

    model, tokenizer, _ = load_checkpoint(CHECKPOINTS / CKPT, device="cpu")
    cross = cross_words(record_attention(model, tokenizer, VERSE.en, VERSE.es).patterns["cross"])
    return model, tokenizer, cross


def test_generate_translates_with_beam_search_as_the_library_does(client, library):
    model, tokenizer, _ = library
    text, *_ = generate(client, CKPT, VERSE.en, strategy="beam", num_beams=4, max_new_tokens=120)
    assert text == generate_text(model, tokenizer, VERSE.en, 120, strategy="beam", num_beams=4)
    assert "Espíritu Santo" in text


def test_gold_view_of_a_held_out_verse(client, library):
    _, _, cross = library
    client.predict(CKPT, VERSE.en, VERSE.es, api_name="/attention")
    gold = gold_links(VERSE, len(cross.en_words), len(cross.es_words))
    aer = aer_per_head(cross, gold)
    layer, head = divmod(int(aer.argmin()), aer.size(1))
    one, _, overview, _ = client.predict("cross", layer, head, "alignment error (gold)", "weights", True,
                                         api_name="/draw_attention")
    fig = plot_json(one)
    title = fig["layout"]["title"]["text"]
    _, expected = head_alignment(cross.weights[layer, head], gold)
    assert re.search(rf"AER {expected.aer:.2f} vs gold links", title), title
    circles = next(t for t in fig["data"] if t.get("mode") == "markers" and "gold link" in t.get("name", ""))
    assert sorted(zip(decode(circles["x"]), decode(circles["y"]))) == sorted(gold)
    z = decode(fig["data"][0]["z"])
    assert len(z) == len(VERSE.es.split()) + 1 and len(z[0]) == len(VERSE.en.split()) + 1  # + </s> on both axes
    colours = decode(plot_json(overview)["data"][0]["z"])
    assert [[round(v, 4) for v in row] for row in colours] == [[round(v, 4) for v in row] for row in aer.tolist()]


def test_a_verse_without_its_reference_gets_no_gold(client):
    client.predict(CKPT, VERSE.en, "", api_name="/attention")
    one, *_ = client.predict("cross", 0, 0, "alignment error (gold)", "weights", True, api_name="/draw_attention")
    fig = plot_json(one)
    assert "AER" not in fig["layout"]["title"]["text"]
    assert not any("gold link" in t.get("name", "") for t in fig["data"])


def test_switching_heads_off_on_a_held_out_verse(client, library):
    """Issue 30, item 7: the ablation view and head importance answer on the translation model (they raised 'an
    encoder-decoder model needs both a source and a target' before). Oracle: the table's loss with every head on
    and with cross head 3.3 off, and the importance grid, are the library's on the verse read with its reference."""
    from transformer.interpretability.ablation import default_eval_set, evaluate, head_importance, heads_off

    model, tokenizer, _ = library
    record = record_attention(model, tokenizer, VERSE.en, VERSE.es)
    eval_set = default_eval_set(model, tokenizer, CKPT, record.input_ids, record.target_ids)
    client.predict(CKPT, VERSE.en, VERSE.es, api_name="/attention")
    table = client.predict("cross", ["3.3"], api_name="/ablate")
    assert table["headers"] == ["heads", "output", "loss"]
    (_, on_text, on_loss), (_, _, off_loss) = table["data"]
    assert on_loss == round(evaluate(model, tokenizer, eval_set), 3)
    assert off_loss == round(evaluate(model, tokenizer, eval_set, heads_off(model, [("cross", 3, 3)])), 3)
    assert on_text == generate_text(model, tokenizer, VERSE.en, model.config.max_len - 1)
    grid = decode(plot_json(client.predict("cross", api_name="/head_importance"))["data"][0]["z"])
    expected = head_importance(model, tokenizer, eval_set)["cross"]
    assert [[round(v, 4) for v in row] for row in grid] == [[round(v, 4) for v in row] for row in expected.tolist()]
    client.predict(CKPT, VERSE.en, "", api_name="/attention")  # no reference: judged on its own translation
    assert [row[0] for row in client.predict("cross", ["0.0"], api_name="/ablate")["data"]] == ["all on", "cross 0.0 off"]
