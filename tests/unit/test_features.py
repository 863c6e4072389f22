"""Sparse features of attention outputs (transformer.interpretability: sae, sae_training, planted, features,
feature_page): each test says its oracle: planted ground truth, an exact dictionary, a hand computation, head masks,
or a random dictionary that must fail where the trained SAE passes."""
from __future__ import annotations

import pytest
import torch

from tests.conftest import seeded_model, tiny_config
from transformer.heads import AttentionKind
from transformer.interpretability.ablation import heads_off
from transformer.interpretability.feature_contexts import StoredContexts
from transformer.interpretability.feature_page import Unembedding, feature_page, features_at, head_share, logit_effect
from transformer.interpretability.input_features import active_features
from transformer.interpretability.features import AttentionLayer, layer_activations, mean_loss, measure, width
from transformer.interpretability.planted import mean_max_cosine, planted_features
from transformer.interpretability.sae import SAEConfig, SparseAutoencoder, sae_loss
from transformer.interpretability.sae_training import SAETraining, fit_input, train_sae


def random_dictionary(x: torch.Tensor, config: SAEConfig, seed: int = 1) -> SparseAutoencoder:
    """The control every recovery test runs: an SAE of the same shape, never trained (random unit decoder rows, the
    encoder their transpose), its scale and b_dec fitted to x as training would start."""
    sae = SparseAutoencoder(config, torch.Generator().manual_seed(seed))
    fit_input(sae, x)
    return sae.eval()


@pytest.mark.parametrize("kind", ["relu", "topk"])
def test_planted_features_are_recovered_and_a_random_dictionary_is_not(kind):
    """Superposition toy (Elhage et al. 2022): 48 planted directions in 16 dimensions, ~2.4 on per input. The trained
    SAE's decoder rows find them (mean max cosine >= 0.9); a random dictionary of the same size does not."""
    planted = planted_features(d=16, n_true=48, n_samples=20000, p_active=0.05, seed=2026)
    config = SAEConfig(16, 96, kind, k=3)
    lr = 1e-2 if kind == "relu" else 3e-3  # measured: 0.991 (relu), 0.972 (topk); lr 3e-3 leaves relu at 0.84
    sae = train_sae(planted.x, config, SAETraining(steps=700, batch_size=256, lr=lr, l1_coefficient=3.0))
    assert mean_max_cosine(planted.dictionary, sae.W_dec.detach()) >= 0.9
    assert mean_max_cosine(planted.dictionary, random_dictionary(planted.x, config).W_dec.detach()) < 0.7
    assert torch.allclose(sae.W_dec.detach().norm(dim=1), torch.ones(96), atol=1e-5)  # unit decoder rows


def test_the_loss_is_the_papers():
    """L = ||x - x_hat||^2 + lambda ||f||_1 in the normalised units, by hand; TopK drops the L1 term and keeps k."""
    x = torch.randn(32, 8, generator=torch.Generator().manual_seed(0)) * 3
    relu = random_dictionary(x, SAEConfig(8, 20, "relu"))
    f = torch.relu((x / relu.scale - relu.b_dec) @ relu.W_enc + relu.b_enc)
    x_hat = (f @ relu.W_dec + relu.b_dec) * relu.scale
    by_hand = (((x - x_hat) / relu.scale) ** 2).sum(-1).mean() + 0.5 * f.abs().sum(-1).mean()
    assert torch.allclose(sae_loss(relu, x, 0.5), by_hand)
    topk = random_dictionary(x, SAEConfig(8, 20, "topk", k=3))
    assert int((topk.encode(x) > 0).sum(-1).max()) <= 3
    assert torch.allclose(sae_loss(topk, x, 0.5), (((x - topk.reconstruct(x)) / topk.scale) ** 2).sum(-1).mean())
    assert abs(float((x / relu.scale).pow(2).sum(-1).mean()) - 8) < 1e-4  # the scale: mean ||x / scale||^2 = d_in


