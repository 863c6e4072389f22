"""The Model tab's cache table: MLA's bytes per token beside MHA / GQA / MQA, always as
transformer.generate.cache_bytes_per_token computes them for the checkpoint's variants, with "this model" on the
checkpoint's own attention. Through the API (gradio_client) for the shipped checkpoints, and directly for configs
no shipped checkpoint has (an MLA model, RoPE)."""
import json
from pathlib import Path

import pytest

from tabs.model import cache_table
from transformer import TransformerConfig
from transformer.generate import cache_bytes_per_token

CHECKPOINTS = Path(__file__).resolve().parents[2] / "checkpoints"


def mla_variant(cfg: TransformerConfig) -> TransformerConfig:
    return TransformerConfig.from_dict({**cfg.to_dict(), "attention": "mla", "n_kv_heads": None,
                                        "kv_latent_dim": None})


@pytest.mark.parametrize("name", ["reverse", "shakespeare-char"])
def test_model_endpoint_lists_mla_with_the_librarys_bytes(client, name):
    """The last row is MLA, labelled with its latent (4 d_k by default), its bytes equal cache_bytes_per_token of the
    MLA variant, and by hand n_decoder_layers x 4 d_k x 4 bytes (no rotary key: these models are not RoPE)."""
    cfg = TransformerConfig.from_dict(json.loads((CHECKPOINTS / name / "config.json").read_text())["model"])
    summary, params, plot, kv = client.predict(name, api_name="/model")
    assert kv["headers"][:2] == ["attention", "cache bytes / token"]
    rows = {row[0]: row for row in kv["data"]}
    mla = rows[f"MLA (latent {4 * cfg.d_k})"]
    assert mla[1] == cache_bytes_per_token(mla_variant(cfg)) == cfg.n_decoder_layers * 4 * cfg.d_k * 4
    assert mla[2] == pytest.approx(mla[1] * cfg.max_len / 1024, abs=0.05)
    assert rows[f"MHA ({cfg.n_heads} kv heads)"][1] == 2 * cfg.n_decoder_layers * cfg.n_heads * cfg.d_k * 4
    assert [row[0] for row in kv["data"] if row[-1] == "yes"] == [f"MHA ({cfg.n_heads} kv heads)"]


def small(**overrides) -> TransformerConfig:
    return TransformerConfig(**{**dict(arch="decoder-only", vocab_size=20, d_model=64, n_heads=4, n_decoder_layers=3,
                                       max_len=32), **overrides})


def test_an_mla_model_is_marked_on_the_mla_row_with_its_own_latent():
    """A model with attention="mla" marks the MLA row (and no other), which keeps the model's own latent size; its
    MHA / GQA / MQA rows are the same model with ordinary attention."""
    cfg = small(attention="mla", kv_latent_dim=48)
    table = cache_table(cfg)
    assert list(table["attention"]) == ["MHA (4 kv heads)", "GQA (2 kv heads)", "MQA (1 kv heads)", "MLA (latent 48)"]
    assert list(table["this model"]) == ["", "", "", "yes"]
    assert table["cache bytes / token"].iloc[-1] == cache_bytes_per_token(cfg) == 3 * 48 * 4
    assert table["cache bytes / token"].iloc[0] == cache_bytes_per_token(small()) == 2 * 3 * 4 * 16 * 4


def test_gqa_model_is_marked_on_its_gqa_row_and_rope_adds_the_rotary_key():
    """A GQA model (2 kv heads) marks the GQA row; with RoPE, MLA's row also holds the decoupled rotary key, so it
    exceeds the latent alone, as cache_bytes_per_token says."""
    cfg = small(n_kv_heads=2, pos_encoding="rope")
    table = cache_table(cfg)
    assert list(table["this model"]) == ["", "yes", "", ""]
    mla = mla_variant(cfg)
    assert table["attention"].iloc[-1] == f"MLA (latent {mla.kv_latent_dim})"
    assert table["cache bytes / token"].iloc[-1] == cache_bytes_per_token(mla) > 3 * mla.kv_latent_dim * 4


