"""Attention: our MultiHeadAttention against torch.nn.MultiheadAttention, masks, GQA/MQA and the KV cache."""
from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from tests.conftest import copy_mha_from_torch as copy_from_torch, with_weights
from transformer.attention import KVCache, MultiHeadAttention, causal_mask, padding_mask, scaled_dot_product_attention

D, H = 32, 4


@pytest.fixture(params=[True, False], ids=["bias", "no-bias"])
def pair(request):
    """Ours and torch's, with biases on the projections (GPT-2, torch's default) or without (the paper)."""
    torch.manual_seed(0)
    ref = nn.MultiheadAttention(D, H, batch_first=True, bias=request.param).eval()
    if request.param:
        with torch.no_grad():  # torch initialises the biases to 0; random ones make the comparison stricter
            ref.in_proj_bias.normal_()
            ref.out_proj.bias.normal_()
    ours = MultiHeadAttention(D, H, bias=request.param).eval()
    copy_from_torch(ours, ref)
    return ours, ref


@pytest.mark.parametrize("masks", ["none", "key_padding", "causal", "both"])
@pytest.mark.parametrize("cross", [False, True])
def test_matches_torch_multihead_attention(pair, masks, cross):
    """Oracle: torch.nn.MultiheadAttention with the same weights; outputs and per-head weights agree to 1e-5.

    Torch's masks are True = masked; ours True = may attend. The explicit path (the `pattern` point read) and the
    fused path (no point read) must both agree with torch.
    """
    ours, ref = pair
    g = torch.Generator().manual_seed(1)
    B, T = 3, 6
    S = 9 if cross else T
    if cross and masks in ("causal", "both"):
        S = T  # a causal mask needs the keys to be the queries' positions
    query = torch.randn(B, T, D, generator=g)
    key = query if not cross else torch.randn(B, S, D, generator=g)
    value = key if not cross else torch.randn(B, S, D, generator=g)
    lengths = torch.tensor([S, S - 2, 3])
    keep_key = torch.arange(S)[None, :] < lengths[:, None]  # (B, S), True at real keys
    keep_causal = torch.ones(T, S, dtype=torch.bool).tril()
    torch_kw, our_mask = {}, None
    if masks in ("key_padding", "both"):
        torch_kw["key_padding_mask"] = ~keep_key
        our_mask = keep_key[:, None, None, :]
    if masks in ("causal", "both"):
        torch_kw["attn_mask"] = ~keep_causal
        our_mask = keep_causal[None, None] if our_mask is None else our_mask & keep_causal[None, None]
    ref_out, ref_w = ref(query, key, value, need_weights=True, average_attn_weights=False, **torch_kw)
    with torch.no_grad():
        out, weights = with_weights(ours, query, key, value, our_mask)
        fused = ours(query, key, value, our_mask)
    torch.testing.assert_close(out, ref_out, atol=1e-5, rtol=0)
    torch.testing.assert_close(weights, ref_w, atol=1e-5, rtol=0)
    torch.testing.assert_close(fused, ref_out, atol=1e-5, rtol=0)


def test_is_causal_flag_equals_an_explicit_causal_mask(pair):
    """Invariant: is_causal=True gives the same output and weights as passing the lower-triangular mask."""
    ours, _ = pair
    x = torch.randn(2, 7, D, generator=torch.Generator().manual_seed(2))
    tril = torch.ones(7, 7, dtype=torch.bool).tril()[None, None]
    with torch.no_grad():
        (a, wa), (b, wb) = with_weights(ours, x, x, x, None, is_causal=True), with_weights(ours, x, x, x, tril)
        torch.testing.assert_close(a, b, atol=1e-6, rtol=0)
        torch.testing.assert_close(wa, wb, atol=0, rtol=0)
        torch.testing.assert_close(ours(x, x, x, None, is_causal=True), ours(x, x, x, tril), atol=1e-6, rtol=0)


def test_scaled_dot_product_attention_is_equation_1():
    """Oracle: softmax(q k^T / sqrt(d_k)) v computed element by element with math.exp for one small head."""
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(1, 1, n, 4, generator=g, dtype=torch.float64) for n in (2, 3, 3))
    out, weights = scaled_dot_product_attention(q, k, v)
    for t in range(2):
        scores = [sum(q[0, 0, t, i].item() * k[0, 0, s, i].item() for i in range(4)) / math.sqrt(4) for s in range(3)]
        exps = [math.exp(x) for x in scores]
        w = [e / sum(exps) for e in exps]
        for s in range(3):
            assert weights[0, 0, t, s].item() == pytest.approx(w[s], abs=1e-12)
        for i in range(4):
            assert out[0, 0, t, i].item() == pytest.approx(sum(w[s] * v[0, 0, s, i].item() for s in range(3)),
                                                           abs=1e-12)