def exact_dictionary(d_in: int) -> SparseAutoencoder:
    """A ReLU SAE that reconstructs every x exactly: features +e_i and -e_i, x = ReLU(x) - ReLU(-x)."""
    sae = SparseAutoencoder(SAEConfig(d_in, 2 * d_in, "relu"))
    eye = torch.eye(d_in)
    with torch.no_grad():
        sae.W_dec.copy_(torch.cat([eye, -eye]))
        sae.W_enc.copy_(torch.cat([eye, -eye]).t())
        sae.b_enc.zero_()
        sae.b_dec.zero_()
    return sae.eval()


def batches_for(model, seed=0, n=2, B=3):
    g = torch.Generator().manual_seed(seed)
    cfg = model.config
    out = []
    for _ in range(n):
        dec = torch.randint(3, cfg.vocab_size, (B, 9), generator=g)
        dec[0, -2:] = cfg.pad_id  # a padded row: its pad positions are no activations and no targets
        target = torch.cat([dec[:, 1:], torch.full((B, 1), cfg.pad_id)], 1)
        if cfg.is_encoder_decoder:
            src = torch.randint(3, cfg.vocab_size, (B, 7), generator=g)
            src[1, -3:] = cfg.pad_id
            out.append(((src, dec), target))
        else:
            out.append(((dec,), target))
    return out


@pytest.mark.parametrize("kind", [AttentionKind.ENCODER_SELF, AttentionKind.DECODER_SELF, AttentionKind.CROSS])
def test_spliced_loss_of_an_exact_dictionary_is_the_clean_loss_and_zero_ablation_is_every_head_off(kind):
    """Any kind of attention: an SAE that reconstructs z exactly, spliced in through the z point, gives the clean
    loss and explained variance 1; zero ablation equals the loss with every head of the layer switched off by a
    HeadMask (the library's other way of zeroing z). Pad positions are no activations."""
    model = seeded_model(tiny_config("encoder-decoder", norm_first=True))
    layer = AttentionLayer(kind, 1)
    batches = batches_for(model)
    metrics = measure(model, exact_dictionary(width(model)), layer, batches)
    assert metrics.explained_variance == pytest.approx(1.0, abs=1e-6)
    assert metrics.loss_spliced == pytest.approx(metrics.loss_clean, abs=1e-5)
    mask = heads_off(model, [(kind, 1, h) for h in range(model.config.n_heads)])
    off = 0.0
    total = 0
    for inputs, targets in batches:
        logits = model(*inputs, head_mask=mask).logits.detach()
        off += float(torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=0,
                                                       reduction="sum"))
        total += int((targets != 0).sum())
    assert metrics.loss_zero_ablation == pytest.approx(off / total, abs=1e-5)
    assert metrics.loss_clean == pytest.approx(mean_loss(model, batches))
    stream = 0 if kind is AttentionKind.ENCODER_SELF else 1
    assert metrics.positions == sum(int((inputs[stream] != 0).sum()) for inputs, _ in batches)


def test_head_share_reads_the_decoder_rows_slices():
    """A feature whose decoder row lies in head 2's slice is written by head 2 alone; shares sum to 1 for every
    feature; a random dictionary's shares average 1 / H."""
    sae = exact_dictionary(32)  # 4 heads of d_k 8: feature i is +e_i, feature 32 + i is -e_i
    share = head_share(sae, 4)
    assert torch.allclose(share.sum(-1), torch.ones(64))
    assert share[17].tolist() == [0.0, 0.0, 1.0, 0.0] and share[32 + 5].tolist() == [1.0, 0.0, 0.0, 0.0]
    random = head_share(random_dictionary(torch.randn(100, 32), SAEConfig(32, 400)), 4)
    assert torch.allclose(random.mean(0), torch.full((4,), 0.25), atol=0.03)


