"""TransformerConfig in groups (issue 41, item 4): the paper's fields first, each group validating its own fields,
and config.json still the flat dict every checkpoint was written with."""
from __future__ import annotations

import json
import re
from dataclasses import fields

import pytest
import torch

from transformer.checkpoint import load_checkpoint, save_checkpoint
from transformer.config import PaperModel, TransformerConfig, Variants
from transformer.family_options import EmbeddingOptions, FamilyOptions, PositionOptions, SublayerOptions
from transformer.special_tokens import SpecialTokens

CHECKPOINTS = ("reverse", "sort", "dates", "shakespeare-char", "induction", "translate-en-es")
# The fields of the paper (Table 3 and section 3), in the order a student reads them
PAPER = ["arch", "vocab_size", "d_model", "n_heads", "d_ff", "n_encoder_layers", "n_decoder_layers", "dropout",
         "max_len", "pos_encoding"]
# What exists only to load GPT-2, Llama, BERT or Marian (issue 41's list: norm eps, activations, rotary and
# sinusoidal details, tied embeddings, biases, token types, ...)
FAMILY_ONLY = {"scale_embeddings", "tie_embeddings", "type_vocab_size", "embedding_norm", "final_logits_bias",
               "activation", "layer_norm_eps", "attention_bias", "ffn_bias", "init", "sinusoidal_layout",
               "rope_theta", "rope_layout"}


def names(group) -> list[str]:
    return [f.name for f in fields(group)]


def test_the_papers_fields_come_first_and_every_field_has_one_group():
    """Invariant: TransformerConfig's fields (its constructor, repr and config.json) start with the paper's; the
    groups split the fields without overlap; the family-only options are FamilyOptions' and nothing else."""
    assert names(PaperModel) == PAPER
    assert names(TransformerConfig)[:len(PAPER)] == PAPER
    assert list(TransformerConfig().to_dict())[:len(PAPER)] == PAPER
    groups = [PaperModel, Variants, SpecialTokens, EmbeddingOptions, SublayerOptions, PositionOptions]
    every = [name for group in groups for name in names(group)]
    assert sorted(every) == sorted(names(TransformerConfig)) and len(set(every)) == len(every)
    assert set(names(FamilyOptions)) == FAMILY_ONLY


@pytest.mark.parametrize("group, bad, field", [
    (EmbeddingOptions, dict(type_vocab_size=-1), "type_vocab_size"),
    (EmbeddingOptions, dict(tie_embeddings="yes"), "tie_embeddings"),
    (SublayerOptions, dict(activation="swish"), "activation"),
    (SublayerOptions, dict(layer_norm_eps=0.0), "layer_norm_eps"),
    (SublayerOptions, dict(init="kaiming"), "init"),
    (PositionOptions, dict(rope_theta=1.0), "rope_theta"),
    (PositionOptions, dict(rope_layout="pairs"), "rope_layout"),
    (PositionOptions, dict(sinusoidal_layout="halfs"), "sinusoidal_layout"),
    (FamilyOptions, dict(final_logits_bias=1), "final_logits_bias"),
    (SpecialTokens, dict(pad_id=-1), "pad_id"),
    (SpecialTokens, dict(decoder_start_id=1.5), "decoder_start_id"),
    (Variants, dict(kv_latent_dim=16), "kv_latent_dim"),  # a latent without MLA
    (Variants, dict(norm="batch"), "norm"),
    (Variants, dict(norm_first="yes"), "norm_first"),
    (PaperModel, dict(d_model=30, n_heads=4), "d_model"),
])
def test_each_group_checks_its_own_fields(group, bad, field):
    """Invariant: each group refuses a bad value of its own fields on its own, with a ValueError naming the field;
    TransformerConfig, made of the groups, refuses it with the same message."""
    with pytest.raises(ValueError, match=rf"^{field}\b") as alone:
        group(**bad)
    with pytest.raises(ValueError, match=rf"^{field}\b") as joined:
        TransformerConfig(**bad)
    assert str(alone.value) == str(joined.value)


