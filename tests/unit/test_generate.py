"""Decoding: cached == uncached, greedy against a reference loop, exhaustive beam search, sampling filters, seeds,
the KV cache's size, and the errors for bad input."""
from __future__ import annotations

import itertools
import math

import pytest
import torch

from transformer.generate import (cache_bytes_per_token, filter_top_k, filter_top_p, generate, generate_text,
                                  greedy_batch)

PAD, BOS, EOS = 0, 1, 2
SRC = [5, 6, 7, 8, 9, 10, EOS]
PROMPT = [4, 5, 6]
ARCHS = ["encoder-decoder", "decoder-only"]


def quiet_eos(model):
    """Make EOS unlikely (its tied embedding row is zeroed, so its logit is 0) so outputs run to max_new_tokens and
    the comparisons below cover many steps; the model is still an ordinary model."""
    with torch.no_grad():
        model.embed.weight[EOS] = 0.0
    return model


def run(model, ids, n, **kw):
    return list(generate(model, ids, n, **kw))


def ids_of(steps):
    return [s.token_id for s in steps]


def input_for(arch):
    return SRC if arch == "encoder-decoder" else PROMPT


def full_logits(model, ids, out):
    """Next-token logits after `out`, from one uncached forward pass over the whole sequence (the reference)."""
    with torch.no_grad():
        if model.config.is_encoder_decoder:
            logits = model(torch.tensor([ids]), torch.tensor([[BOS] + out])).logits[0, -1]
        else:
            logits = model(torch.tensor([ids + out])).logits[0, -1]
    logits[[PAD, BOS]] = float("-inf")
    return logits


@pytest.mark.parametrize("arch", ARCHS)
def test_greedy_equals_a_reference_argmax_loop(make_model, arch):
    """Oracle: a plain loop that re-runs the full model and takes the argmax (minGPT's test); each step's prob is
    the softmax probability of its token and `top` lists the five most likely tokens, best first."""
    model = quiet_eos(make_model(arch))
    ids, out = input_for(arch), []
    steps = run(model, ids, 10)
    for step in steps:
        probs = full_logits(model, ids, out).softmax(-1)
        assert step.token_id == int(probs.argmax())
        assert step.prob == pytest.approx(float(probs[step.token_id]), abs=1e-5)
        assert [t for t, _ in step.top] == probs.topk(5).indices.tolist()
        out.append(step.token_id)
    assert len(steps) == 10


def test_greedy_breaks_a_tie_at_the_top_as_argmax_does(make_model):
    """Oracle: torch.argmax, which returns the lowest id among equal maxima. Giving a lower id the (tied) embedding
    row of greedy's first choice makes their logits exactly equal; greedy must then emit the lower id, whichever
    order topk lists the two in, with its probability and both ids in `top`."""
    model = quiet_eos(make_model("decoder-only"))
    first = run(model, PROMPT, 1)[0].token_id
    twin = 3  # the lowest id that is neither special nor in the prompt
    assert twin < first and twin not in PROMPT, "precondition: the twin must be the lower id"
    with torch.no_grad():
        model.embed.weight[twin] = model.embed.weight[first]
    probs = full_logits(model, PROMPT, []).softmax(-1)
    assert probs[twin] == probs[first] == probs.max(), "precondition: an exact tie at the top"
    step = run(model, PROMPT, 1)[0]
    assert step.token_id == int(probs.argmax()) == twin
    # the decoding step's probability comes from a one-row GEMM, the oracle's from the whole prompt's: equal to
    # rounding, not bitwise (this machine's CPU gave 0.26563746 against 0.26563743), as in the test above
    assert step.prob == pytest.approx(float(probs[twin]), abs=1e-6)
    assert {t for t, _ in step.top[:2]} == {twin, first}


