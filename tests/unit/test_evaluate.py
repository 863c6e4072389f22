"""Metrics of trained models, checked on models whose answers are known."""
from __future__ import annotations

import math

import pytest
import torch

from transformer.evaluate import bits, exact_match, nats_per_char, text_loss
from transformer.data import TASKS
from transformer.tokenization import UNK_ID, BPETokenizer, CharTokenizer


def test_nats_per_char_of_a_uniform_model_is_log_vocab(make_model):
    """Oracle: a model whose logits are all 0 predicts every character with probability 1/V, so it scores
    log V nats per character (log2 V bits) on any text."""
    model = make_model("decoder-only", tie_embeddings=False, max_len=16)
    with torch.no_grad():
        model.lm_head.weight.zero_()
    tok = CharTokenizer("abcdefghijklm")
    text = "abcabmlkjigfedc" * 10
    nats = nats_per_char(model, tok, text, block_size=16)
    assert nats == pytest.approx(math.log(17), abs=1e-5)
    assert bits(nats) == pytest.approx(math.log2(17), abs=1e-5)


def test_nats_per_char_equals_cross_entropy_computed_by_hand(make_model):
    """Oracle: the mean next-token cross-entropy over consecutive block_size windows, computed with the model's
    logits and math.log, divided by the characters covered (one token per character here)."""
    model = make_model("decoder-only", max_len=8)
    tok = CharTokenizer("abcdefghijklm")
    text = "abcdefghijklmmlkjihgfedcba"
    ids = tok.encode(text)
    total, covered = 0.0, 0
    for start in range(0, (len(ids) - 1) // 8 * 8, 8):
        x = torch.tensor([ids[start: start + 8]])
        with torch.no_grad():
            logp = model(x).logits[0].log_softmax(-1)
        total -= sum(float(logp[t, ids[start + t + 1]]) for t in range(8))
        covered += 8
    assert nats_per_char(model, tok, text, block_size=8) == pytest.approx(total / covered, rel=1e-5)


def test_nats_per_char_counts_an_unknown_character_as_one_character(make_model):
    """Invariant: <unk> stands for one character of the text, so replacing known characters by unknown ones keeps
    the character count (the divisor) unchanged: a uniform model still scores exactly log V."""
    model = make_model("decoder-only", tie_embeddings=False, max_len=16)
    with torch.no_grad():
        model.lm_head.weight.zero_()
    tok = CharTokenizer("abcdefghijklm")
    nats = nats_per_char(model, tok, "ab€cd€efgh€ijklm" * 10, block_size=16)  # € is not in the vocabulary
    assert nats == pytest.approx(math.log(17), abs=1e-5)


WORDS = "the cat sat on the mat . a dog ran to the cat , and the cat ran off .\n = Cats = \n"


def test_a_uniform_model_has_perplexity_vocab_size_per_bpe_token(make_model):
    """Oracle: a model whose logits are all 0 puts 1/V on every next token, so its loss per token is ln V and its
    perplexity is V exactly; its nats per character are ln V * tokens / characters, where the characters are those
    of the text the scored tokens decode to (BPE tokens stand for several characters: here fewer nats per char)."""
    tok = BPETokenizer.train([WORDS * 20], 60)
    model = make_model("decoder-only", vocab_size=tok.vocab_size, tie_embeddings=False, max_len=8)
    with torch.no_grad():
        model.lm_head.weight.zero_()
    text = WORDS * 6
    ids = tok.encode(text)
    assert UNK_ID not in ids and len(ids) > 3 * 8 + 1, "precondition: known text, several windows"
    loss = text_loss(model, tok, text, block_size=8)
    n_scored = (len(ids) - 1) // 8 * 8
    scored_text = tok.decode(ids[1: 1 + n_scored])
    assert loss.tokens == n_scored and loss.chars == len(scored_text) and loss.chars > 2 * loss.tokens
    assert loss.loss_per_token == pytest.approx(math.log(tok.vocab_size), rel=1e-6)
    assert loss.perplexity == pytest.approx(tok.vocab_size, rel=1e-5)
    assert loss.nats_per_char == pytest.approx(math.log(tok.vocab_size) * n_scored / len(scored_text), rel=1e-6)
    assert nats_per_char(model, tok, text, block_size=8) == loss.nats_per_char


def test_text_loss_of_a_bpe_model_equals_cross_entropy_computed_by_hand(make_model):
    """Oracle: with BPE tokens, the loss summed over consecutive windows (model logits and math.log by hand) is the
    total; per token it is total / tokens scored, perplexity its exp, nats per char total / characters those tokens
    decode to, and over a text whose windows cover every token after the first, those characters are the whole
    text but the first token's."""
    tok = BPETokenizer.train([WORDS * 20], 60)
    model = make_model("decoder-only", vocab_size=tok.vocab_size, max_len=8)
    ids = tok.encode(WORDS * 6)
    ids = ids[: (len(ids) - 1) // 8 * 8 + 1]  # every token after the first is scored
    text = tok.decode(ids)
    assert tok.encode(text) == ids, "precondition: the cut text encodes to the same tokens"
    total = 0.0
    for start in range(0, len(ids) - 1, 8):
        with torch.no_grad():
            logp = model(torch.tensor([ids[start: start + 8]])).logits[0].log_softmax(-1)
        total -= sum(float(logp[t, ids[start + t + 1]]) for t in range(8))
    loss = text_loss(model, tok, text, block_size=8)
    chars = len(text) - len(tok.decode(ids[:1]))
    assert (loss.tokens, loss.chars) == (len(ids) - 1, chars)
    assert loss.nats == pytest.approx(total, rel=1e-5)
    assert loss.loss_per_token == pytest.approx(total / (len(ids) - 1), rel=1e-5)
    assert loss.perplexity == pytest.approx(math.exp(total / (len(ids) - 1)), rel=1e-5)
    assert loss.nats_per_char == pytest.approx(total / chars, rel=1e-5)


def test_text_loss_of_a_text_shorter_than_one_window_is_a_value_error(make_model):
    """Invariant: a text with no full window to score is refused with a message, not divided by zero."""
    model = make_model("decoder-only", max_len=16)
    with pytest.raises(ValueError, match="too short"):
        text_loss(model, CharTokenizer("abcdefghijklm"), "abcdefghijklm", block_size=16)


def test_exact_match_of_a_model_that_stops_at_once_is_zero(make_model, monkeypatch):
    """Oracle: a model that always emits EOS first outputs "" for every example, so its exact match on copy (whose
    targets are never empty) is 0."""
    task = TASKS["copy"]
    tok = CharTokenizer(task.alphabet)
    model = make_model("encoder-decoder", vocab_size=tok.vocab_size)
    decode = model.decode

    def eos_first(*args, **kwargs):
        logits = decode(*args, **kwargs).clone()
        logits[..., model.config.eos_id] += 100.0
        return logits

    monkeypatch.setattr(model, "decode", eos_first)
    assert exact_match(model, tok, task, n=20, batch_size=8) == 0.0


def test_exact_match_scores_outputs_equal_to_the_targets_as_one(make_model, monkeypatch):
    """Oracle: if decoding returns each copy source's own tokens (its target), exact match is 1; if every other
    output loses its last token, exactly half match."""
    import transformer.evaluate as evaluate

    task = TASKS["copy"]
    tok = CharTokenizer(task.alphabet)
    model = make_model("encoder-decoder", vocab_size=tok.vocab_size)
    cfg = model.config

    def sources(src, max_new_tokens):
        return [[i for i in row if i not in (cfg.pad_id, cfg.eos_id)] for row in src.tolist()]

    monkeypatch.setattr(evaluate, "greedy_batch", lambda m, src, n, head_mask=None: sources(src, n))
    assert exact_match(model, tok, task, n=20, batch_size=8) == 1.0
    monkeypatch.setattr(evaluate, "greedy_batch",
                        lambda m, src, n, head_mask=None: [o if i % 2 else o[:-1] for i, o in enumerate(sources(src, n))])
    assert exact_match(model, tok, task, n=20, batch_size=10) == 0.5


class InductionOracle(torch.nn.Module):
    """A stand-in model whose logits pick, at each position, the token that followed the earlier occurrence of the
    current token (what a perfect induction head predicts), or <pad> when there is none."""

    def __init__(self, config):
        super().__init__()
        self.config, self.device = config, torch.device("cpu")

    def forward(self, ids):
        from types import SimpleNamespace

        logits = torch.zeros(*ids.shape, self.config.vocab_size)
        for b, row in enumerate(ids.tolist()):
            for t, tok in enumerate(row):
                earlier = [s for s in range(t) if row[s] == tok]
                logits[b, t, row[earlier[-1] + 1] if earlier else self.config.pad_id] = 1.0
        return SimpleNamespace(logits=logits)


def test_in_context_accuracy_scores_the_second_copy_from_its_second_token(make_config):
    """Oracle: a perfect induction predictor gets every token of the second copy from its second token on (the
    first is unpredictable and not scored) and none of the first copy: (0.0, 1.0)."""
    from transformer.interpretability.head_metrics import in_context_accuracy

    model = InductionOracle(make_config("decoder-only", vocab_size=40, max_len=30))
    assert in_context_accuracy(model, n_seqs=20, seed=0) == (0.0, 1.0)
