"""Every feature's top held-out contexts are stored beside its SAE (transformer.interpretability.feature_contexts):
the shipped files equal a fresh computation over the recorded held-out batches, and a stored file is data: cut,
stale (computed for another SAE file), out of the vocabulary or out of order, it is refused in words."""
from __future__ import annotations

import json
import shutil

import pytest
import torch

from tests.conftest import CHECKPOINTS
from transformer.checkpoint import CheckpointError
from transformer.interpretability.feature_contexts import (ACTIVATION_TOLERANCE, all_contexts, contexts_file_name,
                                                            differing_features, load_contexts, save_contexts)
from transformer.interpretability.feature_data import FeatureData, feature_batches
from transformer.interpretability.feature_page import feature_page
from transformer.interpretability.features import AttentionLayer, layer_activations, width
from transformer.interpretability.sae import SAEConfig, SparseAutoencoder
from transformer.interpretability.sae_files import entry_of, layers_with_sae, load_sae, save_sae

LAYER = AttentionLayer("decoder self", 1)


@pytest.mark.parametrize("name", ["induction", "shakespeare-char", "translate-en-es"])
def test_every_shipped_sae_has_its_contexts_beside_it(name, shipped):
    """Each SAE config.json lists has a contexts file that loads (checked) with a frequency and contexts for each of
    its features."""
    model, _, info = shipped(name)
    for layer in layers_with_sae(info):
        sae = load_sae(CHECKPOINTS / name, info, layer, width(model))
        stored = load_contexts(CHECKPOINTS / name, layer, sae.config.n_features, model.config.vocab_size)
        assert len(stored.contexts) == len(stored.frequency) == sae.config.n_features
        assert sum(bool(c) for c in stored.contexts) > sae.config.n_features // 2


def test_the_stored_induction_contexts_equal_a_fresh_computation(shipped):
    """Oracle: feature_page.feature_page, the library's own page of a feature, computed here over the recorded
    held-out batches, gives the contexts and frequency stored (tokens and places equal, activations within the
    file's rounding)."""
    model, tokenizer, info = shipped("induction")
    sae = load_sae(CHECKPOINTS / "induction", info, LAYER, width(model))
    stored = load_contexts(CHECKPOINTS / "induction", LAYER, sae.config.n_features, model.config.vocab_size)
    held_out = layer_activations(model, LAYER, feature_batches(FeatureData.from_dict(entry_of(info, LAYER)["data"]),
                                                               model, tokenizer, "held-out"))
    fresh = all_contexts(sae, held_out, model.config.pad_id)
    assert differing_features(stored, fresh) == 0
    busiest = max(range(sae.config.n_features), key=lambda j: stored.frequency[j])
    page = feature_page(model, sae, LAYER, busiest, held_out, n_contexts=len(stored.contexts[busiest]))
    assert abs(page.frequency - stored.frequency[busiest]) < 1e-5
    for drawn, truth in zip(stored.contexts[busiest], page.contexts):
        assert (drawn.row, drawn.position) == (truth.row, truth.position)
        assert abs(drawn.activation - truth.activation) <= ACTIVATION_TOLERANCE


def small(tmp_path):
    """A random SAE on 8 dimensions and its contexts on 40 random positions, saved."""
    sae = SparseAutoencoder(SAEConfig(8, 6, "topk", k=2), torch.Generator().manual_seed(0))
    save_sae(tmp_path, LAYER, sae)
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(3, 20, (4, 10), generator=g)
    where = torch.cartesian_prod(torch.arange(4), torch.arange(10))
    from transformer.interpretability.features import Activations

    acts = Activations(torch.randn(40, 8, generator=g), where, tokens)
    save_contexts(tmp_path, LAYER, all_contexts(sae, acts, 0, "40 random positions"), 20)
    return sae


def rewrite(tmp_path, change):
    path = tmp_path / contexts_file_name(LAYER)
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_a_saved_contexts_file_loads_back(tmp_path):
    small(tmp_path)
    stored = load_contexts(tmp_path, LAYER, 6, 20)
    assert stored.measured_on == "40 random positions" and stored.positions == 40
    assert all(a.activation >= b.activation for cs in stored.contexts for a, b in zip(cs, cs[1:]))


@pytest.mark.parametrize("change, words", [
    (lambda d: d["contexts"][0][0][4].append(99), "token ids of the vocabulary"),
    (lambda d: d["contexts"][0].reverse(), "largest first"),
    (lambda d: d["frequency"].__setitem__(0, 1.5), "frequency is not a number in [0, 1]"),
    (lambda d: d.__setitem__("n_features", 7), "it is for 7 features"),
    (lambda d: d.__setitem__("format", 2), "its format must be 1"),
    (lambda d: d["contexts"][1].__setitem__(0, [1.0, 99, 0, 0, [3]]), "activation > 0, at"),
])
def test_a_tampered_contexts_file_is_refused_in_words(tmp_path, change, words):
    small(tmp_path)
    if change.__code__.co_names.count("reverse"):  # the reversal needs two contexts of different activations
        data = json.loads((tmp_path / contexts_file_name(LAYER)).read_text())
        assert len(data["contexts"][0]) > 1 and data["contexts"][0][0][0] > data["contexts"][0][-1][0]
    rewrite(tmp_path, change)
    with pytest.raises(CheckpointError, match="not a valid contexts file") as e:
        load_contexts(tmp_path, LAYER, 6, 20)
    assert words in str(e.value)


def test_a_cut_or_stale_contexts_file_is_refused(tmp_path):
    """A file cut short is not JSON; a file beside an SAE retrained since (another hash) belongs to another SAE."""
    small(tmp_path)
    path = tmp_path / contexts_file_name(LAYER)
    text = path.read_text()
    path.write_text(text[:-40])
    with pytest.raises(CheckpointError, match="is not valid JSON"):
        load_contexts(tmp_path, LAYER, 6, 20)
    path.write_text(text)
    save_sae(tmp_path, LAYER, SparseAutoencoder(SAEConfig(8, 6, "topk", k=2), torch.Generator().manual_seed(5)))
    with pytest.raises(CheckpointError, match="computed for another SAE file"):
        load_contexts(tmp_path, LAYER, 6, 20)


def test_check_counts_features_whose_stored_contexts_differ(tmp_path, capsys):
    """`--check` recomputes the stored contexts: the shipped ones pass; one feature's context moved fails."""
    from transformer.interpretability.feature_cli import main

    copy = tmp_path / "induction"
    shutil.copytree(CHECKPOINTS / "induction", copy)
    rewrite_at = copy / contexts_file_name(LAYER)
    data = json.loads(rewrite_at.read_text())
    first = next(j for j, cs in enumerate(data["contexts"]) if cs)
    data["contexts"][first][0][3] += 1  # its position
    rewrite_at.write_text(json.dumps(data))
    assert main([str(copy), "--check"]) == 1
    out = capsys.readouterr().out
    assert "decoder self layer 1 stored contexts off" in out and "now     1.0000  DIFFERS" in out
    assert "decoder self layer 0 stored contexts off  card     0.0000  now     0.0000  ok" in out
