"""transformer/pretrained/marian.py and transformer/tokenization_marian.py: a Marian translator in the from-scratch
encoder-decoder, checked against `transformers`' MarianMTModel and MarianTokenizer.

The oracle is a small random MarianMTModel with SentencePiece models trained here (tests/tiny_marian.py), saved in
the Hugging Face layout and reloaded by `transformers` from the files `load_pretrained` reads. Offline.

Generation is compared with `transformers`' generate set as Marian's generation_config sets it (the pad token
banned: bad_words_ids [[pad]]; the decoder starting from pad) and three settings matched to ours:
forced_eos_token_id None (transformers forces </s> at max_length; we stop at max_new_tokens without one),
renormalize_logits True (we ban pad before the softmax, transformers after it unless told to renormalize), and
early_stopping False (transformers' default; our beam search implements that rule). num_beams and length_penalty
are passed to both.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

import transformers
from safetensors.torch import load_file, save_file

from tests.tiny_marian import ENGLISH, SPANISH, build_tiny_marian
from transformer import CheckpointError
from transformer.generate import generate, generate_text
from transformer.positions.sinusoidal import sinusoidal_table
from transformer.pretrained import load_pretrained
from transformer.pretrained import FAMILIES, read_config

TEXTS = ENGLISH[:4] + ["A quiet queen quickly quoted the quarterly quiz.", "  extra   spaces  ", "Hello </s> world <unk>",
                       ">>spa<< With a language code", "Unseen: 日本語, Ελληνικά, café", ""]
MAX_NEW = 24


@pytest.fixture(scope="module")
def marian_dir(tmp_path_factory) -> Path:
    return build_tiny_marian(tmp_path_factory.mktemp("marian") / "tiny-marian")


@pytest.fixture(scope="module")
def ref(marian_dir):
    return transformers.MarianMTModel.from_pretrained(marian_dir, attn_implementation="eager").eval()


@pytest.fixture(scope="module")
def ref_tok(marian_dir):
    return transformers.MarianTokenizer.from_pretrained(marian_dir)


@pytest.fixture(scope="module")
def loaded(marian_dir):
    return load_pretrained(marian_dir, device="cpu")


def batch(ref_tok, texts):
    """The reference tokenizer's padded source batch and some decoder inputs that start with the start token."""
    src = ref_tok(texts, return_tensors="pt", padding=True)
    tgt = ref_tok(text_target=SPANISH[: len(texts)], return_tensors="pt", padding=True).input_ids
    start = torch.full((len(texts), 1), ref_tok.pad_token_id)
    return src, torch.cat([start, tgt[:, :-1]], dim=1)  # decoder input = [pad] + target (shifted right)


def test_sinusoidal_halves_layout_equals_marians_table():
    """Oracle: transformers' MarianSinusoidalPositionalEmbedding.create_weight (sines first, then cosines), even and
    odd d_model; the paper's interleaved layout holds the same numbers in another order."""
    from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding

    for d in (32, 33):
        theirs = MarianSinusoidalPositionalEmbedding(50, d).create_weight()
        torch.testing.assert_close(sinusoidal_table(50, d, "halves"), theirs, atol=1e-6, rtol=0)
    interleaved = sinusoidal_table(50, 32)
    torch.testing.assert_close(sinusoidal_table(50, 32, "halves"),
                               torch.cat([interleaved[:, 0::2], interleaved[:, 1::2]], dim=1))


def test_loaded_config_is_marians(loaded, marian_dir):
    """Invariant: the config.json fields land in ours (post-norm, SiLU, halves, biases, decoder start = pad)."""
    model, tokenizer, info = loaded
    hf = json.loads((marian_dir / "config.json").read_text())
    cfg = model.config
    assert (cfg.d_model, cfg.n_heads, cfg.n_encoder_layers, cfg.n_decoder_layers, cfg.d_ff, cfg.max_len) == \
        (hf["d_model"], hf["encoder_attention_heads"], hf["encoder_layers"], hf["decoder_layers"],
         hf["encoder_ffn_dim"], hf["max_position_embeddings"])
    assert (cfg.norm_first, cfg.activation, cfg.sinusoidal_layout, cfg.attention_bias, cfg.final_logits_bias) == \
        (False, "silu", "halves", True, True)
    assert (cfg.pad_id, cfg.eos_id, cfg.decoder_start) == (hf["pad_token_id"], 0, hf["decoder_start_token_id"])
    assert info["training"]["family"] == "Marian" and info["tokenizer"]["kind"] == "marian-spm"
    assert tokenizer.vocab_size == cfg.vocab_size


