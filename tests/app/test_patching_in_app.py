"""The Attention tab's patching section through the app's HTTP API: its figures are the library's numbers computed
afresh in the test (oracle: transformer.interpretability on the same shipped model and inputs), and each refusal
comes back as a sentence in the section's message, not as an error."""
from __future__ import annotations

import math

import torch

from tests.app.test_app_api import decode, plot_json
from tests.conftest import CHECKPOINTS
from transformer.checkpoint import load_checkpoint
from transformer.interpretability.activation_patching import head_patching, residual_patching
from transformer.interpretability.patching_demos import induction_texts
from transformer.interpretability.patching_metric import logit_difference
from transformer.interpretability.patching_runs import minimal_pair
from transformer.interpretability.path_patching import path_patching_into
from visualize.text import markdown_text

CLEAN, CORRUPTED = induction_texts()  # the induction demo's pair


def values(plot) -> list[list[float]]:
    """A figure's plotted cells, NaN where a cell is blank."""
    return [[math.nan if v is None else v for v in row] for row in decode(plot_json(plot)["data"][0]["z"])]


def close(drawn, truth, tol=1e-4) -> bool:
    truth = torch.as_tensor(truth).tolist()
    return len(drawn) == len(truth) and all(
        len(a) == len(b) and all((math.isnan(x) and math.isnan(y)) or abs(x - y) <= tol for x, y in zip(a, b))
        for a, b in zip(drawn, truth))


def test_the_section_draws_the_librarys_grids(client):
    """Oracle: residual_patching, head_patching and path_patching_into on the induction model, computed here, equal
    what the section plots (and the hover of a cell is the Grid's own description of it)."""
    client.predict("induction", CLEAN, "", api_name="/attention")
    client.predict(CORRUPTED, api_name="/compare_inputs")
    note, residual, heads, dla, into, out, head_note = client.predict("decoder self", 1, 0, "", "", -1,
                                                                      api_name="/patching")
    model, tok, _ = load_checkpoint(CHECKPOINTS / "induction")
    pair = minimal_pair(model, tok.encode(CLEAN), tok.encode(CORRUPTED), tokenizer=tok)
    metric = logit_difference(model, pair, position=len(CLEAN) - 1)  # the section's -1: the last position
    truth = head_patching(model, pair, metric)
    assert close(values(heads), truth.values)
    assert close(values(residual), residual_patching(model, pair, metric).values)
    assert plot_json(heads)["data"][0]["customdata"][1][0] == truth.cell(1, 0)
    paths = path_patching_into(model, pair, metric, ("decoder self", 1, 0))["decoder self"]
    assert close(values(into), [paths.values[c, 0].tolist() for c in range(3)])  # layer 0's query, key, value
    assert markdown_text(metric.describe(tok)) in note and "1.0" in head_note and dla is not None


def test_a_pair_of_different_lengths_is_refused_in_words(client):
    """Patching needs the same number of tokens in both runs: the message says so, and nothing is drawn."""
    client.predict("induction", CLEAN, "", api_name="/attention")
    client.predict(CORRUPTED[:-3], api_name="/compare_inputs")
    note, residual, heads, *_ = client.predict("decoder self", 1, 0, "", "", -1, api_name="/patching")
    assert "same number of tokens" in note and residual is None and heads is None


def test_direct_logit_attribution_of_a_post_norm_model_is_refused_in_words(client):
    """The reverse model is post-norm: the grids are drawn, and the head's words say why there is no direct logit
    attribution instead of an error."""
    client.predict("reverse", "attention", "", api_name="/attention")
    client.predict("attentiom", api_name="/compare_inputs")
    note, residual, heads, dla, *_, head_note = client.predict("cross", 1, 0, "", "", -1, api_name="/patching")
    assert heads is not None and dla is None
    assert markdown_text("post-norm") in head_note