def test_masked_weights_are_exactly_zero_and_fully_masked_rows_are_zero_not_nan():
    """Invariant: a masked key gets weight exactly 0; a row with nothing to attend to gives zeros, never NaN."""
    g = torch.Generator().manual_seed(4)
    q, k, v = (torch.randn(2, 2, 4, 8, generator=g) for _ in range(3))
    mask = torch.tensor([[True, True, False, False], [False, False, False, False]])[:, None, None, :]  # (2,1,1,4)
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    assert torch.all(weights[0, :, :, 2:] == 0)
    torch.testing.assert_close(weights[0].sum(-1), torch.ones(2, 4))
    assert torch.all(weights[1] == 0) and torch.all(out[1] == 0)
    assert not torch.isnan(out).any()


def test_mha_fully_masked_rows_give_no_nan_on_either_path(pair):
    """Invariant: a batch row whose keys are all masked gives a finite output on the fused and explicit paths,
    and both paths agree on it (attention contributes nothing, so the output is out_proj's bias, or 0 without)."""
    ours, _ = pair
    x = torch.randn(2, 5, D, generator=torch.Generator().manual_seed(5))
    mask = torch.tensor([[True] * 5, [False] * 5])[:, None, None, :]
    with torch.no_grad():
        explicit, _ = with_weights(ours, x, x, x, mask)
        fused = ours(x, x, x, mask)
    assert torch.isfinite(explicit).all() and torch.isfinite(fused).all()
    torch.testing.assert_close(fused, explicit, atol=1e-5, rtol=0)
    bias = ours.out_proj.bias.detach() if ours.out_proj.bias is not None else torch.zeros(D)
    torch.testing.assert_close(explicit[1], bias.expand(5, D))


@pytest.mark.parametrize("n_kv_heads", [2, 1])
@pytest.mark.parametrize("need_weights", [True, False])
def test_grouped_query_attention_equals_mha_with_shared_kv_heads(n_kv_heads, need_weights):
    """Oracle: GQA/MQA equals plain MHA whose key/value projections repeat each kv head for its group of
    n_heads / n_kv_heads query heads (Ainslie et al. 2023)."""
    torch.manual_seed(6)
    gqa = MultiHeadAttention(D, H, n_kv_heads, bias=True).eval()
    mha = MultiHeadAttention(D, H, bias=True).eval()
    d_k, group = D // H, H // n_kv_heads
    with torch.no_grad():
        mha.out_proj.load_state_dict(gqa.out_proj.state_dict())
        src_w, dst_w = gqa.projection_blocks(), mha.projection_blocks()  # W^Q, W^K, W^V (rows of in_proj)
        src_b, dst_b = gqa.in_proj.bias.split(gqa.sizes), mha.in_proj.bias.split(mha.sizes)
        dst_w[0].copy_(src_w[0])
        dst_b[0].copy_(src_b[0])
        for i in (1, 2):  # W^K and W^V: each kv head repeated for its group of query heads
            dst_w[i].copy_(src_w[i].view(n_kv_heads, d_k, D).repeat_interleave(group, 0).reshape(D, D))
            dst_b[i].copy_(src_b[i].view(n_kv_heads, d_k).repeat_interleave(group, 0).reshape(D))
    g = torch.Generator().manual_seed(7)
    x, mem = torch.randn(2, 5, D, generator=g), torch.randn(2, 8, D, generator=g)
    mask = (torch.arange(8)[None, :] < torch.tensor([[8], [4]]))[:, None, None, :]
    with torch.no_grad():
        for args, kw in (((x, x, x, None), {"is_causal": True}), ((x, mem, mem, mask), {})):
            if need_weights:
                (a, wa), (b, wb) = with_weights(gqa, *args, **kw), with_weights(mha, *args, **kw)
                torch.testing.assert_close(wa, wb, atol=1e-6, rtol=0)
            else:
                a, b = gqa(*args, **kw), mha(*args, **kw)
            torch.testing.assert_close(a, b, atol=1e-5, rtol=0)


def test_causal_mask_with_cached_prefix_by_hand():
    """Oracle: hand-written matrix. With S=5 keys and the last T=2 queries, query 0 (position 3) sees keys 0-3
    and query 1 (position 4) sees keys 0-4."""
    expected = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)
    assert torch.equal(causal_mask(2, 5)[0, 0], expected)
    assert torch.equal(causal_mask(3)[0, 0], torch.tensor([[1, 0, 0], [1, 1, 0], [1, 1, 1]], dtype=torch.bool))


def test_padding_mask_is_true_at_real_tokens():
    """Oracle: hand-written mask for ids [[5, 6, 0], [0, 7, 0]] with pad_id 0 (True = may attend)."""
    mask = padding_mask(torch.tensor([[5, 6, 0], [0, 7, 0]]), pad_id=0)
    assert torch.equal(mask[:, 0, 0], torch.tensor([[True, True, False], [False, True, False]]))


