"""Activation patching, direct logit attribution, path and attribution patching: invariants and hand computations on
small random models (decoder-only and encoder-decoder, pre-norm and post-norm). TransformerLens is the oracle in
test_patching_oracle.py; the shipped induction model's known circuit in tests/integration/test_patching_induction.py.
"""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from transformer import Transformer, TransformerConfig
from transformer.interpretability.activation_patching import (Cell, head_patching, patch_cells, pattern_patching,
                                                              residual_patching)
from transformer.interpretability.attribution_patching import attribution_patching, rank_correlation
from transformer.interpretability.logit_attribution import direct_logit_attribution
from transformer.interpretability.path_patching import path_patching, path_patching_into, receivers
from transformer.interpretability.patching_metric import LogitDifference, baseline, logit_difference, target_loss
from transformer.interpretability.patching_runs import minimal_pair


def tiny(arch: str = "decoder-only", norm_first: bool = True, seed: int = 0, **fields) -> Transformer:
    torch.manual_seed(seed)
    cfg = TransformerConfig(arch=arch, vocab_size=20, d_model=16, n_heads=4, d_ff=32, dropout=0.0, max_len=32,
                            norm_first=norm_first, n_decoder_layers=2, attention_bias=True,
                            n_encoder_layers=2 if arch == "encoder-decoder" else 0, **fields)
    model = Transformer(cfg).eval()
    with torch.no_grad():  # norms away from (1, 0), so a term that forgets gamma or beta shows
        for name, p in model.named_parameters():
            if "norm" in name:
                p.add_(torch.randn_like(p) * 0.3)
    return model


CLEAN = [5, 6, 7, 8, 9, 10, 11, 12, 13, 14]
CORRUPTED = [5, 6, 15, 16, 9, 10, 11, 12, 13, 14]  # positions 2 and 3 changed


def pair_of(model: Transformer):
    if model.config.is_encoder_decoder:
        return minimal_pair(model, CLEAN, CORRUPTED, clean_target=[7, 8, 9, 3, 4])
    return minimal_pair(model, CLEAN, CORRUPTED)


def some_metric(model, pair):
    """A logit difference of two fixed tokens (the defaults may coincide on a random model)."""
    return logit_difference(model, pair, answer=4, other=11)


@pytest.mark.parametrize("arch, norm_first", [("decoder-only", True), ("decoder-only", False),
                                              ("encoder-decoder", True), ("encoder-decoder", False)])
def test_patching_a_whole_residual_stream_gives_the_clean_run_and_nothing_the_corrupted(arch, norm_first):
    """Invariant: the residual stream entering a layer, patched at every position, is the clean run from there on
    (normalised 1 to 1e-5, each layer of the decoder-only stack or the encoder, and the decoder's last output);
    patching no position is the corrupted run (0).
    At layer 0 a position whose token both inputs share patches nothing (0)."""
    model = tiny(arch, norm_first)
    pair = pair_of(model)
    for metric in (some_metric(model, pair), target_loss(pair)):
        stack = "encoder" if arch == "encoder-decoder" else "decoder"  # the decoder also reads the encoder's output
        cells = [Cell(f"{stack}.{i}.resid_pre", (slice(None),)) for i in range(2)]
        cells.append(Cell("decoder.1.resid_post", (slice(None),)))  # what the unembedding reads
        cells.append(Cell("decoder.1.resid_pre", (slice(0, 0),)))  # no position at all
        values, base = patch_cells(model, pair, metric, cells)
        torch.testing.assert_close(base.normalise(values), torch.tensor([1.0] * (len(cells) - 1) + [0.0]),
                                   atol=1e-5, rtol=0)
    stack = "encoder" if arch == "encoder-decoder" else "decoder"
    grid = residual_patching(model, pair, some_metric(model, pair), stack)
    same = [t for t in range(len(CLEAN)) if CLEAN[t] == CORRUPTED[t]]
    assert grid.values[0, same].abs().max() < 1e-6 and grid.values[0, [2, 3]].abs().max() > 1e-3


