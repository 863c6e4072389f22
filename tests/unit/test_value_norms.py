"""Value-weighted attention norms (Kobayashi et al. 2020) against a brute-force computation from each head's own
weights and inputs, and the identity that the weighted vectors add up to the attention output."""
from __future__ import annotations

import pytest
import torch

from transformer import Transformer, TransformerConfig
from transformer.heads import AttentionKind
from transformer.interpretability.value_norms import transformed_values, value_weighted_norms
from transformer.points import points
from transformer.pretrained import load_pretrained
from transformer.interpretability.probe import record_ids, record_inside, run_record
from transformer.tokenization import CharTokenizer

TOK = CharTokenizer.from_text("abcdefgh ")


def tiny(arch="decoder-only", n_kv_heads=None, pos="sinusoidal", attention="mha") -> Transformer:
    torch.manual_seed(0)
    cfg = TransformerConfig(arch=arch, vocab_size=TOK.vocab_size, d_model=16, n_heads=4, n_kv_heads=n_kv_heads,
                            d_ff=32, dropout=0.0, max_len=32, n_decoder_layers=2, pos_encoding=pos,
                            attention=attention, kv_latent_dim=8 if attention == "mla" else None,
                            attention_bias=True,
                            n_encoder_layers=2 if arch == "encoder-decoder" else 0)
    model = Transformer(cfg).eval()
    with torch.no_grad():  # non-zero biases, so the value bias's share is tested too
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.normal_(0, 0.3)
    return model


def _record(model):
    if model.config.is_encoder_decoder:
        return record_ids(model, TOK, TOK.encode("abcdef") + [2], TOK.encode("fedcba"))
    return record_ids(model, TOK, TOK.encode("abc defgh ab"))


def _inputs_and_outputs(model, record, kind):
    """Each attention module's (query, key) input and its output, caught by forward hooks (test only)."""
    seen = {}

    def keep(i):
        def hook(module, args, out):  # returns None: the output is left as it is
            seen.setdefault(i, (args[0], args[1], out))
        return hook

    hooks = [m.register_forward_hook(keep(i)) for i, m in enumerate(AttentionKind(kind).modules(model))]
    try:
        _record(model)
    finally:
        for h in hooks:
            h.remove()
    return [seen[i] for i in range(len(seen))]


CASES = [("decoder-only", None, "sinusoidal", "mha", "decoder self"), ("decoder-only", 2, "rope", "mha", "decoder self"),
         ("encoder-decoder", None, "sinusoidal", "mha", "cross"), ("encoder-decoder", None, "alibi", "mha", "encoder self")]


@pytest.mark.parametrize("arch,n_kv,pos,attention,kind", CASES)
@torch.no_grad()
def test_norms_equal_brute_force(arch, n_kv, pos, attention, kind):
    """Oracle: for every layer, head, query i and key j, ||alpha_ij ((x_j W_V^h + b_V^h) W_O^h)|| computed with
    loops from the value projection's own rows (GQA: the key/value head its group shares) and the output
    projection's columns of that head."""
    model = tiny(arch, n_kv, pos, attention)
    record = _record(model)
    result = value_weighted_norms(model, record, record_inside(model, record), kind)
    assert torch.allclose(result.weights, record.patterns[kind].weights, atol=1e-6)  # same forward pass
    H, d_k = model.config.n_heads, model.config.d_k
    G = model.config.n_kv_heads
    for layer, (module, (_, key_in, _)) in enumerate(zip(AttentionKind(kind).modules(model),
                                                         _inputs_and_outputs(model, record, kind))):
        x = key_in[0]  # (S, d_model): what the values are made from
        for h in range(H):
            g = h // (H // G)
            w_v = module.W_V[:, g * d_k:(g + 1) * d_k].t()  # (d_k, d_model): W_V^g as Linear rows
            b_v = module.in_proj.bias.split(module.sizes)[2][g * d_k:(g + 1) * d_k]
            w_o = module.out_proj.weight[:, h * d_k:(h + 1) * d_k]
            alpha = result.weights[layer, h]
            for i in range(alpha.size(0)):
                for j in range(alpha.size(1)):
                    f = w_o @ (w_v @ x[j] + b_v)  # (d_model,)
                    assert result.norms[layer, h, i, j] == pytest.approx(float((alpha[i, j] * f).norm()), abs=1e-5)


@pytest.mark.parametrize("arch,n_kv,pos,attention,kind", CASES + [("decoder-only", None, "sinusoidal", "mla",
                                                                   "decoder self")])