VARIANTS = {"MHA": {}, "GQA": dict(n_kv_heads=2), "MQA": dict(n_kv_heads=1), "MLA": dict(attention="mla"),
            "RoPE": dict(pos_encoding="rope"), "ALiBi": dict(pos_encoding="alibi", n_kv_heads=2),
            "MLA+RoPE": dict(attention="mla", pos_encoding="rope", kv_latent_dim=12),
            "MLA+ALiBi": dict(attention="mla", pos_encoding="alibi")}


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("strategy", ["greedy", "beam", "sample"])
@pytest.mark.parametrize("arch", ARCHS)
def test_cached_equals_uncached(make_model, arch, strategy, variant):
    """Invariant: decoding with the KV cache gives the same tokens (and probabilities) as re-running the decoder
    over the whole sequence, for MHA, GQA (2 kv heads of 4), MQA (1 kv head), MLA (a cached latent), and RoPE and
    ALiBi positions (with MLA too: its decoupled rotary key is cached beside the latent)."""
    model = quiet_eos(make_model(arch, seed=3, **VARIANTS[variant]))
    kw = dict(strategy=strategy, num_beams=3, seed=7)
    cached, uncached = run(model, input_for(arch), 12, use_cache=True, **kw), run(
        model, input_for(arch), 12, use_cache=False, **kw)
    assert len(cached) >= 6, "precondition: the output should be long enough to exercise the cache"
    assert ids_of(cached) == ids_of(uncached)
    assert [s.prob for s in cached] == pytest.approx([s.prob for s in uncached], abs=1e-5)


@pytest.mark.parametrize("variant", ["MHA", "MQA", "MLA+RoPE", "ALiBi"])
@pytest.mark.parametrize("strategy", ["greedy", "beam", "sample"])
def test_context_window_crop_is_the_same_cached_and_uncached(make_model, strategy, variant):
    """Invariant: a decoder-only model asked for more tokens than max_len crops its context at the same point
    with and without the cache, so both produce the same tokens; the output really runs past max_len."""
    model = quiet_eos(make_model("decoder-only", max_len=8, seed=4, **VARIANTS[variant]))
    kw = dict(strategy=strategy, num_beams=2, seed=1, temperature=0.5)
    cached = ids_of(run(model, PROMPT, 20, use_cache=True, **kw))
    uncached = ids_of(run(model, PROMPT, 20, use_cache=False, **kw))
    max_len = model.config.max_len
    assert len(PROMPT) + len(cached) > max_len + max_len // 2 + 1, "precondition: the context is cropped twice"
    assert cached == uncached


def test_encoder_decoder_output_stops_at_max_len(make_model):
    """Invariant: an encoder-decoder target (bos + output) cannot outgrow max_len: at most max_len - 1 tokens."""
    model = quiet_eos(make_model("encoder-decoder", max_len=8))
    for strategy in ("greedy", "beam"):
        assert len(run(model, [5, 6, EOS], 50, strategy=strategy)) == 7


@pytest.mark.parametrize("n_kv_heads", [None, 2, 1])
@pytest.mark.parametrize("arch", ARCHS)
def test_kv_cache_stores_only_kv_heads_and_matches_the_formula(make_model, arch, n_kv_heads):
    """Oracle: after n decoding steps the self-attention caches hold n * cache_bytes_per_token bytes, and that is
    2 (k and v) * layers * G kv heads * d_k * 4 bytes per token; a cross-attention cache holds the S source
    positions once. Each step's cached logits equal a full forward pass."""
    model = make_model(arch, n_kv_heads=n_kv_heads)
    cfg = model.config
    G, L = cfg.n_kv_heads, cfg.n_decoder_layers
    per_token = 2 * L * G * cfg.d_k * 4
    assert cache_bytes_per_token(cfg) == per_token
    assert cache_bytes_per_token(cfg, torch.float16) == per_token // 2
    seq = [BOS, 9, 10, 11, 12, 13] if arch == "encoder-decoder" else [4, 9, 10, 11, 12, 13]
    src = torch.tensor([SRC])
    cache = model.new_cache()
    with torch.no_grad():
        memory, mask = model.encode(src) if arch == "encoder-decoder" else (None, None)
        for step, token in enumerate(seq):
            logits = model.decode(torch.tensor([[token]]), memory, mask, cache=cache, start=step)
            reference = model(src, torch.tensor([seq[: step + 1]])) if arch == "encoder-decoder" else model(
                torch.tensor([seq[: step + 1]]))
            torch.testing.assert_close(logits[0, -1], reference.logits[0, -1], atol=1e-5, rtol=0)
    self_caches = [c for c, _ in cache]
    assert all(c.k.shape[1] == G and len(c) == len(seq) for c in self_caches)
    assert sum(c.nbytes() for c in self_caches) == len(seq) * cache_bytes_per_token(cfg)
    if arch == "encoder-decoder":
        assert sum(x.nbytes() for _, x in cache) == 2 * L * G * len(SRC) * cfg.d_k * 4
    else:
        assert all(x is None for _, x in cache)