def test_mla_that_cannot_be_built_says_why():
    """RoPE with d_k = 6: MLA's rotary part (d_k / 2 = 3) cannot be rotated in pairs; the row says so and shows no
    number, and the other rows are unaffected."""
    cfg = small(d_model=24, pos_encoding="rope")
    table = cache_table(cfg)
    assert table["attention"].iloc[-1].startswith("MLA (not possible with this model: ")
    assert table["cache bytes / token"].iloc[-1] == "—"
    assert table["cache bytes / token"].iloc[0] == cache_bytes_per_token(cfg)


@pytest.mark.parametrize("n_heads", range(1, 9))
def test_the_model_tab_shows_the_kv_variants_a_comparison_trains(n_heads):
    """Invariant: the Model tab's MHA / GQA / MQA rows are exactly the variants "Compare variants" trains for the
    same model (transformer.train.compare.comparison_variants), for every head count the Train tab allows: one GQA rule.
    8 heads is the case that disagreed (the tab showed GQA with 2 kv heads, the comparison trained 4)."""
    from transformer.train.compare import comparison_variants

    cfg = TransformerConfig(vocab_size=8, d_model=8 * n_heads, n_heads=n_heads, d_ff=8)
    shown = [a for a in cache_table(cfg)["attention"] if not a.startswith("MLA")]
    trained = [f"{v.name} ({v.n_kv_heads} kv heads)" for v in comparison_variants("kv-heads", cfg)]
    assert shown == trained
    if n_heads == 8:
        assert shown == ["MHA (8 kv heads)", "GQA (4 kv heads)", "MQA (1 kv heads)"]


def test_the_translation_cards_metrics_are_tables(client):
    """Regression (issue 29, item 5): the Model tab printed the translation card's metrics as one raw nested dict.
    Oracle: the card's own config.json: its scores in the first table, each group (unseen verses, eflomal, the
    alignment's diagonal baseline inside the alignment's group) in a table of its own, no dict printed, each name
    in words."""
    import json

    from store.catalogue import CHECKPOINTS

    metrics = json.loads((CHECKPOINTS / "translate-en-es" / "config.json").read_text())["metrics"]
    summary, *_ = client.predict("translate-en-es", api_name="/model")
    assert f"| BLEU greedy | {metrics['bleu_greedy']:.4g} |" in summary  # names in words (tabs.model.metric_label)
    assert f"| BLEU of the source copied as is | {metrics['bleu_copy_source']:.4g} |" in summary
    assert "**Metrics: unseen**" in summary and f"| BLEU greedy | {metrics['unseen']['bleu_greedy']:.4g} |" in summary
    assert "**Metrics: eflomal**" in summary and "{'" not in summary
    diagonal = metrics["alignment"]["diagonal"]  # a group inside a group has its table too (it was left out)
    assert "**Metrics: alignment, diagonal**" in summary and f"| AER | {diagonal['aer']:.4g} |" in summary
    layer, head = metrics["alignment"]["best_head"]  # a head in words, not "2 entries (not shown)"
    assert f"| best head | layer {layer}, head {head} |" in summary


def test_a_cards_heads_are_named_in_words_not_shown_as_numbers(client):
    """The induction card names its heads "layer.head" ("0.1", HeadId.label): the Model tab showed "previous token
    head | 0.1", a number to a class. Oracle: the card's own config.json, parsed by transformer.heads.layer_and_head
    (the rule HeadId.parse uses)."""
    import json

    from store.catalogue import CHECKPOINTS
    from transformer.heads import layer_and_head

    metrics = json.loads((CHECKPOINTS / "induction" / "config.json").read_text())["metrics"]
    summary, *_ = client.predict("induction", api_name="/model")
    for key, name in [("previous_token_head", "previous token head"), ("induction_head", "induction head")]:
        layer, head = layer_and_head(metrics[key])
        assert f"| {name} | layer {layer}, head {head} |" in summary
    assert f"| {metrics['previous_token_head']} |" not in summary