def hand_forward(model: Transformer, ids: list[int], layer: int, head: int, position: int, z_value: torch.Tensor):
    """The pre-norm decoder-only forward written out from the weights, with head `head` of layer `layer` giving
    `z_value` (d_k,) at `position` instead of what it computes: logits (T, vocab_size)."""
    cfg = model.config
    H, d_k, T = cfg.n_heads, cfg.d_model // cfg.n_heads, len(ids)
    x = model.embed.weight[ids] * math.sqrt(cfg.d_model) + model.pos_encoding.table[:T]  # (T, d_model)
    causal = torch.ones(T, T).tril().bool()
    for i, block in enumerate(model.decoder):
        attn, ln = block.self_attn, block.sublayers[0].norm
        h = F.layer_norm(x, (cfg.d_model,), ln.weight, ln.bias, ln.eps)
        q, k, v = (h @ attn.in_proj.weight.T + attn.in_proj.bias).split(cfg.d_model, -1)
        q, k, v = (t.view(T, H, d_k).transpose(0, 1) for t in (q, k, v))  # (H, T, d_k)
        scores = (q @ k.transpose(1, 2) / math.sqrt(d_k)).masked_fill(~causal, float("-inf"))
        z = (scores.softmax(-1) @ v).transpose(0, 1).clone()  # (T, H, d_k)
        if i == layer:
            z[position, head] = z_value
        x = x + z.reshape(T, -1) @ attn.out_proj.weight.T + attn.out_proj.bias
        ln2 = block.sublayers[1].norm
        x = x + block.ffn.w_2(F.relu(block.ffn.w_1(F.layer_norm(x, (cfg.d_model,), ln2.weight, ln2.bias, ln2.eps))))
    n = model.decoder_norm
    return F.layer_norm(x, (cfg.d_model,), n.weight, n.bias, n.eps) @ model.lm_head.weight.T


def test_a_patched_forward_equals_the_hand_written_forward_with_that_head_substituted():
    """Oracle: by hand. One head's output at one position patched from the clean run (a Cell through the points
    mechanism) gives the corrupted run's logits of a forward written out from the weights with that z put in: the
    loss of every position and a logit difference, to 1e-5; and the hand forward unpatched is the model."""
    model = tiny()
    pair = pair_of(model)
    layer, head, position = 0, 2, 5
    from transformer.points import points
    with torch.no_grad(), points(read=["decoder.0.self_attn.z"]) as seen:
        clean_logits = model(torch.tensor([CLEAN])).logits[0]
    z_clean = seen["decoder.0.self_attn.z"][0, position, head]
    with torch.no_grad():
        hand = hand_forward(model, CORRUPTED, layer, head, position, z_clean)
        unpatched = hand_forward(model, CLEAN, layer, head, position, z_clean)
    torch.testing.assert_close(unpatched, clean_logits, atol=1e-5, rtol=0)
    cell = Cell("decoder.0.self_attn.z", (position, head))
    for metric in (target_loss(pair), LogitDifference(answer=4, other=11, position=7)):
        values, _ = patch_cells(model, pair, metric, [cell])
        torch.testing.assert_close(values, metric(hand[None]), atol=1e-5, rtol=0)


@pytest.mark.parametrize("arch", ["decoder-only", "encoder-decoder"])
def test_direct_logit_attribution_sums_to_the_logit_difference(arch):
    """Invariant: the terms (embedding, every head of every kind the decoder has, every feed-forward block, the
    biases) sum to the model's logit difference to 1e-5, with the final norm's scale frozen (GELU, biases, GQA; and
    Llama's RMSNorm with SwiGLU and RoPE, which the LayerNorm formula, centring and shifting, gets wrong)."""
    for model in (tiny(arch), tiny(arch, n_kv_heads=2, activation="gelu", seed=1),
                  tiny(arch, norm="rms", ffn="swiglu", activation="silu", pos_encoding="rope", seed=2)):
        pair = pair_of(model)
        metric = some_metric(model, pair)
        dla = direct_logit_attribution(model, pair, metric)
        assert dla.total() == pytest.approx(dla.logit_difference, abs=1e-5)
        assert dla.logit_difference == pytest.approx(baseline(model, pair, metric).clean, abs=1e-5)
        kinds = ["decoder self", "cross"] if arch == "encoder-decoder" else ["decoder self"]
        assert list(dla.heads) == kinds and len(dla.terms()) == 2 + len(kinds) * 8 + 2


