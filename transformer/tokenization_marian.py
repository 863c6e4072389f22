"""Marian's tokenizers: a SentencePiece model per language (source.spm, target.spm) over one shared vocab.json.

A Marian model (Junczys-Dowmunt et al. 2018; the OPUS-MT models of Tiedemann and Thottingal 2020) cuts the source
text into pieces with the source language's SentencePiece model and the target text with the target's; the model's
ids are the pieces' numbers in vocab.json, which holds both languages' pieces (`</s>` 0, `<unk>` 1, ..., `<pad>`
last). A piece that vocab.json lacks becomes `<unk>`. `encode` gives the source's ids without `</s>` (as every
tokenizer here: `transformer.encoding` appends it); `decode` reads target ids back into text. The ids equal
`transformers`' MarianTokenizer's (tests/unit/test_pretrained_marian.py).
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterable

import sentencepiece

SPIECE_UNDERLINE = "\u2581"  # SentencePiece's mark of a word's start ("▁the")
FILES = ("source.spm", "target.spm", "vocab.json")
LANGUAGE_CODE = re.compile(r"^(>>[^<]*?<<)")  # a multilingual model's target language, ">>spa<<", read as one token


class MarianTokenizer:
    """Source text -> ids through source.spm and vocab.json; target ids -> text through target.spm."""

    kind = "marian-spm"
    SPECIAL = ("</s>", "<unk>", "<pad>")

    def __init__(self, source_spm: bytes, target_spm: bytes, vocab: dict[str, int]):
        missing = [t for t in self.SPECIAL if t not in vocab]
        if missing:
            raise ValueError(f"vocab.json: missing the special tokens {missing}")
        ids = sorted(vocab.values())
        if ids != list(range(len(ids))):
            raise ValueError("vocab.json: the ids must be 0, 1, ..., n - 1, each once")
        self.source = sentencepiece.SentencePieceProcessor(model_proto=source_spm)
        self.target = sentencepiece.SentencePieceProcessor(model_proto=target_spm)
        self.vocab = dict(vocab)
        self.pieces = {i: p for p, i in vocab.items()}
        self.eos_id, self.unk_id, self.pad_id = (vocab[t] for t in self.SPECIAL)
        self._special = re.compile("(" + "|".join(re.escape(t) for t in self.SPECIAL) + ")")

    @classmethod
    def from_directory(cls, directory: str | Path) -> "MarianTokenizer":
        """From a Hugging Face Marian directory's source.spm, target.spm and vocab.json."""
        d = Path(directory)
        vocab = json.loads((d / "vocab.json").read_text(encoding="utf-8"))
        if not isinstance(vocab, dict) or not all(isinstance(i, int) and not isinstance(i, bool)
                                                  for i in vocab.values()):
            raise ValueError("vocab.json: expected an object of piece -> integer id")
        return cls((d / "source.spm").read_bytes(), (d / "target.spm").read_bytes(), vocab)

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def _ids(self, text: str, spm: sentencepiece.SentencePieceProcessor) -> list[int]:
        """A language code at the start, then each stretch between special tokens cut by `spm`; the special
        tokens written in the text are themselves (as in `transformers`)."""
        ids = []
        for n, chunk in enumerate(self._special.split(text)):
            if n % 2:  # the separators: </s>, <unk>, <pad> as typed
                ids.append(self.vocab[chunk])
                continue
            code = LANGUAGE_CODE.match(chunk) if n == 0 else None
            if code:
                ids.append(self.vocab.get(code.group(1), self.unk_id))
                chunk = chunk[code.end():]
            if chunk:
                ids += [self.vocab.get(p, self.unk_id) for p in spm.encode(chunk, out_type=str)]
        return ids

    def encode(self, text: str) -> list[int]:
        """The source text's ids (source.spm), without the </s> the encoder reads after them."""
        return self._ids(text, self.source)

    def encode_target(self, text: str) -> list[int]:
        """The target text's ids (target.spm), for teacher forcing: decoder input = [pad] + these."""
        return self._ids(text, self.target)

    def decode(self, ids: Iterable[int]) -> str:
        """Target ids -> text: the special tokens dropped, the pieces joined by target.spm."""
        skip = {self.eos_id, self.pad_id, self.unk_id}
        pieces = [self.pieces[i] for i in ids if i not in skip and i in self.pieces]
        return self.target.decode_pieces(pieces).replace(SPIECE_UNDERLINE, " ").strip()

    def id_to_token(self, i: int) -> str:
        """The piece as text, its word-start mark shown as a space ("▁casa" -> " casa")."""
        return self.pieces.get(i, "<unk>").replace(SPIECE_UNDERLINE, " ")
