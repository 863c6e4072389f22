"""The probe owns how an input is encoded and cut, which context a decoding step read, and the attention record
(kind, axis tokens, mask, text positions). Each test checks one of those rules against what the model and the
decoder actually do."""
from __future__ import annotations

import pytest
import torch

from tests.conftest import seeded_model, tiny_config
from transformer.interpretability.analysis import anti_diagonal
from transformer.generate import context_start, generate
from transformer.interpretability.probe import encode_input, record_attention, record_ids, record_step, step_context
from transformer.points import points
from transformer.tokenization import CharTokenizer

TOK = CharTokenizer("abcdefghijklm")  # 4 special tokens + 13 letters = 17 = tiny_config's vocab_size


def lm(max_len=8, seed=0):
    return seeded_model(tiny_config("decoder-only", max_len=max_len), seed)


def test_encoder_source_keeps_its_first_tokens_and_ends_with_eos():
    """Rule: an encoder reads text + </s>, cut to its first max_len - 1 text tokens; the message gives both true
    lengths (regression: it said "cut to 64" when the model read 21)."""
    model = seeded_model(tiny_config(max_len=6))
    enc = encode_input(model, TOK, "abcdefghij")
    assert enc.ids == TOK.encode("abcde") + [2] and enc.truncated
    assert enc.cut_message() == "The input has 10 tokens; this model reads at most 5, so it was cut to its first 5."
    short = encode_input(model, TOK, "abc", max_tokens=64)
    assert short.ids == TOK.encode("abc") + [2] and not short.truncated and short.cut_message() == ""
    assert encode_input(model, TOK, "abcdefghij", max_tokens=3).ids == TOK.encode("abc") + [2]


def test_decoder_only_prompt_keeps_its_last_tokens():
    """Rule: a decoder-only model keeps the most recent max_len tokens (the next token depends on them)."""
    enc = encode_input(lm(max_len=8), TOK, "abcdefghijkl")
    assert enc.ids == TOK.encode("efghijkl") and "last 8" in enc.cut_message()


def test_empty_input_is_refused():
    with pytest.raises(ValueError, match="empty"):
        encode_input(lm(), TOK, "")


def _spy_contexts(model, monkeypatch) -> list[list[int]]:
    """Record the decoder input of every uncached decoding call."""
    seen, real = [], model.decode

    def spy(tgt, *args, **kwargs):
        seen.append(tgt[0].tolist())
        return real(tgt, *args, **kwargs)

    monkeypatch.setattr(model, "decode", spy)
    return seen


@pytest.mark.parametrize("prompt_len, max_len, n_new", [(3, 8, 20), (8, 8, 12), (5, 7, 30)])
def test_step_context_is_what_the_decoder_read(monkeypatch, prompt_len, max_len, n_new):
    """Oracle: `step_context` gives, for every step, exactly the tokens `generate` fed the model at that step,
    also after the context filled up and dropped its oldest tokens (regression: the Generate tab rebuilt
    positions by hand, ignored the drop rule, and showed the wrong keys or crashed)."""
    model = lm(max_len)
    prompt = TOK.encode("abcdefghijklm"[:prompt_len])
    seen = _spy_contexts(model, monkeypatch)
    out = [s.token_id for s in generate(model, prompt, n_new, use_cache=False)]
    assert len(out) == n_new
    for k in range(n_new):
        context, start = step_context(model, prompt, out, k)
        assert context == seen[k], f"step {k}"
        assert start == context_start(prompt_len + k, max_len)


def test_step_attention_is_the_attention_of_the_forward_pass_that_step_made(monkeypatch):
    """Oracle: the pattern `record_step` returns for step k equals the attention weights of the very forward pass
    the decoder made at step k (read at its `pattern` point during each decoding call), and its key tokens are
    that pass's input tokens."""
    model = lm(max_len=8)
    prompt = TOK.encode("abcdef")
    captured, real = [], model.decode

    last = f"decoder.{model.config.n_decoder_layers - 1}.self_attn.pattern"

    def spy(tgt, *args, **kwargs):
        with points(read=[last]) as seen:
            out = real(tgt, *args, **kwargs)
        captured.append((tgt[0].tolist(), seen[last][0, :, -1].clone()))  # (H, S): last query, last layer
        return out

    monkeypatch.setattr(model, "decode", spy)
    out = [s.token_id for s in generate(model, prompt, 15, use_cache=False)]
    monkeypatch.undo()
    for k in range(len(out)):
        pattern, query = record_step(model, TOK, prompt, out, k)
        context, weights = captured[k]
        assert pattern.key_tokens == [TOK.id_to_token(i) for i in context]
        torch.testing.assert_close(pattern.weights[-1, :, query], weights, atol=1e-6, rtol=0)


def test_encoder_decoder_step_attention_is_its_cross_attention_row():
    """Oracle: for an encoder-decoder model, step k's pattern is cross-attention over the whole source, its query row
    is labelled by the token produced, and it equals the cross-attention row of a full forward pass."""
    model = seeded_model(tiny_config())
    src = TOK.encode("abcde") + [2]
    out = [s.token_id for s in generate(model, src, 6)]
    for k in range(len(out)):
        pattern, query = record_step(model, TOK, src, out, k)
        assert pattern.kind == "cross" and pattern.query_tokens[query] == TOK.id_to_token(out[k])
        with torch.no_grad():
            full = model(torch.tensor([src]), torch.tensor([[1] + out]), return_attention=True).attention.cross
        torch.testing.assert_close(pattern.weights[-1, :, query], full[-1][0, :, k], atol=1e-6, rtol=0)


