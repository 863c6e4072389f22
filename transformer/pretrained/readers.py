"""The tokenizer readers the families' specs name: `read(directory, paths)` -> our tokenizer, from the files the
spec's `Tokenizer.files` found (family.read_tokenizer turns any error into a CheckpointError naming them)."""
from __future__ import annotations

from pathlib import Path

from ..tokenization import GPT2BPETokenizer, WordPieceTokenizer
from ..tokenization_marian import MarianTokenizer
from .weights import read_json


def byte_level_bpe(directory: Path, paths: list[Path]) -> GPT2BPETokenizer:
    """tokenizer.json, or GPT-2's original vocab.json + merges.txt, as a byte-level BPE (a SentencePiece-style
    tokenizer.json is refused)."""
    return GPT2BPETokenizer.from_file(paths[0]) if len(paths) == 1 else GPT2BPETokenizer.from_vocab_merges(*paths)


def wordpiece(directory: Path, paths: list[Path]) -> WordPieceTokenizer:
    """tokenizer.json, else vocab.txt with tokenizer_config.json's do_lower_case (True when absent: uncased)."""
    if paths[0].name == "tokenizer.json":
        return WordPieceTokenizer.from_file(paths[0])
    settings = directory / "tokenizer_config.json"
    lowercase = read_json(settings).get("do_lower_case", True) if settings.is_file() else True
    return WordPieceTokenizer.from_vocab(paths[0], lowercase=lowercase is not False)


def sentencepiece_pair(directory: Path, paths: list[Path]) -> MarianTokenizer:
    """Marian's two SentencePiece models (source.spm, target.spm) over one vocab.json."""
    return MarianTokenizer.from_directory(directory)
