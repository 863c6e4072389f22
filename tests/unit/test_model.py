"""The whole model: fused == explicit attention, masks, causality, masking == deleting, parameter counts."""
from __future__ import annotations

import pytest
import torch

from transformer.config import TransformerConfig
from transformer.model import Transformer, parameter_counts

PAD = 0
# Two padded sources (lengths 6 and 3) and two padded targets (lengths 5 and 2); ids 3..16 are real tokens.
SRC = torch.tensor([[5, 6, 7, 8, 9, 2], [10, 11, 2, PAD, PAD, PAD]])
TGT = torch.tensor([[1, 12, 13, 14, 15], [1, 16, PAD, PAD, PAD]])
TOKENS = torch.tensor([[4, 5, 6, 7, 8, 9], [10, 11, 12, PAD, PAD, PAD]])  # decoder-only, right-padded

VARIANTS = [dict(), dict(n_kv_heads=2), dict(n_kv_heads=1), dict(norm_first=True, activation="gelu"),
            dict(pos_encoding="learned", tie_embeddings=False)]


def run(model, *inputs, explicit: bool):
    with torch.no_grad():
        return model(*inputs, return_attention=explicit)


def inputs_for(arch):
    return (SRC, TGT) if arch == "encoder-decoder" else (TOKENS,)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: ",".join(f"{k}={x}" for k, x in v.items()) or "base")
@pytest.mark.parametrize("arch", ["encoder-decoder", "decoder-only"])
def test_fused_path_equals_explicit_path(make_model, arch, variant):
    """Invariant: logits through the fused kernel (return_attention=False) equal logits through our explicit
    softmax(QK^T/sqrt(d_k))V (return_attention=True), with padding, in eval mode with dropout 0."""
    model = make_model(arch, **variant)
    fused = run(model, *inputs_for(arch), explicit=False)
    explicit = run(model, *inputs_for(arch), explicit=True)
    assert fused.attention is None
    torch.testing.assert_close(fused.logits, explicit.logits, atol=1e-5, rtol=0)


def assert_rows_are_distributions(weights: torch.Tensor, fully_masked: torch.Tensor | None = None):
    """Every row sums to 1, except rows with nothing to attend to (fully_masked, (B, T)), which are all 0."""
    sums = weights.sum(-1)  # (B, H, T)
    expected = torch.ones_like(sums)
    if fully_masked is not None:
        expected[fully_masked[:, None, :].expand_as(sums)] = 0.0
    torch.testing.assert_close(sums, expected, atol=1e-5, rtol=0)
    assert (weights >= 0).all()


def test_encoder_decoder_attention_rows_and_masked_weights(make_model):
    """Invariants: every attention row sums to 1; weights on padding keys are exactly 0 (encoder self- and
    cross-attention on source pads, decoder self-attention on target pads) and on future positions exactly 0."""
    model = make_model("encoder-decoder")
    maps = run(model, SRC, TGT, explicit=True).attention
    assert len(maps.encoder_self) == len(maps.decoder_self) == len(maps.cross) == 2
    for w in maps.encoder_self:
        assert_rows_are_distributions(w)
        assert torch.all(w[1, :, :, 3:] == 0)
    for w in maps.cross:
        assert_rows_are_distributions(w)
        assert torch.all(w[1, :, :, 3:] == 0)
    for w in maps.decoder_self:
        assert_rows_are_distributions(w)
        assert torch.all(w.triu(diagonal=1) == 0)  # no query sees a later position
        assert torch.all(w[1, :, :, 2:] == 0)  # target pads


def test_decoder_only_attention_rows_and_masked_weights(make_model):
    """Invariants: decoder-only self-attention rows sum to 1, future positions and padding keys get exactly 0, and
    there are no encoder or cross maps."""
    maps = run(make_model("decoder-only"), TOKENS, explicit=True).attention
    assert maps.encoder_self == [] and maps.cross == []
    for w in maps.decoder_self:
        assert_rows_are_distributions(w)
        assert torch.all(w.triu(diagonal=1) == 0)
        assert torch.all(w[1, :, :, 3:] == 0)