def test_logits_equal_the_reference(loaded, ref, ref_tok):
    """Oracle: transformers' logits (final_logits_bias included) for a padded source batch, to 1e-5."""
    model = loaded[0]
    src, tgt = batch(ref_tok, ENGLISH[:4])
    assert (src.input_ids == ref_tok.pad_token_id).any(), "the batch must hold padding"
    with torch.no_grad():
        theirs = ref(input_ids=src.input_ids, attention_mask=src.attention_mask, decoder_input_ids=tgt).logits
        ours = model(src.input_ids, tgt).logits
    torch.testing.assert_close(ours, theirs, atol=1e-5, rtol=0)


def test_attention_weights_equal_the_reference(loaded, ref, ref_tok):
    """Oracle: every encoder self-, decoder self- and cross-attention weight of every layer and head, to 1e-5."""
    model = loaded[0]
    src, tgt = batch(ref_tok, ENGLISH[4:7])
    with torch.no_grad():
        theirs = ref(input_ids=src.input_ids, attention_mask=src.attention_mask, decoder_input_ids=tgt,
                     output_attentions=True)
        ours = model(src.input_ids, tgt, return_attention=True).attention
    for kind, their_maps in (("encoder_self", theirs.encoder_attentions), ("decoder_self", theirs.decoder_attentions),
                             ("cross", theirs.cross_attentions)):
        our_maps = getattr(ours, kind)
        assert len(our_maps) == len(their_maps) == 2
        for a, b in zip(our_maps, their_maps):
            torch.testing.assert_close(a, b, atol=1e-5, rtol=0, msg=kind)


@pytest.mark.parametrize("text", TEXTS)
def test_tokenizer_gives_the_reference_ids(loaded, ref_tok, text):
    """Oracle: MarianTokenizer's ids, source (with the </s> that transformer.encoding appends) and target; pieces
    vocab.json lacks ("q...") become <unk>, special tokens typed in the text are themselves."""
    model, tokenizer, _ = loaded
    assert tokenizer.encode(text) + [model.config.eos_id] == ref_tok(text).input_ids
    assert tokenizer.encode_target(text) + [model.config.eos_id] == ref_tok(text_target=text).input_ids


def test_unknown_pieces_become_unk(loaded):
    """Invariant: a word whose pieces vocab.json lacks reads as <unk>, never as an error."""
    tokenizer = loaded[1]
    assert tokenizer.unk_id in tokenizer.encode("quiet") and tokenizer.unk_id not in tokenizer.encode("the earth")


def test_decode_equals_the_reference(loaded, ref_tok):
    """Oracle: MarianTokenizer.decode(skip_special_tokens=True) of Spanish targets, with </s>, <pad> and <unk>."""
    tokenizer = loaded[1]
    for text in SPANISH:
        ids = [ref_tok.pad_token_id] + ref_tok(text_target=text).input_ids
        ids.insert(3, ref_tok.unk_token_id)
        assert tokenizer.decode(ids) == ref_tok.decode(ids, skip_special_tokens=True)


def reference_generate(ref, ids: torch.Tensor, **settings) -> list[int]:
    """transformers' generated tokens without the start token and the final </s>."""
    out = ref.generate(ids[None], do_sample=False, max_new_tokens=MAX_NEW, forced_eos_token_id=None,
                       renormalize_logits=True, early_stopping=False, **settings)[0].tolist()
    assert out[0] == ref.config.decoder_start_token_id
    return out[1:-1] if out[-1] == ref.config.eos_token_id else out[1:]


SOURCES = ENGLISH + ["Hello.", "The", "quiet queso"]


def test_cached_greedy_generation_gives_the_reference_tokens(loaded, ref, ref_tok):
    """Oracle: transformers' greedy generate, token for token, cached and uncached; the sources include outputs that
    stop at </s> after several tokens and outputs that run to max_new_tokens (both paths are compared)."""
    model = loaded[0]
    lengths = []
    for text in SOURCES:
        ids = torch.tensor(ref_tok(text).input_ids)
        theirs = reference_generate(ref, ids, num_beams=1)
        assert [s.token_id for s in generate(model, ids, MAX_NEW)] == theirs, text
        assert [s.token_id for s in generate(model, ids, MAX_NEW, use_cache=False)] == theirs, text
        lengths.append(len(theirs))
    assert MAX_NEW in lengths and any(1 < n < MAX_NEW for n in lengths), lengths