def test_records_carry_kind_axis_tokens_mask_and_text_positions():
    """Invariant: every pattern says its kind; cross rows are labelled by the produced tokens (target + </s>) and
    keys by the source (+ </s>); decoder self-attention carries the causal mask and its masked weights are 0;
    text positions leave <s> and </s> out."""
    model = seeded_model(tiny_config())
    record = record_attention(model, TOK, "abc", "cba")
    assert record.kinds == ["encoder self", "decoder self", "cross"]
    cross, dec = record.patterns["cross"], record.patterns["decoder self"]
    assert cross.key_tokens == ["a", "b", "c", "</s>"] and cross.query_tokens == ["c", "b", "a", "</s>"]
    assert cross.query_text == [0, 1, 2] and cross.key_text == [0, 1, 2]
    assert dec.key_tokens == ["<s>", "c", "b", "a"] and dec.query_text == [1, 2, 3]
    assert torch.equal(dec.mask, torch.ones(4, 4, dtype=torch.bool).tril())
    assert dec.weights[..., ~dec.mask].abs().max() == 0
    assert all(p.kind == k for k, p in record.patterns.items())


def test_a_perfect_reversal_scores_one_and_eos_takes_no_part():
    """Regression (off by one): a head whose output letter i reads source letter m-1-i scored 0.12 because the
    score mirrored over S including </s>. On the text positions it scores 1.0."""
    weights = torch.zeros(1, 1, 4, 4)  # output c, b, a, </s> over source a, b, c, </s>
    weights[0, 0, [0, 1, 2, 3], [2, 1, 0, 3]] = 1.0
    assert anti_diagonal(weights[0, 0], [0, 1, 2], [0, 1, 2]) == 1.0
    assert anti_diagonal(weights[0, 0]) == 0.0  # the old definition, mirrored over every position: misses them all
    model = seeded_model(tiny_config())
    pattern = record_attention(model, TOK, "abc", "cba").patterns["cross"]
    pattern.weights = weights
    assert pattern.scores()["anti-diagonal"].item() == 1.0


def test_shipped_reverse_model_opens_on_an_anti_diagonal_head(shipped):
    """The class demo: with the default input, the reverse model's best anti-diagonal head scores >= 0.9 under
    the one definition the overview, the card and the Train tab use."""
    model, tok, _ = shipped("reverse")
    scores = record_attention(model, tok, "attention").patterns["cross"].scores()["anti-diagonal"]
    assert scores.max() >= 0.9


def test_sampled_token_is_always_in_its_top_choices():
    """Regression: a token sampled outside the five most likely was missing from its own "top choices" chart."""
    model = lm(max_len=24)
    for seed in range(5):
        for step in generate(model, TOK.encode("abc"), 15, strategy="sample", temperature=2.0, seed=seed):
            assert step.token_id in [t for t, _ in step.top]
            assert dict(step.top)[step.token_id] == pytest.approx(step.prob)


def test_record_of_a_decoder_only_model_is_self_attention_over_its_tokens():
    model = lm(max_len=8)
    record = record_ids(model, TOK, TOK.encode("abcd"))
    assert record.kinds == ["decoder self"]
    pattern = record.patterns["decoder self"]
    assert pattern.query_tokens == pattern.key_tokens == list("abcd")
    torch.testing.assert_close(pattern.weights.sum(-1), torch.ones(pattern.weights.shape[:3]), atol=1e-5, rtol=0)


@pytest.mark.parametrize("overrides", [{}, dict(n_kv_heads=2), dict(pos_encoding="alibi"),
                                       dict(pos_encoding="rope"), dict(attention="mla", pos_encoding="rope")],
                         ids=["MHA", "GQA", "ALiBi", "RoPE", "MLA+RoPE"])
@pytest.mark.parametrize("arch", ["encoder-decoder", "decoder-only"])
def test_qk_step_weights_equal_the_heatmap_row_for_every_variant(arch, overrides):
    """Oracle: the Q·K step's softmax of (q·k / sqrt(d) [+ ALiBi's bias]) is the record's heatmap row, for every
    head and query of every kind, whatever the attention and the positions (an ALiBi step carries -m_h |i - j|)."""
    from transformer.positions.alibi import alibi_slopes
    from transformer.interpretability.probe import qk_step, record_inside

    model = seeded_model(tiny_config(arch, **overrides), seed=2)
    record = record_ids(model, TOK, TOK.encode("abcabc") + [2], TOK.encode("cba") if arch == "encoder-decoder"
                        else None)
    inside = record_inside(model, record)
    for kind, pattern in record.patterns.items():
        L, H = pattern.shape
        for layer in range(L):
            for head in range(H):
                T = len(pattern.query_tokens)
                for query in sorted({0, T // 2, T - 1}):
                    step = qk_step(model, record, inside, kind, layer, head, query)
                    torch.testing.assert_close(step.weights, pattern.weights[layer, head, query], atol=1e-5, rtol=0)
                    if overrides.get("pos_encoding") == "alibi" and kind != "cross":
                        S = len(pattern.key_tokens)
                        distance = (torch.arange(S) - (S - len(pattern.query_tokens) + query)).abs()
                        torch.testing.assert_close(step.bias, -alibi_slopes(H)[head] * distance.float())
                    else:
                        assert step.bias is None