@pytest.mark.parametrize("n_kv_heads", [4, 2, 1])
def test_incremental_decoding_with_kv_cache_equals_full_causal_attention(n_kv_heads):
    """Invariant: feeding positions one at a time through a KVCache gives the outputs of one causal pass; the cache
    holds only the n_kv_heads key/value heads, so its size is 2 * B * G * L * d_k * 4 bytes."""
    torch.manual_seed(8)
    mha = MultiHeadAttention(D, H, n_kv_heads).eval()
    x = torch.randn(2, 6, D, generator=torch.Generator().manual_seed(9))
    cache = KVCache()
    with torch.no_grad():
        full = mha(x, x, x, is_causal=True)
        prefix = mha(x[:, :2], x[:, :2], x[:, :2], is_causal=True, cache=cache)  # a 2-token prompt first
        steps = [prefix] + [mha(x[:, t:t + 1], x[:, t:t + 1], x[:, t:t + 1], is_causal=True, cache=cache)
                            for t in range(2, 6)]
    torch.testing.assert_close(torch.cat(steps, 1), full, atol=1e-5, rtol=0)
    assert len(cache) == 6 and cache.k.size(1) == n_kv_heads
    assert cache.nbytes() == 2 * 2 * n_kv_heads * 6 * (D // H) * 4


def test_kv_cache_reorder_selects_batch_rows():
    """Invariant: reorder(index) makes row i of the cache equal old row index[i], for keys and values."""
    k, v = torch.arange(24.).view(3, 1, 2, 4), -torch.arange(24.).view(3, 1, 2, 4)
    cache = KVCache(k.clone(), v.clone())
    cache.reorder(torch.tensor([2, 2, 0]))
    assert torch.equal(cache.k, k[[2, 2, 0]]) and torch.equal(cache.v, v[[2, 2, 0]])


def test_mha_rejects_heads_that_do_not_divide():
    """Invariant: a d_model/n_heads/n_kv_heads combination that does not divide evenly is a ValueError."""
    with pytest.raises(ValueError, match="do not divide"):
        MultiHeadAttention(30, 4)
    with pytest.raises(ValueError, match="do not divide"):
        MultiHeadAttention(32, 4, 3)


def test_kv_cache_grows_by_doubling_and_writes_only_new_positions():
    """Invariant: appending 300 positions one at a time reallocates the storage only when it is full, doubling it
    (64, 128, 256, 512: 4 allocations, not 300 copies), and what it returns equals concatenating every append."""
    cache, seen, allocations, pointer = KVCache(), [], 0, None
    for t in range(300):
        k = torch.full((1, 2, 1, 4), float(t))
        seen.append(k)
        keys, values = cache.append(k, -k)
        if cache._storage[0].data_ptr() != pointer:
            allocations, pointer = allocations + 1, cache._storage[0].data_ptr()
    assert allocations == 4 and cache._storage[0].size(2) == 512
    assert torch.equal(keys, torch.cat(seen, dim=2)) and torch.equal(values, -torch.cat(seen, dim=2))
    assert len(cache) == 300 and cache.nbytes() == 2 * 300 * 2 * 4 * 4  # the filled part, not the reserve


def test_attention_returns_its_output_and_its_weights_are_a_point():
    """Invariant (issue 41, item 2): one way to see the weights, the `pattern` point. MultiHeadAttention and MLA
    return their output alone (there is no need_weights return path), `Transformer.encode` gives (memory, source
    mask) and `decode` the logits; the weights read at the point are rows that sum to 1 and equal what
    `return_attention` collects."""
    from tests.conftest import seeded_model, tiny_config
    from transformer.latent_attention import MultiHeadLatentAttention

    x = torch.randn(2, 5, D, generator=torch.Generator().manual_seed(10))
    for module in (MultiHeadAttention(D, H).eval(), MultiHeadLatentAttention(D, H, 8).eval()):
        out = module(x, x, x, is_causal=True)
        assert isinstance(out, torch.Tensor) and out.shape == (2, 5, D)
        same, weights = with_weights(module, x, x, x, is_causal=True)
        torch.testing.assert_close(same, out, atol=1e-5, rtol=0)
        torch.testing.assert_close(weights.sum(-1), torch.ones(2, H, 5))
    model = seeded_model(tiny_config("encoder-decoder"))
    src, tgt = torch.tensor([[3, 4, 5, 2]]), torch.tensor([[1, 6, 7]])
    with torch.no_grad():
        memory, mask = model.encode(src)
        logits = model.decode(tgt, memory, mask)
        out = model(src, tgt, return_attention=True)
    torch.testing.assert_close(logits, out.logits, atol=1e-5, rtol=0)
    assert [len(maps) for maps in (out.attention.encoder_self, out.attention.decoder_self, out.attention.cross)] \
        == [model.config.n_encoder_layers, model.config.n_decoder_layers, model.config.n_decoder_layers]
