"""Named points (transformer/points.py): reads against the weights and hand computations, writes against a
hand-written forward with the tensor substituted, patching the whole residual stream, isolation between threads,
gradients, and the names themselves."""
from __future__ import annotations

import math
import re
import threading

import pytest
import torch

import transformer.attention as attention
from transformer import points as points_module
from transformer.heads import AttentionKind
from transformer.points import points
from tests.conftest import seeded_model, tiny_config

CONFIGS = {
    "encoder-decoder": tiny_config(),
    "decoder-only GQA RoPE": tiny_config("decoder-only", n_kv_heads=2, pos_encoding="rope", norm_first=True),
    "decoder-only ALiBi": tiny_config("decoder-only", pos_encoding="alibi"),
    "decoder-only MLA": tiny_config("decoder-only", attention="mla", kv_latent_dim=8),
}
SRC, TGT = torch.tensor([[5, 6, 7, 8, 9, 3]]), torch.tensor([[1, 9, 8, 7, 6]])
TOKENS = torch.tensor([[5, 6, 7, 8, 9, 10, 11, 5, 6, 7]])


def run(model, *args, **kw):
    return model(*args, **kw) if model.config.is_encoder_decoder else model(args[0], **kw)


def inputs(model):
    return (SRC, TGT) if model.config.is_encoder_decoder else (TOKENS,)