def test_direct_logit_attribution_refuses_a_post_norm_model():
    """The paper's post-norm layers put a LayerNorm after every sub-layer: no frozen scale makes the logits a sum
    of the heads' writes, so the attribution is refused in words rather than computed wrong."""
    model = tiny(norm_first=False)
    pair = pair_of(model)
    with pytest.raises(ValueError, match="pre-norm"):
        direct_logit_attribution(model, pair, some_metric(model, pair))


def test_the_grids_label_every_cell():
    """Invariant: each grid has one label per index of each axis, and a cell says where it is and its value."""
    model = tiny("encoder-decoder")
    pair = pair_of(model)
    metric = some_metric(model, pair)
    for grid in (residual_patching(model, pair, metric, "encoder"), head_patching(model, pair, metric, "cross"),
                 head_patching(model, pair, metric, "encoder self", by_position=True),
                 pattern_patching(model, pair, metric, "cross")):
        assert [len(a.labels) for a in grid.axes] == list(grid.values.shape)
    grid = head_patching(model, pair, metric, "cross")
    assert grid.cell(1, 3) == f"layer 1, head 3: {float(grid.values[1, 3]):.3g}"
    assert residual_patching(model, pair, metric, "encoder").axes[1].labels[2] == "2 #7/#15"


def test_path_patching_receivers_follow_the_streams():
    """Invariant: who reads a head's write after it: later self-attention of its stack (q, k, v); from the
    encoder, every cross-attention key and value; from the decoder, the cross queries of its layer on. Cells of
    heads that do not read it are NaN."""
    model = tiny("encoder-decoder")
    assert [(str(k), i, c) for k, i, c in receivers(model, "encoder self", 0)] == [
        ("encoder self", 1, c) for c in "qkv"] + [("cross", i, c) for i in range(2) for c in "kv"]
    assert [(str(k), i, c) for k, i, c in receivers(model, "decoder self", 0)] == [
        ("decoder self", 1, c) for c in "qkv"] + [("cross", 0, "q"), ("cross", 1, "q")]
    assert receivers(model, "cross", 1) == []
    pair = pair_of(model)
    grids = path_patching(model, pair, some_metric(model, pair), ("encoder self", 0, 1))
    assert grids["cross"].values[0].isnan().all() and not grids["cross"].values[1:].isnan().any()
    with pytest.raises(ValueError, match="no head reads"):
        path_patching(model, pair, some_metric(model, pair), ("cross", 1, 0))


@pytest.mark.parametrize("norm_first", [True, False])
def test_a_heads_partners_are_the_same_both_ways(norm_first):
    """Invariant: the path sender -> receiver through one input is one number, whether asked from the sender
    (path_patching: every receiver) or from the receiver (path_patching_into: every sender); encoder-decoder, so
    encoder -> cross key/value and decoder self -> cross query paths are both checked, pre-norm and post-norm."""
    model = tiny("encoder-decoder", norm_first)
    pair = pair_of(model)
    metric = some_metric(model, pair)
    receiver = ("cross", 1, 2)
    into = path_patching_into(model, pair, metric, receiver)
    assert set(into) == {"encoder self", "decoder self", "cross"}
    for kind, grid in into.items():
        for layer in range(2):
            for head in range(4):
                if grid.values[:, layer, head].isnan().all():
                    continue
                sent = path_patching(model, pair, metric, (kind, layer, head))["cross"].values[:, 1, 2]
                torch.testing.assert_close(grid.values[:, layer, head], sent, equal_nan=True, atol=1e-6, rtol=0)
    assert into["encoder self"].values[0].isnan().all()  # an encoder head reaches cross-attention's key and value


