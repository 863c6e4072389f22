"""Tokenizers: round trips, unknown characters, fixed special ids, save/load through load_tokenizer."""
from __future__ import annotations

import json

import pytest

from transformer.tokenization import (BOS_ID, EOS_ID, PAD_ID, SPECIAL_TOKENS, UNK_ID, BPETokenizer, CharTokenizer,
                                      load_tokenizer, tokenizer_from_dict)

CORPUS = ("The quick brown fox jumps over the lazy dog.\n"
          "She sells sea shells by the sea shore; the shells she sells are sea shells, I'm sure.\n"
          "How much wood would a woodchuck chuck if a woodchuck could chuck wood?\n") * 4


@pytest.fixture(scope="module")
def bpe() -> BPETokenizer:
    return BPETokenizer.train([CORPUS], vocab_size=120)


@pytest.fixture
def char() -> CharTokenizer:
    return CharTokenizer.from_text(CORPUS)


def test_special_ids_are_fixed():
    """Oracle: DESIGN.md's ids: pad 0, bos 1, eos 2, unk 3, for the module constants and both tokenizers."""
    assert (PAD_ID, BOS_ID, EOS_ID, UNK_ID) == (0, 1, 2, 3)
    assert SPECIAL_TOKENS == ("<pad>", "<s>", "</s>", "<unk>")


@pytest.mark.parametrize("kind", ["char", "bpe"])
def test_special_tokens_sit_at_their_ids(kind, char, bpe):
    """Invariant: both tokenizers map ids 0-3 to <pad>, <s>, </s>, <unk>, whatever text they were built from."""
    tok = char if kind == "char" else bpe
    assert [tok.id_to_token(i) for i in range(4)] == list(SPECIAL_TOKENS)


@pytest.mark.parametrize("kind", ["char", "bpe"])
@pytest.mark.parametrize("text", [CORPUS, "the sea wood", "  shells  by the\n\nshore ", "z", ""])
def test_round_trip_of_known_characters(kind, text, char, bpe):
    """Invariant: decode(encode(text)) == text for any text made of characters seen in training, including
    runs of spaces, newlines and leading/trailing spaces."""
    tok = char if kind == "char" else bpe
    assert tok.decode(tok.encode(text)) == text


@pytest.mark.parametrize("kind", ["char", "bpe"])
def test_unknown_characters_become_unk(kind, char, bpe):
    """Invariant: a character never seen in training encodes to <unk> (id 3), never an exception; the known
    characters around it are kept."""
    tok = char if kind == "char" else bpe
    ids = tok.encode("sea\u00e9\u4e2d")
    assert ids[-2:] == [UNK_ID, UNK_ID]
    assert tok.decode(ids[:-2]) == "sea"


def test_char_tokenizer_ids_by_hand():
    """Oracle: specials take 0-3, then the distinct characters in sorted order: ' '=4, 'a'=5, 'b'=6, 'c'=7."""
    tok = CharTokenizer.from_text("cab cab")
    assert tok.vocab_size == 8
    assert tok.encode("abc a") == [5, 6, 7, 4, 5]
    assert tok.encode("x") == [UNK_ID]


def test_encode_adds_no_special_tokens_and_decode_drops_pad_bos_eos(char, bpe):
    """Invariant (DESIGN.md): encode adds no bos/eos; decode skips pad, bos and eos so model outputs read as text."""
    for tok in (char, bpe):
        ids = tok.encode("the sea")
        assert not {PAD_ID, BOS_ID, EOS_ID} & set(ids)
        assert tok.decode([BOS_ID] + ids + [EOS_ID, PAD_ID, PAD_ID]) == "the sea"


def test_bpe_merges_shorten_the_training_text(bpe, char):
    """Invariant: BPE learns merges, so the training text takes fewer tokens than characters; vocab_size is
    the size it was trained to."""
    assert bpe.vocab_size == 120
    assert len(bpe.encode(CORPUS)) < 0.6 * len(char.encode(CORPUS))


@pytest.mark.parametrize("kind", ["char", "bpe"])
def test_save_and_load_tokenizer_give_the_same_encodings(kind, char, bpe, tmp_path):
    """Invariant: load_tokenizer(save(tok)) encodes and decodes every text exactly as tok does, with the same
    kind and vocab_size."""
    tok = char if kind == "char" else bpe
    path = tmp_path / "tokenizer.json"
    tok.save(path)
    loaded = load_tokenizer(path)
    assert type(loaded) is type(tok) and loaded.kind == kind and loaded.vocab_size == tok.vocab_size
    for text in (CORPUS, "wood chuck \u00e9", " sure?\n"):
        assert loaded.encode(text) == tok.encode(text)
        assert loaded.decode(tok.encode(text)) == tok.decode(tok.encode(text))


def test_char_tokenizer_saves_non_ascii_as_text(tmp_path):
    """Invariant: a char vocabulary with non-ASCII characters survives save/load (UTF-8 on disk)."""
    tok = CharTokenizer.from_text("caf\u00e9 \u00fcber \u4e2d")
    tok.save(tmp_path / "t.json")
    assert "\u00e9" in (tmp_path / "t.json").read_text(encoding="utf-8")
    assert load_tokenizer(tmp_path / "t.json").encode("\u00e9\u4e2d") == tok.encode("\u00e9\u4e2d")


@pytest.mark.parametrize("data", [
    {"kind": "char", "special_tokens": ["<pad>"], "vocab": ["a"]},
    {"kind": "char", "special_tokens": list(SPECIAL_TOKENS), "vocab": "abc"},
    {"kind": "wordpiece"},
])
def test_tokenizer_from_dict_rejects_bad_files(data):
    """Invariant: a tokenizer.json that is not one of ours is a ValueError (checkpoint loading turns it into a
    CheckpointError), not a half-built tokenizer."""
    with pytest.raises(ValueError):
        tokenizer_from_dict(data)


def test_bpe_tokenizer_without_our_special_ids_is_refused(tmp_path):
    """Invariant: a `tokenizers` file whose specials are not at ids 0-3 is refused, so pad/bos/eos never move."""
    from tokenizers import Tokenizer, models

    other = Tokenizer(models.BPE(vocab={"a": 0, "<pad>": 1, "<s>": 2, "</s>": 3, "<unk>": 4}, merges=[],
                                 unk_token="<unk>"))
    with pytest.raises(ValueError, match="<pad> at id 0"):
        tokenizer_from_dict(json.loads(other.to_str()))
