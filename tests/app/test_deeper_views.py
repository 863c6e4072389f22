"""The Attention tab's deeper views through the app's HTTP API: value-weighted norms and words on the heatmaps, the
head caption, the logit lens and two inputs side by side (each on a shipped checkpoint)."""
from __future__ import annotations

import html
import math

import pytest
from gradio_client.exceptions import AppError

from tests.app.test_app_api import decode, plot_json
from tests.chart_reader import read_chart


def row_sum(row) -> float:
    """The sum of a heatmap row's drawn cells (masked cells are gaps: None or NaN)."""
    return sum(v for v in row if v is not None and not math.isnan(v))


def test_value_weighted_norms_switch_redraws_the_heatmap(client):
    """The switch draws each key's share of the row's value-weighted norm: rows still sum to 1, the title says what
    the cells are, and the cells differ from the weights."""
    client.predict("reverse", "attention", "", api_name="/attention")
    weights, *_ = client.predict("encoder self", 0, 0, "entropy", "weights", False, api_name="/draw_attention")
    norms, *_ = client.predict("encoder self", 0, 0, "entropy", "value-weighted norms", False,
                               api_name="/draw_attention")
    fig = plot_json(norms)
    assert "value-weighted norms" in fig["layout"]["title"]["text"]
    z = decode(fig["data"][0]["z"])
    assert all(math.isclose(row_sum(row), 1.0, abs_tol=1e-4) for row in z)
    assert z != decode(plot_json(weights)["data"][0]["z"])


def test_words_switch_merges_tokens_into_words(client):
    """Words on a character model: one row per word (a space starts a word), rows summing to 1."""
    client.predict("shakespeare-char", "To be or not", "", api_name="/attention")
    one, *_ = client.predict("decoder self", 0, 0, "entropy", "weights", True, api_name="/draw_attention")
    fig = plot_json(one)
    z = decode(fig["data"][0]["z"])
    assert len(z) == 4 and "in words" in fig["layout"]["title"]["text"]
    assert all(math.isclose(row_sum(row), 1.0, abs_tol=1e-4) for row in z)


def test_head_caption_names_the_previous_token_head(client):
    """The induction model's L0H1 explains itself as a previous-token head."""
    client.predict("induction", "Xq7LbR2mKdZ9wPfXq7LbR2mKdZ9wPf", "", api_name="/attention")
    caption = client.predict("decoder self", 0, 1, "weights", False, api_name="/head_caption")
    assert "Layer 0, head 1: previous-token head" in caption


def test_logit_lens_last_row_is_the_models_output(client):
    """Oracle: the model's own forward pass. The lens grid has a row for the embedding and one per decoder layer; its
    last row, at every decoder position, is the model's top token there and its probability, computed here from the
    reverse model's logits on the same source and decoder input (<s> + its greedy output, the target the app used);
    for this post-norm model the note says what the lens means there."""
    import torch

    from tests.conftest import CHECKPOINTS
    from transformer import load_checkpoint
    from transformer.encoding import decoder_ids
    from transformer.interpretability.probe import record_attention

    client.predict("reverse", "abc", "", api_name="/attention")
    grid, curve, note = client.predict(1, api_name="/logit_lens")
    z = decode(plot_json(grid)["data"][0]["z"])
    model, tok, _ = load_checkpoint(CHECKPOINTS / "reverse", device="cpu")
    record = record_attention(model, tok, "abc")  # the source and the greedy target the app read
    dec_in, _ = decoder_ids(record.target_ids, model.config)
    with torch.no_grad():
        probs = model(torch.tensor([record.input_ids]), torch.tensor([dec_in])).logits[0].softmax(-1)  # (T, V)
    assert len(z) == 1 + model.config.n_decoder_layers and "post-norm" in note
    top = probs.max(-1)
    assert z[-1] == pytest.approx(top.values.tolist(), abs=1e-4)
    drawn = [html.unescape(t) for t in plot_json(grid)["data"][0]["text"][-1]]
    assert drawn == [tok.id_to_token(int(i)) for i in top.indices]  # its top token, written in the cell
    assert "position 1" in plot_json(curve)["layout"]["title"]["text"]


def test_identical_inputs_change_no_head(client):
    """Two inputs: the same text twice gives 0 bits for every head; a different one is refused when empty."""
    client.predict("shakespeare-char", "To be or not", "", api_name="/attention")
    client.predict("To be or not", api_name="/compare_inputs")
    a, b, grid, note = client.predict("decoder self", 0, 0, api_name="/draw_two_inputs")
    assert all(v == 0 for row in decode(plot_json(grid)["data"][0]["z"]) for v in row)
    assert "0.000 bits" in note
    with pytest.raises(AppError, match="second input"):
        client.predict("  ", api_name="/compare_inputs")


def test_watch_an_induction_head_form_streams_and_stops_into_a_model(client):
    """The Train tab's live run streams the loss and the two scores on one time axis; Stop ends it and keeps the
    model in this browser's checkpoint list (the run to the end is tests/integration/test_induction_phase_change)."""
    from tests.app_server import streaming

    job = client.submit(api_name="/watch_induction")
    streaming(job, 3)
    client.predict(api_name="/stop")
    outputs = list(job)
    curves, status, attention, ckpt = outputs[-1]
    names = set(read_chart(curves)["curves"])
    assert {"train loss", "best previous token score", "best induction score"} <= names
    assert "Training stopped" in status and "my induction model #1" in [c[0] for c in ckpt["choices"]]