def test_weighted_vectors_sum_to_the_attention_output(arch, n_kv, pos, attention, kind):
    """Invariant: sum over heads h and keys j of alpha_ij f_h(x_j), plus the output projection's bias, is the
    attention sub-layer's output to 1e-5 (so each head's sum is its slice of it); MLA included."""
    model = tiny(arch, n_kv, pos, attention)
    record = _record(model)
    result = value_weighted_norms(model, record, record_inside(model, record), kind)
    values = [AttentionKind(kind).point(i, "v") for i in range(len(AttentionKind(kind).modules(model)))]
    with points(read=values) as seen:
        run_record(model, record.input_ids, record.target_ids)
    for layer, (module, (_, _, out)) in enumerate(zip(AttentionKind(kind).modules(model),
                                                      _inputs_and_outputs(model, record, kind))):
        v = seen[values[layer]][0]  # (G, S, d_v)
        f = transformed_values(module, v.repeat_interleave(model.config.n_heads // v.size(0), dim=0))  # (H, S, d_model)
        summed = torch.einsum("hts,hsd->td", result.weights[layer], f) + module.out_proj.bias
        assert (summed - out[0]).abs().max() < 1e-5
        norms = result.weights[layer][..., None] * f[:, None]  # (H, T, S, d_model)
        assert torch.allclose(norms.norm(dim=-1), result.norms[layer], atol=1e-5)


def test_shares_are_rows_that_sum_to_one():
    """Invariant: the display shares are the norms divided by their row's sum: each row with any weight sums to 1,
    masked cells stay 0."""
    model = tiny()
    record = _record(model)
    result = value_weighted_norms(model, record, record_inside(model, record), "decoder self")
    assert torch.allclose(result.shares.sum(-1), torch.ones(result.shares.shape[:-1]), atol=1e-5)
    assert (result.shares.triu(1) == 0).all()


def test_gpt2_shaped_model(tiny_gpt2_dir):
    """Invariant on a small random GPT-2 (its real weights are not on this machine): the weighted vectors add up to
    the attention output of every layer."""
    model, tok, _ = load_pretrained(tiny_gpt2_dir, device="cpu")
    record = record_ids(model, tok, tok.encode("Mary and John went to the store."))
    result = value_weighted_norms(model, record, record_inside(model, record), "decoder self")
    assert result.norms.shape == record.patterns["decoder self"].weights.shape
    assert torch.allclose(result.weights, record.patterns["decoder self"].weights, atol=1e-6)


def test_unknown_kind_is_refused():
    """Bad input: a kind the record does not have is a ValueError naming the kinds it has; an inside that is not
    the record's model's (no such point) is a ValueError saying what to pass."""
    model = tiny()
    record = _record(model)
    with pytest.raises(ValueError, match="decoder self"):
        value_weighted_norms(model, record, record_inside(model, record), "cross")
    with pytest.raises(ValueError, match="record_inside"):
        value_weighted_norms(model, record, {}, "decoder self")


@pytest.mark.parametrize("arch,n_kv,pos,attention,kind", CASES + [("decoder-only", None, "rope", "mla",
                                                                   "decoder self")])
def test_the_views_read_the_records_one_pass(arch, n_kv, pos, attention, kind):
    """Invariant (issue 41, item 2; its memory, issue 37): a record is one forward pass and holds its patterns only;
    its first view adds one pass (record_inside: the q, k and v of every attention layer), and the value-weighted
    norms and the Q.K step of every head and query then read that inside (counted with tests.call_counts.forwards:
    1, 1, then 0), with the numbers a second pass of the record (every pattern read) gives at those points."""
    from tests.call_counts import forwards
    from transformer.interpretability.probe import qk_step

    model = tiny(arch, n_kv, pos, attention)
    with forwards() as made:
        record = _record(model)
    kind_ = AttentionKind(kind)
    names = [kind_.point(i, n) for i in range(len(kind_.modules(model))) for n in ("q", "k", "v")]
    heads = [(layer, head, query) for layer, head in [(0, 0), (1, 3)]
             for query in range(len(record.patterns[kind].query_tokens))]
    with forwards() as first:
        inside = record_inside(model, record)
        norms = value_weighted_norms(model, record, inside, kind)
    with forwards() as later:
        again = value_weighted_norms(model, record, inside, kind)
        steps = [qk_step(model, record, inside, kind, *where) for where in heads]
    assert (made, first, later) == (["unpatched"], ["unpatched"], [])
    assert not [k for k, v in vars(record).items() if isinstance(v, dict) and k != "patterns"]  # no q, k, v kept
    with torch.no_grad(), points(read=names) as seen:  # the oracle: a second pass, reading the patterns too
        run_record(model, record.input_ids, record.target_ids, return_attention=True)
    for name in names:
        assert torch.equal(inside[name], seen[name][0])
    assert torch.equal(norms.weights, record.patterns[kind].weights) and torch.equal(again.norms, norms.norms)
    for step, (layer, head, query) in zip(steps, heads):  # equation 1 on one head: the heatmap's row to 1e-6
        assert torch.allclose(step.weights, record.patterns[kind].weights[layer, head, query], atol=1e-6)
