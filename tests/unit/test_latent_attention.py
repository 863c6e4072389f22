"""Multi-head latent attention (transformer/latent_attention.py) against multi-head attention, and its cache."""
from __future__ import annotations

import pytest
import torch

from tests.conftest import seeded_model, tiny_config, with_weights
from transformer.attention import KVCache, MultiHeadAttention
from transformer.generate import cache_bytes_per_token
from transformer.latent_attention import MultiHeadLatentAttention
from transformer.positions.rotary import RotaryEmbedding

D, H = 32, 4


def test_full_rank_latent_with_identity_down_projection_equals_mha():
    """Oracle: with d_c = d_model, W^DKV = I, W^UK = W^K and W^UV = W^V (and the same W^Q, W^O), MLA is MHA on
    the same weights: same output and the same weights for every head, with and without a causal mask."""
    torch.manual_seed(0)
    mha = MultiHeadAttention(D, H, bias=True).eval()
    mla = MultiHeadLatentAttention(D, H, kv_latent_dim=D, bias=True).eval()
    with torch.no_grad():
        mla.kv_down.weight.copy_(torch.eye(D))
        w_q, w_k, w_v = mha.projection_blocks()
        b_q, b_k, b_v = mha.in_proj.bias.split(mha.sizes)
        for ours, w, b in ((mla.q_proj, w_q, b_q), (mla.k_up, w_k, b_k), (mla.v_up, w_v, b_v),
                           (mla.out_proj, mha.out_proj.weight, mha.out_proj.bias)):
            ours.weight.copy_(w)
            ours.bias.copy_(b)
    x = torch.randn(2, 7, D, generator=torch.Generator().manual_seed(1))
    memory = torch.randn(2, 5, D, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        for q, kv, causal in ((x, x, True), (x, memory, False)):
            expected, expected_w = with_weights(mha, q, kv, kv, is_causal=causal)
            out, weights = with_weights(mla, q, kv, kv, is_causal=causal)
            torch.testing.assert_close(out, expected, atol=1e-5, rtol=0)
            torch.testing.assert_close(weights, expected_w, atol=1e-6, rtol=0)
            fused = mla(q, kv, kv, is_causal=causal)
            torch.testing.assert_close(fused, expected, atol=1e-5, rtol=0)


@pytest.mark.parametrize("rope", [False, True], ids=["latent", "latent+rope"])
def test_cache_keeps_only_the_latent_and_incremental_equals_full(rope):
    """Invariant: one position at a time through the cache gives the outputs of one causal pass, and the cache
    holds (d_c + d_R) numbers per position: the latent and the shared rotary key, no per-head keys or values."""
    torch.manual_seed(3)
    d_c, d_rope = 12, 4
    mla = MultiHeadLatentAttention(D, H, d_c, position=RotaryEmbedding(d_rope, 16) if rope else None).eval()
    x = torch.randn(2, 6, D, generator=torch.Generator().manual_seed(4))
    cache = KVCache()
    with torch.no_grad():
        full, full_w = with_weights(mla, x, x, x, is_causal=True)
        steps = [mla(x[:, :2], x[:, :2], x[:, :2], is_causal=True, cache=cache)]
        steps += [mla(x[:, t:t + 1], x[:, t:t + 1], x[:, t:t + 1], is_causal=True, cache=cache)
                  for t in range(2, 6)]
    torch.testing.assert_close(torch.cat(steps, 1), full, atol=1e-5, rtol=0)
    torch.testing.assert_close(full_w.sum(-1), torch.ones(2, H, 6))
    assert torch.equal(full_w[..., 1:].triu(), torch.zeros_like(full_w[..., 1:]))  # nothing after the query
    assert len(cache) == 6
    assert cache.nbytes() == 2 * 6 * (d_c + (d_rope if rope else 0)) * 4
    assert [t.shape[1] for t in cache.tensors()] == [1] * (2 if rope else 1)  # one vector, shared by the heads


@pytest.mark.parametrize("pos_encoding", ["sinusoidal", "rope"])
@pytest.mark.parametrize("arch", ["decoder-only", "encoder-decoder"])
def test_model_cache_bytes_per_token_match_the_formula(arch, pos_encoding):
    """Oracle: after decoding, the self-attention caches hold n x cache_bytes_per_token bytes, and that is
    layers x (kv_latent_dim + d_R) x 4 bytes; an MHA model of the same size needs 2 n_heads d_k x 4 per layer."""
    cfg = tiny_config(arch, attention="mla", kv_latent_dim=8, pos_encoding=pos_encoding)
    model = seeded_model(cfg, seed=5)
    d_rope = cfg.d_k // 2 if pos_encoding == "rope" else 0
    assert cache_bytes_per_token(cfg) == cfg.n_decoder_layers * (8 + d_rope) * 4
    assert cache_bytes_per_token(tiny_config(arch)) == cfg.n_decoder_layers * 2 * cfg.n_heads * cfg.d_k * 4
    prompt = [5, 6, 7, 2] if arch == "encoder-decoder" else [5, 6, 7]
    from transformer.generate import _Decoder  # the decoder state generate() runs on

    decoder = _Decoder(model, prompt, 1, use_cache=True)
    for _ in range(5):
        decoder.append(decoder.next_logits().argmax(-1))
    decoder.next_logits()
    n = len(decoder.cache[0][0])
    assert n == decoder.tokens.size(1)
    assert sum(self_cache.nbytes() for self_cache, _ in decoder.cache) == n * cache_bytes_per_token(cfg)


def test_mla_returns_every_heads_weights_for_the_heatmaps():
    """Behaviour: an MLA model records one weight matrix per head and layer, like MHA, rows summing to 1."""
    model = seeded_model(tiny_config("encoder-decoder", attention="mla"))
    out = model(torch.tensor([[5, 6, 7, 2]]), torch.tensor([[1, 8, 9]]), return_attention=True)
    for maps in (out.attention.encoder_self, out.attention.decoder_self, out.attention.cross):
        assert len(maps) == 2 and all(m.shape[1] == 4 for m in maps)
        for m in maps:
            torch.testing.assert_close(m.sum(-1), torch.ones_like(m.sum(-1)))


@pytest.mark.parametrize("kwargs, message", [
    (dict(attention="mla", n_kv_heads=2), "n_kv_heads"),
    (dict(attention="mla", kv_latent_dim=0), "kv_latent_dim"),
    (dict(kv_latent_dim=8), "kv_latent_dim"),
    (dict(attention="gqa"), "attention"),
    (dict(pos_encoding="rope", d_model=36, n_heads=4), "even"),
])
def test_bad_attention_settings_are_refused_naming_the_field(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tiny_config("decoder-only", **kwargs)


def test_default_latent_is_four_head_sizes():
    """DeepSeek-V2's ratio: d_c = 4 d_k when kv_latent_dim is not given."""
    cfg = tiny_config("decoder-only", attention="mla")
    assert cfg.kv_latent_dim == 4 * cfg.d_k