def brute_force_best(model, src: list[int]) -> list[int]:
    """The output of at most 3 tokens (from 3, 4, 5) with the best length-normalised log-probability: a finished one
    scores log P(tokens, eos) / (len + 1), an unfinished one of length 3 scores log P(tokens) / 3."""
    def logp(out):
        return full_logits(model, src, out).log_softmax(-1)

    best, best_score = None, -math.inf
    for length in range(4):
        for out in itertools.product([3, 4, 5], repeat=length):
            out = list(out)
            lp = sum(float(logp(out[:i])[t]) for i, t in enumerate(out))
            candidates = [(lp + float(logp(out)[EOS])) / (length + 1)] if length < 3 else []
            if length == 3:
                candidates.append(lp / 3)
            for score in candidates:
                if score > best_score:
                    best, best_score = out, score
    return best


def test_beam_search_is_exhaustive_when_the_beam_holds_every_hypothesis(make_model):
    """Oracle: brute force. With 3 emittable tokens, 3 steps and 27 beams nothing is ever pruned, so beam search must
    return the sequence with the best length-normalised log-probability over every possible output.
    Checked on the first two seeded models where that best sequence is not greedy's, so the search has to find it."""
    src, checked = [4, 5, 3, EOS], 0
    for seed in range(200):
        model = make_model("encoder-decoder", vocab_size=6, seed=seed)  # pad bos eos unk + 2 letters: 3-5 emittable
        best = brute_force_best(model, src)
        if ids_of(run(model, src, 3)) == best:
            continue  # greedy finds it already: no test of the search
        for use_cache in (True, False):
            assert ids_of(run(model, src, 3, strategy="beam", num_beams=27, use_cache=use_cache)) == best, seed
        checked += 1
        if checked == 2:
            return
    pytest.fail(f"only {checked} of 200 seeded models have a best sequence greedy misses")


@pytest.mark.parametrize("temperature", [0.0, 1e-4])
@pytest.mark.parametrize("arch", ARCHS)
def test_temperature_to_zero_is_greedy(make_model, arch, temperature):
    """Invariant: sampling at temperature 0 (exactly, or 1e-4) picks the most likely token: it equals greedy."""
    model = quiet_eos(make_model(arch, seed=6))
    greedy = ids_of(run(model, input_for(arch), 12))
    for seed in range(3):
        assert ids_of(run(model, input_for(arch), 12, strategy="sample", temperature=temperature, seed=seed)) == greedy


def test_top_k_one_sampling_is_greedy(make_model):
    """Invariant: sampling from only the most likely token (top_k=1) is greedy, whatever the temperature."""
    model = quiet_eos(make_model("decoder-only", seed=6))
    greedy = ids_of(run(model, PROMPT, 12))
    assert ids_of(run(model, PROMPT, 12, strategy="sample", top_k=1, temperature=3.0, seed=0)) == greedy


def test_sampled_tokens_come_from_the_top_k(make_model):
    """Oracle: with top_k=3, every sampled token is among the 3 highest logits of a full forward pass."""
    model = quiet_eos(make_model("encoder-decoder", seed=8))
    out = []
    for step in run(model, SRC, 15, strategy="sample", top_k=3, temperature=2.0, seed=3):
        assert step.token_id in full_logits(model, SRC, out).topk(3).indices.tolist()
        out.append(step.token_id)


@pytest.mark.parametrize("k", [1, 3, 10, 50, 80])
def test_filter_top_k_leaves_exactly_k_finite_logits(k):
    """Oracle: torch.topk. Exactly min(k, V) logits stay finite, they are the k largest, and keep their values."""
    logits = torch.randn(2, 50, generator=torch.Generator().manual_seed(k))
    out = filter_top_k(logits, k)
    kept = torch.isfinite(out)
    assert kept.sum(-1).tolist() == [min(k, 50)] * 2
    for row in range(2):
        assert set(kept[row].nonzero().flatten().tolist()) == set(logits[row].topk(min(k, 50)).indices.tolist())
    assert torch.equal(out[kept], logits[kept])