def test_fully_padded_source_row_gives_no_nan(make_model):
    """Invariant: a source row that is all padding (nothing to attend to) yields finite logits on both paths,
    its attention rows are all 0 (not NaN), and the other batch row is unaffected by it."""
    model = make_model("encoder-decoder")
    src = torch.tensor([[5, 6, 7, 2], [PAD, PAD, PAD, PAD]])
    tgt = torch.tensor([[1, 12, 13], [1, 14, 15]])
    fused = run(model, src, tgt, explicit=False)
    explicit = run(model, src, tgt, explicit=True)
    assert torch.isfinite(fused.logits).all() and torch.isfinite(explicit.logits).all()
    torch.testing.assert_close(fused.logits, explicit.logits, atol=1e-5, rtol=0)
    for w in explicit.attention.encoder_self + explicit.attention.cross:
        assert not torch.isnan(w).any() and torch.all(w[1] == 0)
        assert_rows_are_distributions(w[:1])
    alone = run(model, src[:1], tgt[:1], explicit=False)
    torch.testing.assert_close(fused.logits[:1], alone.logits, atol=1e-5, rtol=0)


def test_fully_padded_decoder_only_row_gives_no_nan(make_model):
    """Invariant: a decoder-only row that is all padding gives finite logits on both paths, and zero weights."""
    model = make_model("decoder-only")
    tokens = torch.tensor([[4, 5, 6], [PAD, PAD, PAD]])
    fused = run(model, tokens, explicit=False)
    explicit = run(model, tokens, explicit=True)
    assert torch.isfinite(fused.logits).all() and torch.isfinite(explicit.logits).all()
    torch.testing.assert_close(fused.logits, explicit.logits, atol=1e-5, rtol=0)
    assert all(torch.all(w[1] == 0) for w in explicit.attention.decoder_self)


@pytest.mark.parametrize("explicit", [False, True])
@pytest.mark.parametrize("arch", ["encoder-decoder", "decoder-only"])
def test_decoder_is_causal(make_model, arch, explicit):
    """Invariant (causality): changing the tokens after position t leaves the logits at positions <= t unchanged,
    for every t, in the decoder-only model and in the decoder of the encoder-decoder model."""
    model = make_model(arch)
    src = torch.tensor([[5, 6, 7, 8, 2]])
    seq = torch.tensor([[1, 9, 10, 11, 12, 13, 14]])
    g = torch.Generator().manual_seed(0)
    call = (lambda tgt: run(model, src, tgt, explicit=explicit)) if arch == "encoder-decoder" else (
        lambda tgt: run(model, tgt, explicit=explicit))
    base = call(seq).logits
    for t in range(seq.size(1) - 1):
        changed = seq.clone()
        changed[0, t + 1:] = torch.randint(3, 17, (seq.size(1) - t - 1,), generator=g)
        assert not torch.equal(changed, seq)
        logits = call(changed).logits
        torch.testing.assert_close(logits[:, : t + 1], base[:, : t + 1], atol=1e-5, rtol=0)
        assert not torch.allclose(logits[:, t + 1:], base[:, t + 1:], atol=1e-4)  # the change is visible later


@pytest.mark.parametrize("explicit", [False, True])
def test_masking_padded_source_tokens_equals_deleting_them(make_model, explicit):
    """Invariant: the target's logits are the same with and without trailing pads in the source; the cross-attention
    on the real source positions is the same too (the pads get exactly 0)."""
    model = make_model("encoder-decoder")
    src = torch.tensor([[5, 6, 7, 2]])
    tgt = torch.tensor([[1, 12, 13, 14]])
    padded = torch.cat([src, torch.full((1, 5), PAD)], dim=1)
    short, long = run(model, src, tgt, explicit=explicit), run(model, padded, tgt, explicit=explicit)
    torch.testing.assert_close(long.logits, short.logits, atol=1e-5, rtol=0)
    if explicit:
        for a, b in zip(long.attention.cross, short.attention.cross):
            torch.testing.assert_close(a[..., :4], b, atol=1e-6, rtol=0)
            assert torch.all(a[..., 4:] == 0)


