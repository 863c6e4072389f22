"""Patching, direct logit attribution and path patching against TransformerLens on the same random GPT-2 weights.

The oracle is TransformerLens 4 (`transformer-lens`): its `TransformerBridge` wraps `transformers`' GPT-2 loaded from
the `tiny_gpt2_dir` fixture (a small random GPT-2 in the Hugging Face layout, every weight drawn with std 0.2), our
decoder loads the same files through `load_pretrained`. TransformerLens's patching functions return the raw metric; ours
the normalised one, so theirs are normalised with the same clean and corrupted values. No network.
"""
from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers")
tl_patching = pytest.importorskip("transformer_lens.patching")

from transformer.interpretability.activation_patching import (head_patching, pattern_patching,  # noqa: E402
                                                              residual_patching)
from transformer.interpretability.attribution_patching import attribution_patching  # noqa: E402
from transformer.interpretability.logit_attribution import direct_logit_attribution  # noqa: E402
from transformer.interpretability.path_patching import path_patching  # noqa: E402
from transformer.interpretability.patching_metric import logit_difference  # noqa: E402
from transformer.interpretability.patching_runs import minimal_pair  # noqa: E402
from transformer.pretrained import load_pretrained  # noqa: E402

TOL = 1e-4


def bridge(directory, compatibility: bool = False):
    """TransformerLens's bridge over transformers' GPT-2 from `directory` (eval mode, eager attention)."""
    from transformer_lens.model_bridge import TransformerBridge

    hf = transformers.GPT2LMHeadModel.from_pretrained(directory, attn_implementation="eager").eval()
    model = TransformerBridge.boot_transformers(str(directory), hf_model=hf, device="cpu")
    if compatibility:
        model.enable_compatibility_mode()  # folds the LayerNorms, as its direct_logit_attribution requires
    return model.eval()


@pytest.fixture(scope="module")
def setup(tiny_gpt2_dir):
    """(our model, its bridge, clean ids, corrupted ids, metric, TransformerLens's metric, clean/corrupted caches)."""
    ours, _, _ = load_pretrained(tiny_gpt2_dir, device="cpu")
    tl = bridge(tiny_gpt2_dir)
    g = torch.Generator().manual_seed(0)
    clean = torch.randint(1, ours.config.vocab_size, (1, 10), generator=g)
    corrupted = clean.clone()
    corrupted[0, 2:5] = torch.randint(1, ours.config.vocab_size, (3,), generator=g)
    pair = minimal_pair(ours, clean[0].tolist(), corrupted[0].tolist())
    metric = logit_difference(ours, pair)
    with torch.no_grad():
        clean_logits, clean_cache = tl.run_with_cache(clean)
        corrupted_logits, corrupted_cache = tl.run_with_cache(corrupted)

    def tl_metric(logits):
        return logits[0, -1, metric.answer] - logits[0, -1, metric.other]

    ends = float(tl_metric(clean_logits)), float(tl_metric(corrupted_logits))
    return ours, tl, pair, corrupted, metric, tl_metric, clean_cache, corrupted_cache, ends


def normalised(values, ends):
    clean, corrupted = ends
    return (values - corrupted) / (clean - corrupted)


def test_the_runs_and_the_metric_agree(setup):
    """Oracle: the two models' logits on both inputs are TransformerLens's, so every comparison below compares
    patching, not two different models (the clean and corrupted logit differences to 1e-4)."""
    ours, _, pair, _, metric, _, _, _, ends = setup
    from transformer.interpretability.patching_metric import baseline
    base = baseline(ours, pair, metric)
    assert (base.clean, base.corrupted) == pytest.approx(ends, abs=TOL)


def test_residual_grid_equals_transformer_lens(setup):
    """Oracle: get_act_patch_resid_pre, the residual stream entering each layer patched at each position."""
    ours, tl, pair, corrupted, metric, tl_metric, clean_cache, _, ends = setup
    theirs = tl_patching.get_act_patch_resid_pre(tl, corrupted, clean_cache, tl_metric)  # (layers, pos)
    torch.testing.assert_close(residual_patching(ours, pair, metric).values, normalised(theirs, ends),
                               atol=TOL, rtol=0)