@pytest.mark.parametrize("p, n_kept", [(0.3, 1), (0.5, 1), (0.7, 2), (0.8, 2), (0.81, 3), (0.95, 3), (0.96, 4),
                                       (1.0, 4)])
def test_filter_top_p_keeps_the_smallest_set_with_mass_at_least_p(p, n_kept):
    """Oracle: by hand for probs [0.5, 0.3, 0.15, 0.05]: the top 1 has mass 0.5, top 2 0.8, top 3 0.95, so p=0.7
    and p=0.8 keep 2 tokens, p=0.81 keeps 3. The order of the logits does not matter."""
    probs = torch.tensor([0.5, 0.3, 0.15, 0.05])
    for perm in ([0, 1, 2, 3], [3, 1, 0, 2]):
        logits = probs.log()[perm]
        out = filter_top_p(logits, p)
        kept = torch.isfinite(out)
        assert int(kept.sum()) == n_kept
        assert sorted(probs[perm][kept].tolist(), reverse=True) == probs[:n_kept].tolist()
        assert torch.equal(out[kept], logits[kept])


def test_filter_top_p_works_row_by_row():
    """Invariant: a batch of distributions is filtered row by row, as each row alone would be."""
    logits = torch.randn(4, 30, generator=torch.Generator().manual_seed(0)) * 2
    batched = filter_top_p(logits, 0.6)
    for row in range(4):
        assert torch.equal(batched[row], filter_top_p(logits[row], 0.6))


@pytest.mark.parametrize("arch", ARCHS)
def test_same_seed_reproduces_a_sample_and_other_seeds_differ(make_model, arch):
    """Invariant: a seed fixes the sample (tokens and probabilities); over six seeds at temperature 1.5, the
    samples are not all the same (a fixed random stream would make them equal)."""
    model = quiet_eos(make_model(arch, seed=9))
    kw = dict(strategy="sample", temperature=1.5)
    samples = [ids_of(run(model, input_for(arch), 12, seed=s, **kw)) for s in range(6)]
    again = run(model, input_for(arch), 12, seed=2, **kw)
    assert ids_of(again) == samples[2]
    assert [s.prob for s in again] == [s.prob for s in run(model, input_for(arch), 12, seed=2, **kw)]
    assert len({tuple(s) for s in samples}) > 1


def favour(model, *token_ids, by=50.0):
    """Wrap the instance's decode so the given tokens get +`by` on their logits (a model that wants them)."""
    decode = model.decode

    def biased(*args, **kwargs):
        logits = decode(*args, **kwargs).clone()
        logits[..., list(token_ids)] += by
        return logits

    model.decode = biased
    return model


@pytest.mark.parametrize("use_cache", [True, False])
@pytest.mark.parametrize("strategy", ["greedy", "sample", "beam"])
@pytest.mark.parametrize("arch", ARCHS)
def test_generation_never_emits_pad_or_bos(make_model, arch, strategy, use_cache):
    """Invariant: even a model whose favourite tokens are pad and bos never emits them (they are not text)."""
    model = favour(make_model(arch), PAD, BOS)
    with torch.no_grad():
        if arch == "encoder-decoder":
            memory, mask = model.encode(torch.tensor([SRC]))
            raw = model.decode(torch.tensor([[BOS]]), memory, mask)[0, -1]
        else:
            raw = model.decode(torch.tensor([PROMPT]))[0, -1]
    assert set(raw.topk(2).indices.tolist()) == {PAD, BOS}, "precondition: the model prefers pad and bos"
    steps = run(model, input_for(arch), 10, strategy=strategy, use_cache=use_cache, seed=0, num_beams=3)
    assert len(steps) > 0 and not {PAD, BOS} & set(ids_of(steps))


@pytest.mark.parametrize("strategy", ["greedy", "sample", "beam"])
def test_generation_stops_at_eos_without_yielding_it(make_model, strategy):
    """Invariant: when EOS is the likely next token, generation ends and EOS is not yielded."""
    model = favour(make_model("encoder-decoder"), EOS)
    assert run(model, SRC, 10, strategy=strategy, seed=0) == []