@pytest.mark.parametrize("arch", ["encoder-decoder", "decoder-only"])
def test_padding_a_batch_does_not_change_a_row(make_model, arch):
    """Invariant: each row of a padded batch gets the logits (at its real positions) it gets alone, unpadded."""
    model = make_model(arch)
    batch = run(model, *inputs_for(arch), explicit=False).logits
    if arch == "encoder-decoder":
        alone = run(model, SRC[1:, :3], TGT[1:, :2], explicit=False).logits
        torch.testing.assert_close(batch[1:, :2], alone, atol=1e-5, rtol=0)
    else:
        alone = run(model, TOKENS[1:, :3], explicit=False).logits
        torch.testing.assert_close(batch[1:, :3], alone, atol=1e-5, rtol=0)


def test_input_longer_than_max_len_is_a_value_error(make_model):
    """Invariant: a sequence longer than max_len is refused with a ValueError naming max_len (no silent crop)."""
    model = make_model("decoder-only", max_len=8)
    with pytest.raises(ValueError, match="max_len=8"):
        model(torch.ones(1, 9, dtype=torch.long) * 5)


def test_wrong_number_of_inputs_is_a_value_error(make_model):
    """Invariant: an encoder-decoder model needs (src, tgt); a decoder-only model takes one sequence."""
    with pytest.raises(ValueError, match="source and a target"):
        make_model("encoder-decoder")(SRC)
    with pytest.raises(ValueError, match="one token sequence"):
        make_model("decoder-only")(TOKENS, TOKENS)


def count(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())  # shared (tied) parameters are counted once


def meta_model(**kwargs) -> Transformer:
    with torch.device("meta"):  # shapes without memory: a 63M-parameter model in milliseconds
        return Transformer(TransformerConfig(**kwargs))


BASE = dict(vocab_size=37000, d_model=512, n_heads=8, n_encoder_layers=6, n_decoder_layers=6, d_ff=2048)


def test_parameter_count_of_the_papers_base_model():
    """Oracle: the count derived by hand for d=512, h=8, N=6, d_ff=2048, vocab 37000, tied embeddings:

    MHA       = 4 d^2 (W^Q, W^K, W^V, W^O; the paper's projections have no biases) = 1,048,576
    FFN       = 2 d d_ff + d_ff + d    = 2,097,152 + 2,048 + 512        = 2,099,712
    LayerNorm = 2 d                                                     = 1,024
    encoder layer = MHA + FFN + 2 LN   = 3,150,336;  x 6 = 18,902,016
    decoder layer = 2 MHA + FFN + 3 LN = 4,199,936;  x 6 = 25,199,616
    embedding = vocab d = 37,000 * 512 = 18,944,000, shared with the output projection (no bias);
    sinusoidal positions have no parameters; post-norm stacks add no final LayerNorm.
    total = 18,902,016 + 25,199,616 + 18,944,000 = 63,045,632  (~63M; the paper's Table 3 says 65M)
    """
    d, d_ff, vocab = 512, 2048, 37000
    mha, ffn, ln = 4 * d * d, 2 * d * d_ff + d_ff + d, 2 * d
    assert (mha, ffn, ln) == (1_048_576, 2_099_712, 1_024)
    by_hand = 6 * (mha + ffn + 2 * ln) + 6 * (2 * mha + ffn + 3 * ln) + vocab * d
    assert by_hand == 63_045_632
    model = meta_model(**BASE)
    assert model.lm_head.weight is model.embed.weight
    assert count(model) == by_hand
    assert count(model.encoder[0]) == mha + ffn + 2 * ln and count(model.decoder[0]) == 2 * mha + ffn + 3 * ln


def test_attention_bias_adds_four_bias_vectors_per_attention_block():
    """Oracle: attention_bias=True (GPT-2's projections) adds b^Q, b^K, b^V, b^O, 4 d numbers, to each of the 18
    attention blocks of the base model: 18 * 4 * 512 = 36,864."""
    assert count(meta_model(**BASE, attention_bias=True)) - count(meta_model(**BASE)) == 36_864