def test_logit_effect_by_hand_and_refused_where_there_is_no_direct_path(make_model):
    """Pre-norm decoder: d_j W^O centred, times the final LayerNorm's gamma, read by the unembedding (the scale
    sigma left out). An encoder layer and a post-norm model are refused in words."""
    model = seeded_model(tiny_config("decoder-only", norm_first=True))
    sae = random_dictionary(torch.randn(50, width(model)), SAEConfig(width(model), 16))
    layer = AttentionLayer("decoder self", 0)
    d = sae.W_dec[3].detach().double() @ model.decoder[0].self_attn.out_proj.weight.detach().t().double()
    by_hand = ((d - d.mean()) * model.decoder_norm.weight.detach().double()) @ model.lm_head.weight.detach().double().t()
    effect = logit_effect(model, sae, layer, 3, n=4)
    assert [t for t, _ in effect.top] == by_hand.topk(4).indices.tolist()
    assert effect.top[0][1] == pytest.approx(float(by_hand.max()))
    assert effect.bottom[0][1] == pytest.approx(float(by_hand.min()))
    with pytest.raises(ValueError, match="post-norm"):
        logit_effect(make_model("decoder-only"), sae, layer, 3)
    encoder = seeded_model(tiny_config("encoder-decoder", norm_first=True))
    with pytest.raises(ValueError, match="source"):
        logit_effect(encoder, sae, AttentionLayer("encoder self", 0), 3)



def test_a_kept_unembedding_reads_the_same_effects_and_no_other_is_made(monkeypatch):
    """Oracle: logit_effect making its own float64 unembedding. Through one Unembedding made beforehand (what
    store.saes keeps per shipped model) every feature's top and bottom tokens and effects are the same, bitwise;
    active_features given it converts nothing more (Unembedding.of is not called), and without one it makes one
    per call, not one per feature."""
    model = seeded_model(tiny_config("decoder-only", norm_first=True))
    sae = random_dictionary(torch.randn(50, width(model)), SAEConfig(width(model), 16))
    layer, kept = AttentionLayer("decoder self", 1), Unembedding.of(model)
    for j in range(16):
        assert logit_effect(model, sae, layer, j, n=4, unembedding=kept) == logit_effect(model, sae, layer, j, n=4)
    f = sae.encode(torch.randn(1, width(model), generator=torch.Generator().manual_seed(3)))[0]  # (F,)
    stored = StoredContexts([0.0] * 16, [[] for _ in range(16)], "nothing", 0)
    made, make = [], Unembedding.of
    monkeypatch.setattr(Unembedding, "of", classmethod(lambda cls, m: made.append(m) or make(m)))
    active = active_features(model, sae, layer, f, stored, n=8, unembedding=kept)
    assert len(active) >= 3 and made == []
    assert [a.logit_effect for a in active] == [logit_effect(model, sae, layer, a.feature) for a in active]
    made.clear()
    assert [a.logit_effect for a in active_features(model, sae, layer, f, stored, n=8)] == \
        [a.logit_effect for a in active]
    assert made == [model]

def test_a_layer_the_model_lacks_is_refused_in_words(make_model):
    model = make_model("decoder-only")
    with pytest.raises(ValueError, match="has decoder self attention"):
        layer_activations(model, AttentionLayer("cross", 0), batches_for(model))
    with pytest.raises(ValueError, match="layers 0 to 1"):
        layer_activations(model, AttentionLayer("decoder self", 2), batches_for(model))


def test_features_at_a_position_are_the_sae_of_that_positions_z(shipped):
    """features_at equals encoding the z read at that position by hand, largest first."""
    from transformer.points import points

    model, tokenizer, info = shipped("induction")
    sae = random_dictionary(torch.randn(200, 64), SAEConfig(64, 32, "topk", k=4))
    tokens = torch.tensor([tokenizer.encode("abcdefgabcdef")])
    with points(read=["decoder.1.self_attn.z"]) as seen:
        model(tokens)
    f = sae.encode(seen["decoder.1.self_attn.z"][0, 9].flatten()).detach()
    got = features_at(model, sae, AttentionLayer("decoder self", 1), (tokens,), 9)
    assert [j for j, _ in got] == f.topk(4).indices.tolist()
    assert got[0][1] == pytest.approx(float(f.max()))
    with pytest.raises(ValueError, match="no token at position 40"):
        features_at(model, sae, AttentionLayer("decoder self", 1), (tokens,), 40)