@pytest.mark.parametrize("num_beams,length_penalty", [(4, 1.0), (3, 0.6), (5, 2.0)])
def test_cached_beam_generation_gives_the_reference_tokens(loaded, ref, ref_tok, num_beams, length_penalty):
    """Oracle: transformers' beam search (early_stopping False, the same num_beams and length_penalty), token for
    token."""
    model = loaded[0]
    lengths = []
    for text in SOURCES:
        ids = torch.tensor(ref_tok(text).input_ids)
        theirs = reference_generate(ref, ids, num_beams=num_beams, length_penalty=length_penalty)
        ours = [s.token_id for s in generate(model, ids, MAX_NEW, strategy="beam", num_beams=num_beams,
                                             length_penalty=length_penalty)]
        assert ours == theirs, text
        lengths.append(len(theirs))
    assert len(set(lengths)) > 2, lengths


def test_pad_is_never_generated_even_when_most_likely(marian_dir, ref_tok, tmp_path):
    """Oracle and invariant: with final_logits_bias making <pad> the most likely token everywhere, neither model emits
    it (Marian's bad_words_ids [[pad]]); greedy and beam tokens still equal transformers'."""
    directory = shutil.copytree(marian_dir, tmp_path / "pad-bias")
    tensors = load_file(directory / "model.safetensors")
    pad = ref_tok.pad_token_id
    tensors["final_logits_bias"][0, pad] = 50.0
    save_file(tensors, directory / "model.safetensors", metadata={"format": "pt"})
    ref = transformers.MarianMTModel.from_pretrained(directory, attn_implementation="eager").eval()
    model = load_pretrained(directory, device="cpu")[0]
    ids = torch.tensor(ref_tok(ENGLISH[2]).input_ids)
    with torch.no_grad():
        assert int(model(ids[None], torch.tensor([[pad]])).logits[0, -1].argmax()) == pad
    for settings in ({"num_beams": 1}, {"num_beams": 4}):
        ours = [s.token_id for s in generate(model, ids, MAX_NEW, strategy="beam" if settings["num_beams"] > 1
                                             else "greedy", num_beams=settings["num_beams"])]
        assert pad not in ours and ours == reference_generate(ref, ids, **settings)


def test_generate_text_translates_through_the_target_tokenizer(loaded, ref, ref_tok):
    """Oracle: generate_text(model, tokenizer, english) equals transformers' generate + decode."""
    model, tokenizer, _ = loaded
    for text in ENGLISH[:5]:
        ids = torch.tensor(ref_tok(text).input_ids)
        expected = ref_tok.decode(reference_generate(ref, ids, num_beams=4), skip_special_tokens=True)
        assert generate_text(model, tokenizer, text, MAX_NEW, strategy="beam", num_beams=4) == expected


def rewrite(directory: Path, tmp_path: Path, config: dict | None = None, tensors=None) -> Path:
    out = shutil.copytree(directory, tmp_path / "changed")
    if config:
        hf = json.loads((out / "config.json").read_text())
        (out / "config.json").write_text(json.dumps({**hf, **config}))
    if tensors:
        stored = load_file(out / "model.safetensors")
        save_file(tensors(stored), out / "model.safetensors", metadata={"format": "pt"})
    return out


def test_embedding_stored_under_several_names_loads_when_equal(marian_dir, ref_tok, loaded, tmp_path):
    """Invariant: a file storing the shared embedding again as the encoder's, decoder's and output layer's loads
    with the same logits; one whose copies differ is refused (this model shares one matrix)."""
    def duplicated(t):
        e = t["model.shared.weight"]
        return {**t, "model.encoder.embed_tokens.weight": e.clone(), "lm_head.weight": e.clone()}
    src, tgt = batch(ref_tok, ENGLISH[:2])
    model = load_pretrained(rewrite(marian_dir, tmp_path, tensors=duplicated), device="cpu")[0]
    with torch.no_grad():
        assert torch.equal(model(src.input_ids, tgt).logits, loaded[0](src.input_ids, tgt).logits)

    def differing(t):
        return {**duplicated(t), "lm_head.weight": t["model.shared.weight"] + 1}
    with pytest.raises(CheckpointError, match="differ"):
        load_pretrained(rewrite(marian_dir, tmp_path / "b", tensors=differing), device="cpu")