@pytest.mark.parametrize("n_kv_heads", [4, 2, 1])
def test_gqa_and_mqa_shrink_key_value_projections_exactly(n_kv_heads):
    """Oracle: with G kv heads, W^K and W^V map d -> G d_k (d G d_k weights each) instead of d -> d, so each of the
    18 attention blocks (6 encoder self, 6 decoder self, 6 cross) saves 2 (d - G d_k) d."""
    d, d_k = 512, 64
    saved_per_block = 2 * (d - n_kv_heads * d_k) * d
    full, grouped = count(meta_model(**BASE)), count(meta_model(**BASE, n_kv_heads=n_kv_heads))
    assert full - grouped == 18 * saved_per_block
    assert n_kv_heads != 1 or full - grouped == 18 * 2 * 448 * 512  # MQA by hand: 8,257,536


def test_untied_embeddings_add_exactly_one_vocab_by_d_matrix():
    """Oracle: untying adds the output projection's own vocab x d weight (37,000 * 512 = 18,944,000)."""
    assert count(meta_model(**BASE, tie_embeddings=False)) - count(meta_model(**BASE)) == 37000 * 512


def test_decoder_only_and_pre_norm_parameter_counts():
    """Oracle: a decoder-only layer is MHA + FFN + 2 LN (no cross-attention); pre-norm adds one final LayerNorm
    (2 d) per stack; learned positions add max_len x d."""
    d, d_ff, vocab, max_len = 64, 256, 100, 128
    mha, ffn, ln = 4 * d * d, 2 * d * d_ff + d_ff + d, 2 * d
    kw = dict(vocab_size=vocab, d_model=d, n_heads=4, d_ff=d_ff, max_len=max_len)
    assert count(meta_model(arch="decoder-only", n_decoder_layers=3, **kw)) == 3 * (mha + ffn + 2 * ln) + vocab * d
    assert count(meta_model(arch="decoder-only", n_decoder_layers=3, norm_first=True, pos_encoding="learned", **kw)) \
        == 3 * (mha + ffn + 2 * ln) + vocab * d + ln + max_len * d
    assert count(meta_model(n_encoder_layers=2, n_decoder_layers=2, norm_first=True, **kw)) == \
        2 * (mha + ffn + 2 * ln) + 2 * (2 * mha + ffn + 3 * ln) + vocab * d + 2 * ln


# --- attention-only layers (attention_only=True: no feed-forward sub-layer) ------------------------------------


def test_attention_only_layers_have_no_feed_forward_parameters():
    """Oracle: by hand, an attention-only decoder-only layer is MHA + 1 LN, an encoder layer MHA + 1 LN and an
    encoder-decoder decoder layer 2 MHA + 2 LN; no parameter belongs to a feed-forward network (absent, not zero)."""
    d, vocab, max_len = 64, 100, 128
    mha, ln = 4 * d * d, 2 * d
    kw = dict(vocab_size=vocab, d_model=d, n_heads=4, d_ff=256, max_len=max_len, attention_only=True)
    dec_only = meta_model(arch="decoder-only", n_decoder_layers=3, **kw)
    enc_dec = meta_model(n_encoder_layers=2, n_decoder_layers=2, **kw)
    assert count(dec_only) == 3 * (mha + ln) + vocab * d
    assert count(enc_dec) == 2 * (mha + ln) + 2 * (2 * mha + 2 * ln) + vocab * d
    for model in (dec_only, enc_dec):
        assert not [name for name, _ in model.named_parameters() if "ffn" in name]
        assert all(layer.ffn is None for layer in [*model.encoder, *model.decoder])
        assert "feed-forward" not in parameter_counts(model) and sum(parameter_counts(model).values()) == count(model)