def test_head_output_grids_equal_transformer_lens(setup):
    """Oracle: get_act_patch_attn_head_out_all_pos and _by_pos, each head's z patched (all positions; each)."""
    ours, tl, pair, corrupted, metric, tl_metric, clean_cache, _, ends = setup
    all_pos = tl_patching.get_act_patch_attn_head_out_all_pos(tl, corrupted, clean_cache, tl_metric)  # (L, H)
    by_pos = tl_patching.get_act_patch_attn_head_out_by_pos(tl, corrupted, clean_cache, tl_metric)  # (L, pos, H)
    torch.testing.assert_close(head_patching(ours, pair, metric).values, normalised(all_pos, ends), atol=TOL, rtol=0)
    torch.testing.assert_close(head_patching(ours, pair, metric, by_position=True).values,
                               normalised(by_pos, ends).transpose(1, 2), atol=TOL, rtol=0)


def test_pattern_grid_equals_transformer_lens(setup):
    """Oracle: get_act_patch_attn_head_pattern_all_pos, each head's attention pattern patched."""
    ours, tl, pair, corrupted, metric, tl_metric, clean_cache, _, ends = setup
    theirs = tl_patching.get_act_patch_attn_head_pattern_all_pos(tl, corrupted, clean_cache, tl_metric)
    torch.testing.assert_close(pattern_patching(ours, pair, metric).values, normalised(theirs, ends),
                               atol=TOL, rtol=0)


@pytest.mark.parametrize("component", ["q", "k", "v"])
def test_path_patching_equals_transformer_lens_direct_path(setup, component):
    """Oracle: get_act_patch_direct_path, each head of layer 0 into each head of layer 1 through one input (the
    pre-norm case, where our freeze is exactly its direct path)."""
    ours, tl, pair, corrupted, metric, tl_metric, clean_cache, corrupted_cache, ends = setup
    row = "qkv".index(component)
    for head in range(ours.config.n_heads):
        theirs = tl_patching.get_act_patch_direct_path(tl, corrupted, clean_cache, corrupted_cache, tl_metric,
                                                        0, head, component, verbose=False)  # (L, H), row 0 unused
        grid = path_patching(ours, pair, metric, ("decoder self", 0, head))["decoder self"]
        assert grid.values[row, 0].isnan().all()  # no path into the sender's own layer
        torch.testing.assert_close(grid.values[row, 1], normalised(theirs[1], ends), atol=TOL, rtol=0)


def test_direct_logit_attribution_equals_transformer_lens(setup, tiny_gpt2_dir):
    """Oracle: TransformerLens's direct_logit_attribution(unit="head") on its bridge with the LayerNorms folded
    (compatibility mode): each head's direct contribution to the logit difference, to 1e-4."""
    from transformer_lens.tools.analysis.direct_logit_attribution import direct_logit_attribution as tl_dla

    ours, _, pair, _, metric, _, _, _, _ = setup
    folded = bridge(tiny_gpt2_dir, compatibility=True)
    theirs = tl_dla(folded, torch.tensor([pair.decoder["clean"]]), answer_tokens=metric.answer,
                    incorrect_tokens=metric.other, unit="head")
    L, H = ours.config.n_decoder_layers, ours.config.n_heads
    assert theirs.labels[:L * H] == [f"L{i}H{h}" for i in range(L) for h in range(H)]
    heads = direct_logit_attribution(ours, pair, metric).heads["decoder self"]
    torch.testing.assert_close(heads.float(), theirs.attribution.flatten()[:L * H].view(L, H).float(),
                               atol=TOL, rtol=0)


def test_attribution_patching_equals_transformer_lens(setup):
    """Oracle: TransformerLens's attribution_patch (node granularity: (a_clean - a_corrupted) . dm/da on the
    corrupted run, per head and position), summed over positions and normalised like ours."""
    from transformer_lens.tools.analysis.attribution_patching import attribution_patch

    ours, tl, pair, corrupted, metric, tl_metric, _, _, ends = setup
    scores = attribution_patch(tl, torch.tensor([pair.decoder["clean"]]), corrupted, tl_metric).node_scores
    L, H = ours.config.n_decoder_layers, ours.config.n_heads
    theirs = torch.zeros(L, H)
    for node, value in scores.items():
        if node.kind == "attn_head_out":
            theirs[node.layer, node.head] += value
    clean, corrupted_value = ends
    torch.testing.assert_close(attribution_patching(ours, pair, metric)["decoder self"].values,
                               theirs / (clean - corrupted_value), atol=TOL, rtol=0)