def test_held_out_batches_never_come_from_the_training_split(tmp_path, shipped):
    """A text source: training windows from the first 90% of the characters, held-out windows from the last 10%
    (the model's own validation split); the induction task: two generators, so no held-out sequence is a training
    one."""
    from transformer.interpretability.feature_data import FeatureData, feature_batches
    from transformer.tokenization import CharTokenizer

    text = tmp_path / "text.txt"
    text.write_text("a" * 900 + "b" * 100)
    tokenizer = CharTokenizer("ab")
    data = FeatureData(str(text), block_size=8, batch_size=4, train_batches=3, held_out_batches=2)
    model = seeded_model(tiny_config("decoder-only"))
    a, b = tokenizer.encode("ab")
    train, held_out = (feature_batches(data, model, tokenizer, s) for s in ("train", "held-out"))
    assert len(train) == 3 and all(set(x.flatten().tolist()) == {a} for (x,), _ in train)
    assert len(held_out) == 2 and all(set(x.flatten().tolist()) == {b} for (x,), _ in held_out)
    model, tokenizer, _ = shipped("induction")
    induction = FeatureData("induction", batch_size=8, train_batches=4, held_out_batches=4)
    seen = {tuple(r) for (x,), _ in feature_batches(induction, model, tokenizer, "train") for r in x.tolist()}
    assert not seen & {tuple(r) for (x,), _ in feature_batches(induction, model, tokenizer, "held-out")
                       for r in x.tolist()}
    from transformer.encoding import source_ids
    from transformer.translation.corpus import held_out as held_out_verses

    model, tokenizer, _ = shipped("translate-en-es")
    verses = feature_batches(FeatureData("translation", batch_size=4, held_out_batches=2), model, tokenizer,
                             "held-out")  # the committed validation verses, in order: no SWORD module needed
    valid = held_out_verses()[1]
    assert len(verses) == 2 and [len(b[1]) for b in verses] == [4, 4]
    (src, _), _ = verses[1]
    first = source_ids(tokenizer, valid[4].en, model.config)
    assert src[0, :len(first)].tolist() == first


def test_pages_of_several_features_are_each_features_page():
    """feature_pages encodes the held-out activations once; each page equals the one feature_page makes alone: the
    same contexts (largest first, each with its own f_j), shares, frequency and logit effect."""
    from transformer.interpretability.feature_page import feature_pages

    model = seeded_model(tiny_config("decoder-only", norm_first=True))
    layer = AttentionLayer("decoder self", 1)
    held_out = layer_activations(model, layer, batches_for(model, seed=3))
    sae = random_dictionary(held_out.x, SAEConfig(width(model), 24, "topk", k=3))
    together = feature_pages(model, sae, layer, [5, 11], held_out, n_contexts=4)
    for page, feature in zip(together, [5, 11]):
        alone = feature_page(model, sae, layer, feature, held_out, n_contexts=4)
        assert page.contexts == alone.contexts and page.frequency == alone.frequency
        assert torch.equal(page.share, alone.share) and page.logit_effect == alone.logit_effect
        f = sae.encode(held_out.x)[:, feature].detach()
        assert [c.activation for c in page.contexts] == pytest.approx(f.topk(len(page.contexts)).values.tolist())
        for c in page.contexts:
            assert c.tokens[c.at] == int(held_out.tokens[c.row, c.position])
    with pytest.raises(ValueError, match="features 0 to 23, got 24"):
        feature_pages(model, sae, layer, [1, 24], held_out)


def test_top_contexts_are_the_largest_activations_with_their_neighbours_and_no_padding():
    """By hand: two rows, the second padded; the contexts are the positive activations largest first, each with
    the tokens before it and the real tokens after it."""
    from transformer.interpretability.feature_page import top_contexts
    from transformer.interpretability.features import Activations

    tokens = torch.tensor([[5, 6, 7, 8, 9], [10, 11, 12, 0, 0]])
    where = torch.tensor([[0, 0], [0, 1], [0, 2], [0, 3], [0, 4], [1, 0], [1, 1], [1, 2]])
    f = torch.tensor([0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0])
    contexts = top_contexts(f, Activations(torch.zeros(8, 1), where, tokens), n=3, before=1, after=2, pad_id=0)
    assert [(c.tokens, c.at, c.activation, c.row, c.position) for c in contexts] == [
        ([11, 12], 1, 2.0, 1, 2), ([5, 6, 7, 8], 1, 0.5, 0, 1)]
