"""The Attention tab's "What the heads write" through the app's HTTP API (issue 42, item 4): its table and figures
are the library's numbers computed afresh here by another path (oracle: feature_page.features_at, which reads the
layer through features.layer_activations, head_share, logit_effect and the stored contexts), and each refusal is a
sentence in the section's note."""
from __future__ import annotations

import torch

from tests.app.test_app_api import decode, plot_json
from tests.conftest import CHECKPOINTS
from transformer.checkpoint import load_checkpoint
from transformer.encoding import decoder_ids
from transformer.heads import HeadId
from transformer.interpretability.feature_contexts import load_contexts
from transformer.interpretability.feature_page import context_text, features_at, head_share, logit_effect
from transformer.interpretability.features import AttentionLayer, width
from transformer.interpretability.patching_runs import token_name
from transformer.interpretability.sae_files import load_sae
from transformer.interpretability.probe import record_attention

VERSE = "And Jesus said unto them, Go into the city."
LAYER = AttentionLayer("cross", 3)


def truth(position: int):
    """The features active at `position` of the verse's record and their pages, computed by the library here."""
    path = CHECKPOINTS / "translate-en-es"
    model, tok, info = load_checkpoint(path, device="cpu")
    sae = load_sae(path, info, LAYER, width(model))
    record = record_attention(model, tok, VERSE)
    inputs = (torch.tensor([record.input_ids]), torch.tensor([decoder_ids(record.target_ids, model.config)[0]]))
    active = features_at(model, sae, LAYER, inputs, position)
    stored = load_contexts(path, LAYER, sae.config.n_features, model.config.vocab_size)
    return model, tok, sae, inputs, active, stored


def test_the_section_shows_the_librarys_features_heads_contexts_and_logits(client):
    client.predict("translate-en-es", VERSE, "", api_name="/attention")
    note, table, heads, opened, strip = client.predict("cross", 3, 4, "", api_name="/what_heads_write")
    model, tok, sae, inputs, active, stored = truth(4)
    assert note == "" and active
    rows = table["data"]
    assert [r[0] for r in rows] == [j for j, _ in active]
    assert [r[1] for r in rows] == [round(v, 3) for _, v in active]
    share = head_share(sae, model.config.n_heads)
    labels = [HeadId("cross", 3, h).label for h in range(model.config.n_heads)]
    drawn = plot_json(heads)["data"]
    for h, trace in enumerate(drawn):
        assert trace["name"] == f"head {labels[h]}"
        assert all(abs(a - float(share[j, h])) < 1e-6 for a, (j, _) in zip(decode(trace["x"]), active))
    for row, (j, _) in zip(rows, active):
        assert row[4] == " · ".join(context_text(tok, c) for c in stored.contexts[j][:3])
        assert row[3] == f"{stored.frequency[j]:.2%}"
        effect = logit_effect(model, sae, LAYER, j)
        assert row[5] == ", ".join(token_name(tok, t) for t, _ in effect.top)
        assert row[6] == ", ".join(token_name(tok, t) for t, _ in effect.bottom)
    assert opened["value"] == str(active[0][0]) and [c[1] for c in opened["choices"]] == [str(j) for j, _ in active]
    # the opened feature's strip: its activation at every decoder position, by the library's path
    with torch.no_grad():
        for_all = [dict(features_at(model, sae, LAYER, inputs, t, n=sae.config.n_features)).get(active[0][0], 0.0)
                   for t in range(inputs[1].size(1))]
    assert all(abs(a - b) < 1e-4 for a, b in zip(decode(plot_json(strip)["data"][0]["y"]), for_all))


def test_opening_another_feature_draws_where_it_fires(client):
    client.predict("translate-en-es", VERSE, "", api_name="/attention")
    _, table, *_ = client.predict("cross", 3, 4, "", api_name="/what_heads_write")
    second = table["data"][1][0]
    strip = client.predict("cross", 3, 4, str(second), api_name="/feature_strip")
    model, _, sae, inputs, _, _ = truth(4)
    values = decode(plot_json(strip)["data"][0]["y"])
    fresh = [dict(features_at(model, sae, LAYER, inputs, t, n=sae.config.n_features)).get(second, 0.0)
             for t in range(inputs[1].size(1))]
    assert all(abs(a - b) < 1e-4 for a, b in zip(values, fresh)) and max(values) > 0
    assert f"feature {second}" in plot_json(strip)["layout"]["title"]["text"]