def test_attribution_patching_is_the_derivative_along_the_patch():
    """Oracle: forward-mode autodiff. Each head's estimate is (z_clean - z_corrupted) . dm/dz on the corrupted run,
    normalised: the derivative of the metric along the straight line from z_corrupted to z_clean at its start,
    which torch.func.jvp computes without our backward pass (last layer's heads, to 1e-5)."""
    model = tiny(attention_only=True)
    pair = pair_of(model)
    metric = some_metric(model, pair)
    from transformer.points import points
    grid = attribution_patching(model, pair, metric)["decoder self"]
    with torch.no_grad(), points(read=["decoder.1.self_attn.z"]) as clean_seen:
        model(torch.tensor([CLEAN]))
    with torch.no_grad(), points(read=["decoder.1.self_attn.z"]) as corrupted_seen:
        model(torch.tensor([CORRUPTED]))
    z_clean, z_corrupted = clean_seen["decoder.1.self_attn.z"], corrupted_seen["decoder.1.self_attn.z"]
    base = baseline(model, pair, metric)
    for head in range(4):
        direction = torch.zeros_like(z_clean)
        direction[:, :, head] = (z_clean - z_corrupted)[:, :, head]

        def m(t):
            with points(write={"decoder.1.self_attn.z": lambda z: z_corrupted + t * direction}):
                return metric(model(torch.tensor([CORRUPTED])).logits)[0]

        _, slope = torch.func.jvp(m, (torch.tensor(0.0),), (torch.tensor(1.0),))
        expected = float(slope.detach()) / (base.clean - base.corrupted)
        assert float(grid.values[1, head]) == pytest.approx(expected, abs=1e-5)


def test_rank_correlation():
    """Oracle: Spearman's rho by hand: the same order 1, reversed -1, ties take their mean rank (scipy's value
    for [1, 2, 2, 3] against [1, 3, 2, 4]: 0.9487)."""
    a = torch.tensor([1.0, 2.0, 3.0, 4.0])
    assert rank_correlation(a, a * 10) == pytest.approx(1.0)
    assert rank_correlation(a, -a) == pytest.approx(-1.0)
    tied = rank_correlation(torch.tensor([1.0, 2, 2, 3]), torch.tensor([1.0, 3, 2, 4]))
    assert tied == pytest.approx(0.9487, abs=1e-4)


def test_inputs_are_checked_in_words():
    """Refusals: inputs of different lengths, a target for a decoder-only model, none for an encoder-decoder,
    two equal answers, and a metric equal on both inputs (nothing to recover) each raise ValueError saying so."""
    model = tiny()
    with pytest.raises(ValueError, match="same number of tokens"):
        minimal_pair(model, CLEAN, CORRUPTED[:-1])
    with pytest.raises(ValueError, match="give no target"):
        minimal_pair(model, CLEAN, CORRUPTED, clean_target=[1])
    with pytest.raises(ValueError, match="needs a target"):
        minimal_pair(tiny("encoder-decoder"), CLEAN, CORRUPTED)
    pair = pair_of(model)
    with pytest.raises(ValueError, match="different answer tokens"):
        logit_difference(model, pair, answer=4, other=4)
    same = minimal_pair(model, CLEAN, CLEAN)
    with pytest.raises(ValueError, match="same on both inputs"):
        head_patching(model, same, some_metric(model, same))


def test_the_induction_demo_changes_what_precedes_the_copied_character():
    """Invariant of the demo pair: the clean text is n distinct characters then the first n - 1 again; the corrupted
    text keeps the n-th character and the second half, and its first n - 1 characters are none of the clean's."""
    from transformer.interpretability.patching_demos import induction_texts

    for seed in range(5):
        clean, corrupted = induction_texts(20, seed)
        first = clean[:20]
        assert len(set(first)) == 20 and clean == first + first[:-1] and len(corrupted) == len(clean)
        assert corrupted[19:] == clean[19:] and not set(corrupted[:19]) & set(clean)