@pytest.mark.parametrize("norm_first", [False, True])
def test_attention_only_model_equals_a_forward_pass_without_the_ffn_written_by_hand(norm_first):
    """Oracle: the decoder-only stack computed by hand from the model's own modules, with each layer's feed-forward
    sub-layer left out: x = LN(x + Attn(x)) (post-norm) or x = x + Attn(LN(x)) (pre-norm), then the output
    projection. A full model's weights without its FFNs load into the attention-only model unchanged."""
    kw = dict(arch="decoder-only", vocab_size=17, d_model=32, n_heads=4, n_decoder_layers=2, d_ff=64, dropout=0.0,
              max_len=24, norm_first=norm_first)
    torch.manual_seed(0)
    full = Transformer(TransformerConfig(**kw)).eval()
    ours = Transformer(TransformerConfig(**kw, attention_only=True)).eval()
    kept = {k: v for k, v in full.state_dict().items() if ".ffn." not in k and ".sublayers.1." not in k}
    assert set(kept) == set(ours.state_dict())
    ours.load_state_dict(kept)
    ids = torch.tensor([[4, 5, 6, 7, 8, 9, 4, 5], [10, 11, 12, 13, 10, 11, 12, 13]])
    with torch.no_grad():
        x = full.pos_encoding(full.embed(ids))
        for layer in full.decoder:
            norm, attn = layer.sublayers[0].norm, layer.self_attn
            if norm_first:
                h = norm(x)
                x = x + attn(h, h, h, None, is_causal=True)
            else:
                x = norm(x + attn(x, x, x, None, is_causal=True))
        by_hand = full.lm_head(full.decoder_norm(x))
        for explicit in (False, True):
            torch.testing.assert_close(ours(ids, return_attention=explicit).logits, by_hand)


def test_attention_only_pre_norm_encoder_decoder_equals_zeroing_every_ffn():
    """Oracle: in a pre-norm layer a sub-layer whose output is 0 adds nothing (x + 0 = x), so a full encoder-decoder
    whose FFN output weights and biases are zeroed computes what the attention-only model computes."""
    kw = dict(vocab_size=17, d_model=32, n_heads=4, n_encoder_layers=2, n_decoder_layers=2, d_ff=64, dropout=0.0,
              max_len=24, norm_first=True)
    torch.manual_seed(0)
    full = Transformer(TransformerConfig(**kw)).eval()
    ours = Transformer(TransformerConfig(**kw, attention_only=True)).eval()
    ffn_sublayer = ("encoder.{}.sublayers.1.", "decoder.{}.sublayers.2.")  # the FFN's sub-layer in each layer
    dropped = tuple(f.format(i) for f in ffn_sublayer for i in range(2))
    kept = {k: v for k, v in full.state_dict().items() if ".ffn." not in k and not k.startswith(dropped)}
    ours.load_state_dict(kept)
    with torch.no_grad():
        for layer in [*full.encoder, *full.decoder]:
            layer.ffn.w_2.weight.zero_()
            layer.ffn.w_2.bias.zero_()
        torch.testing.assert_close(ours(SRC, TGT).logits, full(SRC, TGT).logits)


def test_attention_only_checkpoint_round_trip(tmp_path, char_tokenizer):
    """Invariant: save then load gives the same config (attention_only kept) and the same logits; a config.json
    written before the field existed (no "attention_only" key) still loads, as a model with feed-forward layers."""
    from transformer.checkpoint import load_checkpoint, save_checkpoint

    torch.manual_seed(0)
    config = TransformerConfig(arch="decoder-only", vocab_size=char_tokenizer.vocab_size, d_model=32, n_heads=4,
                               n_decoder_layers=2, dropout=0.0, max_len=24, attention_only=True)
    model = Transformer(config).eval()
    save_checkpoint(tmp_path / "ao", model, char_tokenizer, task="induction")
    loaded, _, info = load_checkpoint(tmp_path / "ao", device="cpu")
    assert loaded.config == config and loaded.config.attention_only and info["model"]["attention_only"] is True
    torch.testing.assert_close(loaded(TOKENS).logits, model(TOKENS).logits)

    old = {k: v for k, v in config.to_dict().items() if k != "attention_only"}
    assert TransformerConfig.from_dict(old).attention_only is False


@pytest.mark.parametrize("arch", ["encoder-decoder", "decoder-only"])
def test_every_layer_norm_uses_the_configured_eps(make_model, arch):
    """Invariant: layer_norm_eps reaches every LayerNorm (sub-layers and the final norms of a pre-norm stack), so a
    GPT-2 eps from its config.json applies throughout."""
    model = make_model(arch, norm_first=True, layer_norm_eps=1e-3)
    norms = [m for m in model.modules() if isinstance(m, torch.nn.LayerNorm)]
    assert len(norms) == 2 * model.config.n_encoder_layers + (2 + model.config.is_encoder_decoder) * 2 + \
        1 + model.config.is_encoder_decoder
    assert {m.eps for m in norms} == {1e-3}