def test_a_layer_or_model_without_an_sae_is_said_in_words(client):
    client.predict("translate-en-es", VERSE, "", api_name="/attention")
    note, table, heads, _, strip = client.predict("cross", 0, 2, "", api_name="/what_heads_write")
    assert "translate-en-es ships no SAE for cross layer 0" in note and "cross layer 3" in note
    assert heads is None and strip is None and not table["data"]
    client.predict("reverse", "abcdef", "", api_name="/attention")
    note, *_ = client.predict("cross", 0, 2, "", api_name="/what_heads_write")
    assert "reverse ships no SAE" in note and "translate-en-es (decoder self 2, 3; cross 2, 3)" in note


def test_the_strip_of_a_layer_without_an_sae_says_so(client):
    client.predict("translate-en-es", VERSE, "", api_name="/attention")
    strip = client.predict("decoder self", 0, 2, "5", api_name="/feature_strip")
    assert "ships no SAE for decoder self layer 0" in plot_json(strip)["layout"]["annotations"][0]["text"]


def test_the_opened_feature_stays_open_while_it_is_active(client):
    """Opening the second feature, then asking again at the same position, keeps it open (its strip drawn); a
    feature not active there falls back to the most active one."""
    client.predict("translate-en-es", VERSE, "", api_name="/attention")
    _, table, *_ = client.predict("cross", 3, 4, "", api_name="/what_heads_write")
    second, first = str(table["data"][1][0]), table["data"][0][0]
    *_, opened, strip = client.predict("cross", 3, 4, second, api_name="/what_heads_write")
    assert opened["value"] == second and f"feature {second} " in plot_json(strip)["layout"]["title"]["text"]
    *_, opened, _ = client.predict("cross", 3, 4, "100000", api_name="/what_heads_write")
    assert opened["value"] == str(first)


def test_a_model_without_saes_and_a_cut_input_are_said_in_words(client):
    """A pretrained or browser-trained model names the checkpoints that ship SAEs; an input longer than the
    heatmaps' cap is read as they read it (cut), and the note says so."""
    from tabs.attention.features import no_sae

    said = no_sae("gpt2 (pretrained)", "decoder self", 0)
    assert "No SAE for gpt2 (pretrained)" in said and "induction (decoder self 0, 1)" in said
    client.predict("shakespeare-char", "To be, or not to be, that is the question. " * 4, "", api_name="/attention")
    note, table, *_ = client.predict("decoder self", 5, 10, "", api_name="/what_heads_write")
    assert "The input was cut as the heatmaps say" in note and table["data"]


def test_clicks_on_new_inputs_convert_the_unembedding_once(client, monkeypatch):
    """Invariant: store.saes makes a shipped model's float64 unembedding once (bounded by UNEMBEDDINGS_KEPT) and
    every click's logit effects read it: clicks on three inputs at two layers make it once, and it equals the
    model's unembedding in float64."""
    import store.saes as saes
    from limits import UNEMBEDDINGS_KEPT
    from store.catalogue import shipped_model

    saes.shipped_unembedding.cache_clear()
    made, make = [], saes.unembedding_or_none
    monkeypatch.setattr(saes, "unembedding_or_none", lambda model: made.append(1) or make(model))
    for verse in (VERSE, "In the beginning God created the heaven and the earth.", "Jesus wept."):
        client.predict("translate-en-es", verse, "", api_name="/attention")
        for layer in (2, 3):
            _, table, *_ = client.predict("cross", layer, 1, "", api_name="/what_heads_write")
            assert table["data"]
    assert made == [1] and saes.shipped_unembedding.cache_info().maxsize == UNEMBEDDINGS_KEPT
    model, _, _ = shipped_model("translate-en-es")
    assert torch.equal(saes.shipped_unembedding("translate-en-es").W_U, model.lm_head.weight.detach().double())