@pytest.mark.parametrize("name", list(CONFIGS))
@torch.no_grad()
def test_reading_every_pattern_equals_the_attention_maps_and_softmax_of_q_k(name):
    """Oracle: the `pattern` points read with a predicate equal return_attention=True's maps (bitwise), and each one
    equals softmax(q k^T / sqrt(d_k) + bias) from the same layer's `q` and `k` points with the kind's mask, by hand
    (ALiBi's bias from the module's position; GQA's key heads shared by H/G query heads)."""
    model = seeded_model(CONFIGS[name])
    maps = run(model, *inputs(model), return_attention=True).attention
    with points(read=lambda n: n.endswith((".pattern", ".q", ".k"))) as seen:
        run(model, *inputs(model))
    for kind in AttentionKind.of(model.config):
        for i, weights in enumerate(getattr(maps, kind.field)):
            assert torch.equal(seen[kind.point(i, "pattern")], weights)
            q, k = seen[kind.point(i, "q")], seen[kind.point(i, "k")]  # (1, H, T, d), (1, G, S, d)
            k = k.repeat_interleave(q.size(1) // k.size(1), dim=1)  # (1, H, S, d)
            scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (1, H, T, S)
            bias = attention.relative_bias(kind.modules(model)[i].position, q.size(2), k.size(2))
            scores = scores if bias is None else scores + bias
            if kind.causal:
                scores = scores.masked_fill(~attention.causal_mask(q.size(2), k.size(2)), float("-inf"))
            torch.testing.assert_close(weights, scores.softmax(-1), atol=1e-6, rtol=0)


@pytest.mark.parametrize("name", list(CONFIGS))
@torch.no_grad()
def test_no_block_is_the_fused_path_and_reads_change_nothing(name, monkeypatch):
    """Invariant: with no block active the explicit attention (our scaled_dot_product_attention) never runs (the
    fused kernel does), and the logits are bitwise those of a run inside an empty block and of a run reading every
    residual point; reading the patterns (the explicit path) gives the same logits to 1e-5."""
    model = seeded_model(CONFIGS[name])
    calls = []
    explicit = attention.scaled_dot_product_attention
    monkeypatch.setattr(attention, "scaled_dot_product_attention", lambda *a, **k: calls.append(1) or explicit(*a, **k))
    plain = run(model, *inputs(model)).logits
    assert not calls
    with points():
        assert torch.equal(run(model, *inputs(model)).logits, plain)
    with points(read=lambda n: "resid" in n) as seen:
        assert torch.equal(run(model, *inputs(model)).logits, plain)
    assert seen and not calls
    with points(read=lambda n: n.endswith("pattern")):
        torch.testing.assert_close(run(model, *inputs(model)).logits, plain, atol=1e-5, rtol=0)
    assert calls


@torch.no_grad()
def test_writing_one_heads_z_at_one_position_equals_a_hand_written_forward():
    """Oracle: a hand-written forward of a pre-norm decoder-only model whose layer 1 attention is computed by hand
    (W^Q, W^K, W^V, causal softmax, per-head outputs), with head 2's output at position 4 replaced by a given vector
    before W^O, then the rest of the model called as it is."""
    model = seeded_model(tiny_config("decoder-only", norm_first=True, attention_bias=True))
    new = torch.randn(model.config.d_k)

    def substitute(z):  # (B, T, H, d_k)
        z = z.clone()
        z[0, 4, 2] = new
        return z

    with points(write={"decoder.1.self_attn.z": substitute}):
        patched = model(TOKENS).logits
    layer, T, H, d_k = model.decoder[1], TOKENS.size(1), model.config.n_heads, model.config.d_k
    with points(read=["decoder.1.resid_pre"]) as seen:
        model(TOKENS)
    x = seen["decoder.1.resid_pre"][0]  # (T, d_model)
    h = layer.sublayers[0].norm(x)
    attn = layer.self_attn
    q, k, v = (h @ w + b for w, b in zip((attn.W_Q, attn.W_K, attn.W_V), attn.in_proj.bias.split(attn.sizes)))
    z = torch.empty(T, H, d_k)
    for head in range(H):
        cols = slice(head * d_k, (head + 1) * d_k)
        scores = q[:, cols] @ k[:, cols].T / math.sqrt(d_k)  # (T, T)
        scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        z[:, head] = scores.softmax(-1) @ v[:, cols]
    z[4, 2] = new
    x = x + z.reshape(T, H * d_k) @ attn.W_O + attn.out_proj.bias
    x = layer.sublayers[1](x[None], layer.ffn)
    expected = model.lm_head(model.decoder_norm(x))
    torch.testing.assert_close(patched, expected, atol=1e-5, rtol=0)
    assert (patched - model(TOKENS).logits).abs().max() > 1e-3  # the write changed the output


@pytest.mark.parametrize("name", [n for n in CONFIGS if "decoder-only" in n])
@torch.no_grad()
def test_patching_a_layers_whole_residual_stream_gives_the_clean_run_exactly(name):
    """Invariant: writing the clean run's residual stream at every position of a layer (entering layer 1) into a
    corrupted run of the same length gives the clean run's logits bitwise; writing the corrupted run's own residual
    changes nothing (bitwise)."""
    model = seeded_model(CONFIGS[name])
    point = "decoder.1.resid_pre"
    corrupted = TOKENS.clone()
    corrupted[0, :3] = torch.tensor([12, 13, 14])
    with points(read=[point]) as clean_seen:
        clean = model(TOKENS).logits
    with points(read=[point]) as corrupted_seen:
        corrupt = model(corrupted).logits
    assert not torch.equal(clean, corrupt)
    with points(write={point: lambda x: clean_seen[point]}):
        assert torch.equal(model(corrupted).logits, clean)
    with points(write={point: lambda x: corrupted_seen[point]}):
        assert torch.equal(model(corrupted).logits, corrupt)


@torch.no_grad()
def test_the_key_and_value_inputs_are_written_apart_from_the_query_input():
    """Oracle: in self-attention, writing `k_input` and `v_input` with another run's tensor gives the attention
    output of the module called with that tensor as key and value and this run's as query (the cross-attention
    form of the same module); q_input is left as it was."""
    model = seeded_model(tiny_config("decoder-only"))
    attn = "decoder.1.self_attn"
    other = TOKENS.flip(1)
    with points(read=[f"{attn}.k_input"]) as theirs:
        model(other)
    replace = {f"{attn}.k_input": lambda x: theirs[f"{attn}.k_input"], f"{attn}.v_input": lambda x: theirs[f"{attn}.k_input"]}
    with points(read=[f"{attn}.q_input", f"{attn}.out"], write=replace) as seen:
        model(TOKENS)
    key = theirs[f"{attn}.k_input"]
    expected = model.decoder[1].self_attn(seen[f"{attn}.q_input"], key, key, is_causal=True)
    torch.testing.assert_close(seen[f"{attn}.out"], expected, atol=1e-6, rtol=0)


def test_gradients_flow_through_writes_and_reads():
    """Oracle: autograd. A write z + delta (delta a leaf that requires grad) passes the loss's gradient to delta, and
    the read of the same point, with retain_grad, holds that same gradient."""
    model = seeded_model(tiny_config("decoder-only"))
    delta = torch.zeros(1, TOKENS.size(1), model.config.n_heads, model.config.d_k, requires_grad=True)
    name = "decoder.0.self_attn.z"
    with points(read=[name], write={name: lambda z: z + delta}) as seen:
        loss = model(TOKENS).logits[0, -1, 7]
    seen[name].retain_grad()
    loss.backward()
    assert delta.grad is not None and delta.grad.abs().sum() > 0
    torch.testing.assert_close(seen[name].grad, delta.grad)


@torch.no_grad()
def test_two_threads_writing_on_one_shared_model_do_not_see_each_others_blocks():
    """Invariant: two threads run one model at the same time (a barrier inside both writes holds them in their
    forward passes together), each with its own write and read; each gets the logits it gets alone, and its
    `seen` holds only its own names."""
    model = seeded_model(tiny_config("decoder-only"))
    writes = {"a": ("decoder.0.self_attn.z", lambda z: z * 0), "b": ("decoder.1.ffn.out", lambda x: x * 2)}
    alone = {}
    for who, (name, change) in writes.items():
        with points(write={name: change}):
            alone[who] = model(TOKENS).logits
    assert not torch.equal(alone["a"], alone["b"])
    barrier, results = threading.Barrier(2, timeout=10), {}

    def work(who):
        name, change = writes[who]
        for _ in range(5):
            with points(read=[name], write={name: lambda x: (barrier.wait(), change(x))[1]}) as seen:
                results.setdefault(who, []).append((model(TOKENS).logits, set(seen)))

    threads = [threading.Thread(target=work, args=(who,)) for who in writes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for who, (name, _) in writes.items():
        assert len(results[who]) == 5
        for logits, seen in results[who]:
            assert torch.equal(logits, alone[who]) and seen == {name}



@pytest.mark.parametrize("name", list(CONFIGS))
@torch.no_grad()
def test_stopping_at_a_point_reads_it_bitwise_and_visits_nothing_after_it(name):
    """Oracle: a full run. Stopped at a point of each attention layer and stream, a run reads there the full run's
    tensor, bitwise, on the fused path (reading that point only, as the features section does) and on the explicit
    one; an outer block reading everything sees the full run's points in its order up to that one and none after
    (later layers, the final norm, so no unembedding); the block ends quietly at the model's call (nothing after it
    in the block runs)."""
    model = seeded_model(CONFIGS[name])
    with points(read=lambda n: True) as full:
        run(model, *inputs(model))
    order = list(full)  # the points in the order the forward pass visits them
    stops = [n for n in order if n.endswith((".z", ".resid_post", ".q_input"))]
    assert len(stops) >= 6 and "final" in order
    for stop in stops:
        with points(read=[stop]) as whole:  # reading no pattern: fused attention
            run(model, *inputs(model))
        with points(read=[stop], stop_at=stop) as stopped:
            run(model, *inputs(model))
        assert torch.equal(stopped[stop], whole[stop]), stop
        after_call = []
        with points(read=lambda n: True) as outer:
            with points(read=[stop], stop_at=stop) as seen:
                run(model, *inputs(model))
                after_call.append(1)
        assert torch.equal(seen[stop], full[stop]) and not after_call, stop
        assert list(outer) == order[:order.index(stop) + 1], stop
        assert all(torch.equal(outer[n], full[n]) for n in outer), stop


@torch.no_grad()
def test_an_outer_blocks_stop_ends_the_outer_block_through_the_inner_one():
    """Invariant: a stop belongs to the block that asked for it: an inner block (the model's own, for
    return_attention) lets it through, the outer one ends, and a model run after the blocks runs whole."""
    model = seeded_model(tiny_config("decoder-only"))
    stop, reached = "decoder.0.self_attn.z", []
    with points(stop_at=stop):
        with points(read=["decoder.1.resid_post"]) as inner:
            model(TOKENS, return_attention=True)
            reached.append("inner")
        reached.append("outer")
    assert reached == [] and inner == {}
    assert model(TOKENS).logits.shape == (1, TOKENS.size(1), model.config.vocab_size)


def test_a_stop_at_an_unknown_point_is_refused_by_name():
    """Invariant: stop_at is checked against the model's names like reads and writes."""
    model = seeded_model(tiny_config("decoder-only"))
    with pytest.raises(ValueError, match=r"decoder\.9\.self_attn\.z"):
        with points(stop_at="decoder.9.self_attn.z"):
            model(TOKENS)

def test_unknown_names_raise_naming_them():
    """Invariant: a block listing names the model does not have stops the forward pass with a ValueError naming
    each of them (reads and writes), and a cross-attention name is unknown to a decoder-only model."""
    model = seeded_model(tiny_config("decoder-only"))
    with pytest.raises(ValueError, match=r"decoder\.0\.cross_attn\.z, decoder\.7\.resid_post"):
        with points(read=["decoder.7.resid_post", "decoder.0.resid_post"], write={"decoder.0.cross_attn.z": abs}):
            model(TOKENS)
    with pytest.raises(ValueError, match="nonsense"):
        with points(read=["nonsense"]):
            model.decode(TOKENS)


def test_a_write_of_another_shape_is_refused():
    """Invariant: a write must keep the point's shape; the error names the point and both shapes."""
    model = seeded_model(tiny_config("decoder-only"))
    with pytest.raises(ValueError, match=r"decoder\.0\.resid_mid .*\(1, 10, 32\)"):
        with points(write={"decoder.0.resid_mid": lambda x: x[:, :3]}):
            model(TOKENS)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_every_point_name_is_documented_with_its_shape(name):
    """Invariant: each point a model has, with its layer index written {i} and its stack and module written as the
    docstring writes them, has a line of transformer/points.py's docstring that gives a shape."""
    doc = points_module.__doc__
    lines = [line for line in doc.splitlines() if "(B," in line]
    for point in seeded_model(CONFIGS[name]).point_names():
        last = point.rsplit(".", 1)[-1]
        assert any(re.search(rf"[{{}}.\s]{last}\b", line) or line.lstrip().startswith(last) for line in lines), point