def test_unscaled_embeddings_are_the_embedding_rows(make_model):
    """Oracle: with scale_embeddings=False the token embedding is the weight row itself (GPT-2); with the default it
    is the row times sqrt(d_model) (section 3.4)."""
    ids = torch.tensor([[3, 5, 7]])
    for scale, factor in ((False, 1.0), (True, 32 ** 0.5)):
        model = make_model("decoder-only", scale_embeddings=scale)
        torch.testing.assert_close(model.embed(ids), model.embed.weight[ids] * factor)


def test_a_pad_id_shared_with_eos_masks_nothing(make_model):
    """Oracle: masking a key equals deleting it. With pad_id = eos_id (GPT-2: no padding token) a prompt holding
    that id is read as it is: its logits differ from those of the prompt with the token masked out, and equal those
    of the same model with pad_id moved to an id the prompt does not contain."""
    from dataclasses import replace

    gpt2_style = make_model("decoder-only", pad_id=2, bos_id=2, eos_id=2)
    ids = torch.tensor([[2, 5, 6, 2, 7]])
    with torch.no_grad():
        logits = gpt2_style(ids).logits
        gpt2_style.config = replace(gpt2_style.config, pad_id=0, bos_id=1)  # 0 is not in the prompt
        assert torch.equal(logits, gpt2_style(ids).logits)
        gpt2_style.config = replace(gpt2_style.config, pad_id=2, bos_id=1, eos_id=3)  # 2 is padding: masked
        assert not torch.allclose(logits, gpt2_style(ids).logits)


def test_gpt2_init_is_normal_002_with_residual_projections_scaled():
    """Oracle: GPT-2's initialisation (init="gpt2", as nanoGPT does it): every matrix N(0, 0.02), biases 0, and the
    projections that add into the residual stream (attention out_proj, FFN w_2) N(0, 0.02 / sqrt(N)) with N the
    number of them (2 n_layers for a decoder-only model); the default stays xavier_uniform (bound sqrt(6 / fan sum))."""
    cfg = dict(arch="decoder-only", vocab_size=300, d_model=128, n_heads=4, n_decoder_layers=4, d_ff=512,
               pos_encoding="learned", norm_first=True)
    torch.manual_seed(0)
    model = Transformer(TransformerConfig(init="gpt2", **cfg))
    for name, p in model.named_parameters():
        if name.endswith(("out_proj.weight", "ffn.w_2.weight")):
            assert p.std().item() == pytest.approx(0.02 / 8 ** 0.5, rel=0.05), name
        elif p.dim() > 1:
            assert p.std().item() == pytest.approx(0.02, rel=0.05), name
        elif name.endswith("bias"):
            assert torch.count_nonzero(p) == 0, name
        else:
            assert torch.equal(p, torch.ones_like(p)), name  # LayerNorm weights keep 1
    assert model.lm_head.weight is model.embed.weight  # still tied
    torch.manual_seed(0)
    xavier = Transformer(TransformerConfig(**cfg)).decoder[0].ffn.w_2.weight  # (d_model, d_ff)
    bound = (6 / (128 + 512)) ** 0.5
    assert xavier.abs().max().item() <= bound and xavier.std().item() == pytest.approx(bound / 3 ** 0.5, rel=0.05)


def test_gpt2_init_counts_every_residual_projection_of_an_encoder_decoder():
    """Invariant: in an encoder-decoder model N counts all residual projections: 2 per encoder layer, 3 per decoder
    layer (self-attention, cross-attention, FFN), so N = 2*3 + 3*3 = 15 here."""
    torch.manual_seed(0)
    model = Transformer(TransformerConfig(vocab_size=50, d_model=256, n_heads=4, n_encoder_layers=3,
                                          n_decoder_layers=3, d_ff=256, init="gpt2"))
    projections = [p for n, p in model.named_parameters() if n.endswith(("out_proj.weight", "ffn.w_2.weight"))]
    assert len(projections) == 15
    assert torch.cat([p.flatten() for p in projections]).std().item() == pytest.approx(0.02 / 15 ** 0.5, rel=0.03)


def test_unknown_init_is_a_value_error_naming_the_field():
    with pytest.raises(ValueError, match=r"^init\b"):
        TransformerConfig(init="kaiming")
