"""Tokenizers: one id per character, or byte-pair encoding trained with the `tokenizers` library.

Both reserve the same special tokens at the same ids, so a model's pad/bos/eos ids never depend on the text.
`encode` adds no special tokens; characters never seen in training become <unk>, never an exception.
GPT2BPETokenizer reads GPT-2's own byte-level BPE (transformer/pretrained/): no <unk>, since any text is bytes.
WordPieceTokenizer reads BERT's.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Iterable

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

SPECIAL_TOKENS = ("<pad>", "<s>", "</s>", "<unk>")
PAD_ID, BOS_ID, EOS_ID, UNK_ID = range(4)


class CharTokenizer:
    """One token per character of the training text."""

    kind = "char"

    def __init__(self, chars: Iterable[str]):
        self.itos = list(SPECIAL_TOKENS) + sorted(set(chars) - set(SPECIAL_TOKENS))
        self.stoi = {s: i for i, s in enumerate(self.itos)}

    @classmethod
    def from_text(cls, text: str, max_size: int | None = None) -> "CharTokenizer":
        """One id per distinct character of `text`; with `max_size`, the vocabulary (special tokens included) holds
        at most max_size ids: the most frequent characters (ties: the lower code point), the rarer ones become
        <unk>. A text of a million distinct code points then cannot make a million-row embedding."""
        if max_size is None:
            return cls(set(text))
        if max_size <= len(SPECIAL_TOKENS):
            raise ValueError(f"max_size must be more than the {len(SPECIAL_TOKENS)} special tokens, got {max_size}")
        counts = Counter(text)
        return cls(sorted(counts, key=lambda c: (-counts[c], c))[: max_size - len(SPECIAL_TOKENS)])

    @property
    def vocab_size(self) -> int:
        return len(self.itos)

    def encode(self, text: str) -> list[int]:
        return [self.stoi.get(c, UNK_ID) for c in text]

    def decode(self, ids: Iterable[int]) -> str:
        return "".join(self.itos[i] for i in ids if i not in (PAD_ID, BOS_ID, EOS_ID))

    def id_to_token(self, i: int) -> str:
        return self.itos[i]

    def to_dict(self) -> dict:
        return {"kind": self.kind, "special_tokens": list(SPECIAL_TOKENS), "vocab": self.itos[len(SPECIAL_TOKENS):]}

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), ensure_ascii=False, indent=1), encoding="utf-8")


class _TokenizersWrapper:
    """What a tokenizer built on the `tokenizers` library does the same way whatever its model: size, encoding
    without special tokens, and its tokenizer.json."""

    tokenizer: Tokenizer

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.get_vocab_size()

    def encode(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False).ids

    def to_dict(self) -> dict:
        return json.loads(self.tokenizer.to_str())

    def save(self, path: str | Path) -> None:
        self.tokenizer.save(str(path))


class BPETokenizer(_TokenizersWrapper):
    """Byte-pair encoding (the paper uses BPE for English-German, section 5.1), trained by `tokenizers`."""

    kind = "bpe"

    def __init__(self, tokenizer: Tokenizer):
        self.tokenizer = tokenizer
        for i, tok in enumerate(SPECIAL_TOKENS):
            if tokenizer.token_to_id(tok) != i:
                raise ValueError(f"BPE tokenizer must have {tok} at id {i}")

    @classmethod
    def train(cls, texts: Iterable[str], vocab_size: int) -> "BPETokenizer":
        tok = Tokenizer(models.BPE(unk_token="<unk>"))
        tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="never")
        tok.decoder = decoders.Metaspace(prepend_scheme="never")
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(SPECIAL_TOKENS), show_progress=False)
        tok.train_from_iterator(texts, trainer)
        return cls(tok)

    def decode(self, ids: Iterable[int]) -> str:
        return self.tokenizer.decode([i for i in ids if i not in (PAD_ID, BOS_ID, EOS_ID)], skip_special_tokens=False)

    def id_to_token(self, i: int) -> str:
        return self.tokenizer.id_to_token(i).replace("\u2581", " ")


class GPT2BPETokenizer(_TokenizersWrapper):
    """GPT-2's byte-level BPE: text -> UTF-8 bytes, each byte shown as a printable character (a space is 'Ġ',
    a newline 'Ċ'), then merges. Every string is encodable, so there is no <unk> (`unk_id` is None).

    Built from a Hugging Face tokenizer.json or from GPT-2's vocab.json + merges.txt. Its one special token,
    <|endoftext|>, is matched where it appears literally in the text, as Hugging Face's GPT-2 tokenizer does.
    """

    kind = "gpt2-bpe"
    unk_id = None
    ENDOFTEXT = "<|endoftext|>"

    def __init__(self, tokenizer: Tokenizer):
        if not _is_byte_level(json.loads(tokenizer.to_str())):
            raise ValueError("a GPT-2 tokenizer needs a byte-level BPE (ByteLevel pre-tokenizer and decoder)")
        self.tokenizer = tokenizer
        self._bytes = decoders.ByteLevel()  # shows one token's bytes as text, for id_to_token

    @classmethod
    def from_file(cls, path: str | Path) -> "GPT2BPETokenizer":
        """From a Hugging Face tokenizer.json."""
        return cls(Tokenizer.from_file(str(path)))

    @classmethod
    def from_vocab_merges(cls, vocab: str | Path, merges: str | Path) -> "GPT2BPETokenizer":
        """From GPT-2's original files: vocab.json (token -> id) and merges.txt (one merge per line)."""
        tok = Tokenizer(models.BPE.from_file(str(vocab), str(merges)))
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        if tok.token_to_id(cls.ENDOFTEXT) is not None:
            tok.add_special_tokens([cls.ENDOFTEXT])
        return cls(tok)

    def decode(self, ids: Iterable[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=False)

    def id_to_token(self, i: int) -> str:
        """The token as text: 'Ġthe' -> ' the', 'Ċ' -> a newline; part of a multi-byte character -> '\ufffd'."""
        return self._bytes.decode([self.tokenizer.id_to_token(i)])


BERT_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


class WordPieceTokenizer(_TokenizersWrapper):
    """BERT's WordPiece (Wu et al. 2016; Devlin et al. 2019), with its five special tokens; `encode` adds none.

    Text is normalised (lower-cased and accents stripped for an uncased model), split on spaces and punctuation, and
    each word greedily into the longest pieces of the vocabulary, a piece inside a word written "##ing". A model
    input is [CLS] pieces [SEP] (transformer.encoding.with_eos, the model's bos and eos); [MASK] written in the
    text is the mask token.
    """

    kind = "wordpiece"

    def __init__(self, tokenizer: Tokenizer):
        ids = {token: tokenizer.token_to_id(token) for token in BERT_SPECIALS}
        missing = [token for token, i in ids.items() if i is None]
        if missing:
            raise ValueError(f"a BERT tokenizer needs the special tokens {', '.join(missing)}")
        self.tokenizer = tokenizer
        self.pad_id, self.unk_id, self.cls_id, self.sep_id, self.mask_id = (ids[t] for t in BERT_SPECIALS)
        self.mask_token = "[MASK]"

    @classmethod
    def from_file(cls, path: str | Path) -> "WordPieceTokenizer":
        """From a Hugging Face tokenizer.json."""
        return cls(Tokenizer.from_file(str(path)))

    @classmethod
    def from_vocab(cls, vocab: str | Path, lowercase: bool = True) -> "WordPieceTokenizer":
        """From BERT's original vocab.txt (one piece per line, its id the line number), with BERT's normaliser,
        pre-tokenizer and [CLS] ... [SEP] template: what `transformers`' BertTokenizerFast builds from it."""
        pieces = Path(vocab).read_text(encoding="utf-8").splitlines()
        tok = Tokenizer(models.WordPiece({p: i for i, p in enumerate(pieces)}, unk_token="[UNK]",
                                         max_input_chars_per_word=100))
        tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True,
                                                    strip_accents=None, lowercase=lowercase)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece(prefix="##")
        tok.add_special_tokens([p for p in BERT_SPECIALS if p in set(pieces)])
        cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
        if cls_id is not None and sep_id is not None:
            tok.post_processor = processors.TemplateProcessing(
                single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)])
        return cls(tok)

    def decode(self, ids: Iterable[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=False)

    def id_to_token(self, i: int) -> str:
        """The piece as the vocabulary writes it: "play", "##ing", "[CLS]"."""
        return self.tokenizer.id_to_token(i)


def _is_byte_level(data: dict) -> bool:
    """A `tokenizers` JSON whose decoder is ByteLevel: GPT-2's scheme (our BPETokenizer uses Metaspace)."""
    return (data.get("decoder") or {}).get("type") == "ByteLevel"


def unknown_characters(tokenizer, text: str) -> str:
    """The distinct characters of `text` that the tokenizer encodes as <unk>, sorted ("" for byte-level BPE)."""
    unk_id = getattr(tokenizer, "unk_id", UNK_ID)
    if unk_id is None:
        return ""
    return "".join(sorted({c for c in text if unk_id in tokenizer.encode(c)}))


def tokenizer_from_dict(data: dict) -> CharTokenizer | BPETokenizer | GPT2BPETokenizer | WordPieceTokenizer:
    """Rebuild a tokenizer from its tokenizer.json contents; raises ValueError on anything unexpected."""
    if data.get("kind") == "char":
        if data.get("special_tokens") != list(SPECIAL_TOKENS) or not isinstance(data.get("vocab"), list):
            raise ValueError("char tokenizer.json must hold special_tokens and a vocab list")
        return CharTokenizer(data["vocab"])
    if "model" in data and _is_byte_level(data):
        return GPT2BPETokenizer(Tokenizer.from_str(json.dumps(data)))
    if (data.get("model") or {}).get("type") == "WordPiece":
        return WordPieceTokenizer(Tokenizer.from_str(json.dumps(data)))
    if "model" in data:
        return BPETokenizer(Tokenizer.from_str(json.dumps(data)))
    raise ValueError("tokenizer.json is neither a char tokenizer nor a `tokenizers` BPE tokenizer")


def load_tokenizer(path: str | Path) -> CharTokenizer | BPETokenizer | GPT2BPETokenizer:
    return tokenizer_from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