def test_stored_position_table_is_checked(marian_dir, tmp_path):
    """Invariant: older files store the sinusoidal tables; Marian's own loads, the interleaved one is refused."""
    n, d = 64, 32
    ok = rewrite(marian_dir, tmp_path, tensors=lambda t: {
        **t, "model.encoder.embed_positions.weight": sinusoidal_table(n, d, "halves")})
    load_pretrained(ok, device="cpu")
    bad = rewrite(marian_dir, tmp_path / "b", tensors=lambda t: {
        **t, "model.decoder.embed_positions.weight": sinusoidal_table(n, d)})
    with pytest.raises(CheckpointError, match="sinusoidal"):
        load_pretrained(bad, device="cpu")


@pytest.mark.parametrize("change,field", [
    ({"model_type": "bart"}, "model_type"),
    ({"d_model": 0}, "d_model"),
    ({"decoder_attention_heads": 8}, "decoder_attention_heads"),
    ({"decoder_ffn_dim": 32}, "decoder_ffn_dim"),
    ({"activation_function": "tanh"}, "activation_function"),
    ({"share_encoder_decoder_embeddings": False}, "share_encoder_decoder_embeddings"),
    ({"decoder_vocab_size": 7}, "decoder_vocab_size"),
    ({"pad_token_id": 10**6}, "pad_token_id"),
    ({"eos_token_id": [0, 1]}, "eos_token_id"),
])
def test_bad_marian_config_is_refused_naming_the_field(marian_dir, change, field):
    """Invariant: each unsupported or invalid config.json value raises CheckpointError naming its field."""
    hf = {**json.loads((marian_dir / "config.json").read_text()), **change}
    with pytest.raises(CheckpointError, match=field):
        read_config(FAMILIES["marian"], hf)


def test_weights_that_do_not_match_the_config_are_refused_before_reading(marian_dir, tmp_path):
    """Invariant: a config promising more layers than the file holds is refused, naming the missing tensors."""
    with pytest.raises(CheckpointError, match="missing"):
        load_pretrained(rewrite(marian_dir, tmp_path, config={"encoder_layers": 3}), device="cpu")


def test_missing_tokenizer_files_are_named(marian_dir, tmp_path):
    directory = rewrite(marian_dir, tmp_path)
    (directory / "target.spm").unlink()
    with pytest.raises(CheckpointError, match="target.spm"):
        load_pretrained(directory, device="cpu")


@pytest.mark.parametrize("field,value", [("sinusoidal_layout", "sines-first"), ("final_logits_bias", 1),
                                         ("decoder_start_id", 1000), ("activation", "swish")])
def test_marian_config_fields_refuse_bad_values_naming_the_field(field, value):
    """Invariant: the config fields Marian added raise ValueError naming themselves ("swish" is spelt "silu")."""
    from transformer import TransformerConfig

    with pytest.raises(ValueError, match=field):
        TransformerConfig(**{field: value})


def test_new_fields_default_to_the_papers_model():
    """Invariant: without the Marian fields a model is the paper's: no logits bias, interleaved table, decoder
    starting from <s>; with final_logits_bias the bias starts at 0, so a fresh model's logits are unchanged."""
    from transformer import Transformer, TransformerConfig

    cfg = TransformerConfig(vocab_size=30, d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=32)
    assert (cfg.decoder_start, cfg.sinusoidal_layout) == (cfg.bos_id, "interleaved")
    plain, biased = Transformer(cfg), Transformer(TransformerConfig(**{**cfg.to_dict(), "final_logits_bias": True}))
    assert plain.lm_head.bias is None and torch.equal(biased.lm_head.bias, torch.zeros(30))
    assert biased.load_state_dict(plain.state_dict(), strict=False).missing_keys == ["lm_head.bias"]
    src, tgt = torch.tensor([[3, 4, 5, 2]]), torch.tensor([[1, 6, 7]])
    with torch.no_grad():
        torch.testing.assert_close(biased.eval()(src, tgt).logits, plain.eval()(src, tgt).logits)