@pytest.mark.parametrize("arch", ARCHS)
def test_input_longer_than_max_len_raises_a_clear_value_error(make_model, arch):
    """Invariant: an input longer than max_len is a ValueError that says how long it is and what the limit is."""
    model = make_model(arch, max_len=8)
    with pytest.raises(ValueError, match=r"input is 9 tokens long.*max_len=8"):
        run(model, list(range(3, 12)), 5)
    run(model, list(range(3, 11)), 1)  # exactly max_len is fine


def test_empty_decoder_only_prompt_raises_value_error(make_model):
    """Invariant: a decoder-only model needs at least one token to continue; an empty prompt says so."""
    with pytest.raises(ValueError, match="prompt is empty"):
        run(make_model("decoder-only"), [], 5)
    with pytest.raises(ValueError, match="prompt is empty"):
        run(make_model("decoder-only"), torch.zeros(1, 0, dtype=torch.long), 5)


def test_empty_encoder_decoder_source_raises_value_error(make_model):
    """Invariant: an empty source is refused with a message, not a torch error from an empty tensor."""
    with pytest.raises(ValueError, match="input is empty"):
        run(make_model("encoder-decoder"), [], 5)


@pytest.mark.parametrize("kwargs, field", [
    (dict(temperature=-0.5), "temperature"),
    (dict(top_p=0.0), "top_p"),
    (dict(top_p=1.5), "top_p"),
    (dict(top_k=0), "top_k"),
    (dict(strategy="nucleus"), "strategy"),
    (dict(strategy="beam", num_beams=0), "num_beams"),
    (dict(max_new_tokens=-1), "max_new_tokens"),
])
def test_bad_decoding_arguments_raise_value_error_naming_them(make_model, kwargs, field):
    """Invariant: each bad decoding argument is a ValueError whose message starts with the argument's name."""
    kwargs = {"max_new_tokens": 5, **kwargs}
    with pytest.raises(ValueError, match=rf"^{field}\b"):
        list(generate(make_model("encoder-decoder"), SRC, kwargs.pop("max_new_tokens"), **kwargs))


def test_input_ids_may_be_a_list_or_a_tensor(make_model):
    """Invariant: a list, a 1-D tensor and a (1, T) tensor of the same ids give the same output."""
    model = quiet_eos(make_model("encoder-decoder"))
    as_list = ids_of(run(model, SRC, 8))
    assert ids_of(run(model, torch.tensor(SRC), 8)) == as_list
    assert ids_of(run(model, torch.tensor([SRC]), 8)) == as_list


@pytest.mark.parametrize("arch", ARCHS)
def test_generate_text_is_greedy_decoding_written_out_by_hand(make_model, char_tokenizer, arch):
    """Oracle: generate_text(text) equals greedy decoding written out here with the plain forward pass (no cache,
    no generate()): the encoder reads encode(text) + [</s>] and the decoder starts from <s> (encoder-decoder, the
    contract of DESIGN.md), or the model continues encode(text) (decoder-only); each step appends the most likely
    token other than pad and <s>, until </s> or 9 tokens."""
    model = quiet_eos(make_model(arch))
    text = "badcafe"
    ids, out = char_tokenizer.encode(text), []
    with torch.no_grad():
        for _ in range(9):
            if arch == "encoder-decoder":
                logits = model(torch.tensor([ids + [EOS]]), torch.tensor([[BOS] + out])).logits[0, -1]
            else:
                logits = model(torch.tensor([ids + out])).logits[0, -1]
            logits[[PAD, BOS]] = float("-inf")
            token = int(logits.argmax())
            if token == EOS:
                break
            out.append(token)
    assert len(out) == 9  # quiet_eos: a long output, so many steps are compared
    assert generate_text(model, char_tokenizer, text, 9) == char_tokenizer.decode(out)


def test_greedy_batch_equals_generating_each_source_alone(make_model):
    """Invariant: batched greedy decoding over a padded batch gives each source the output generate(greedy)
    gives it alone (padding and batching change nothing; pad and bos are never produced)."""
    model = make_model("encoder-decoder", seed=11)
    sources = [[5, 6, 7, EOS], [8, EOS], [9, 10, 11, 12, 13, 14, EOS], [15, 16, 3, EOS]]
    S = max(map(len, sources))
    batch = torch.tensor([s + [PAD] * (S - len(s)) for s in sources])
    outputs = greedy_batch(model, batch, 10)
    assert outputs == [ids_of(run(model, s, 10)) for s in sources]