@pytest.mark.parametrize("tokens, encoder, decoder", [
    (SpecialTokens(), True, True),  # the paper's <pad>, <s>, </s>: padding is masked in both stacks
    (SpecialTokens(pad_id=2, bos_id=2, eos_id=2), False, False),  # GPT-2: one <|endoftext|>, no padding token
    (SpecialTokens(pad_id=3, bos_id=0, eos_id=0, decoder_start_id=3), True, False),  # Marian: the decoder starts
])                                                                                    # from its pad
def test_the_padding_rules_belong_to_the_special_tokens(tokens, encoder, decoder):
    """Oracle: the families' rules, by hand (GPT-2 masks nothing; Marian's decoder input starts with a pad, a real
    token). The model's key mask follows them: None where a stack does not mask, else False exactly at the pads."""
    assert (tokens.masks_padding(), tokens.masks_padding(decoder=True)) == (encoder, decoder)
    cfg = TransformerConfig(vocab_size=8, d_model=8, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=8,
                            pad_id=tokens.pad_id, bos_id=tokens.bos_id, eos_id=tokens.eos_id,
                            decoder_start_id=tokens.decoder_start_id)
    from transformer.model import Transformer
    model = Transformer(cfg)
    ids = torch.tensor([[5, 6, tokens.pad_id, tokens.pad_id]])
    for is_decoder, masks in ((False, encoder), (True, decoder)):
        mask = model.key_mask(ids, decoder=is_decoder)
        assert (mask is not None) == masks
        if masks:
            assert mask.reshape(-1).tolist() == [True, True, False, False]


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_a_shipped_flat_config_json_loads_and_writes_back_the_same_model(tmp_path, name):
    """Invariant (a guard for the split, not a bug fix): each shipped config.json, written flat by the code before
    the groups (some before layer_norm_eps or attention_bias existed), loads; to_dict writes its keys back with
    the same values, and the newer fields at their defaults (attention_bias True for a file without it); a
    checkpoint saved from the loaded model loads to the same logits, bit for bit."""
    from tests.conftest import CHECKPOINTS as ROOT

    stored = json.loads((ROOT / name / "config.json").read_text())["model"]
    model, tokenizer, _ = load_checkpoint(ROOT / name, device="cpu")
    assert model.config == TransformerConfig.from_dict(stored)
    written, default = model.config.to_dict(), TransformerConfig().to_dict()
    assert {k: written[k] for k in stored} == stored  # the old file's keys, with their values
    newer = set(written) - set(stored)  # fields the file is older than: their defaults (attention_bias: True)
    assert {k: written[k] for k in newer} == {k: True if k == "attention_bias" else default[k] for k in newer}
    again, _, _ = load_checkpoint(save_checkpoint(tmp_path / name, model, tokenizer), device="cpu")
    assert again.config == model.config
    tokens = torch.tensor([[model.config.bos_id, 5, 6, 7]])
    inputs = (tokens, tokens) if model.config.is_encoder_decoder else (tokens,)
    with torch.no_grad():
        torch.testing.assert_close(again(*inputs).logits, model(*inputs).logits, atol=0, rtol=0)


def test_bert_token_types_are_a_block_of_their_own():
    """Oracle: BERT's embedding sum by hand, word embedding + position vector + token-type row 0 (every token is
    segment A), equals what the model adds before its norm; the token types are their own module (TokenTypes), not
    a bare parameter of Transformer."""
    from transformer.embeddings import TokenTypes
    from transformer.model import Transformer

    cfg = TransformerConfig(arch="encoder-only", vocab_size=12, d_model=8, n_heads=2, n_encoder_layers=1,
                            n_decoder_layers=0, d_ff=8, dropout=0.0, pos_encoding="learned", type_vocab_size=2,
                            scale_embeddings=False)
    model = Transformer(cfg).eval()
    assert isinstance(model.token_types, TokenTypes) and "token_types.weight" in model.state_dict()
    ids = torch.tensor([[3, 4, 5]])
    by_hand = model.embed.weight[ids] + model.pos_encoding.table[:3] + model.token_types.weight[0]
    torch.testing.assert_close(model._embed(ids), by_hand, atol=0, rtol=0)


def test_the_clis_model_flags_come_in_the_configs_groups(capsys):
    """Invariant: `python -m transformer.train --help` lists the model's flags under one heading per config group,
    the paper's first, each group's flags under its own heading; the same flags as before the groups (every field but
    vocab_size and the special tokens, which the tokenizer gives)."""
    from transformer.train.cli import MODEL_FLAGS, parse_args

    with pytest.raises(SystemExit):
        parse_args(["--help"])
    text = capsys.readouterr().out
    headings = [text.index(h) for h in ("model: the paper's", "model: later variants", "model: outside families'")]
    assert headings == sorted(headings)
    sections = dict(zip((PaperModel, Variants, FamilyOptions), [text[a:b] for a, b in zip(
        headings, headings[1:] + [text.index("training (TrainConfig)")])]))
    for group, section in sections.items():
        assert all(re.search(rf"--{name.replace('_', '-')}[ ,\n]", section) for name in names(group)
                   if name != "vocab_size")
    assert {f.name for f in MODEL_FLAGS} == set(names(TransformerConfig)) - {"vocab_size", *names(SpecialTokens)}


GROUPS = [PaperModel, Variants, SpecialTokens, EmbeddingOptions, SublayerOptions, PositionOptions]


@pytest.mark.parametrize("group", GROUPS, ids=lambda g: g.__name__)
def test_each_group_checks_every_field_from_one_table(group):
    """Invariant: each group's CHECKS table names each of its fields once, in the order they are declared (a new
    field without a check fails here), and a value of the wrong type for every field is refused naming it."""
    assert list(group.CHECKS) == names(group)
    for name in names(group):
        with pytest.raises(ValueError, match=rf"^{name}\b"):
            TransformerConfig(**{name: object()})
