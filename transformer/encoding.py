"""How a text becomes the ids a model reads: the one owner of the encoder-decoder input rule.

An encoder-decoder model reads `encode(source) + [</s>]`; its decoder reads `<s> + target` (teacher forcing: the
target shifted right) and is scored on `target + </s>`. A decoder-only model reads the tokens as they are.
Everything above this module (data, training, generation, the probe, evaluation) builds ids through these
functions, so the rule is written once. Imports only the config and the tokenizers.
"""
from __future__ import annotations

import torch
from torch import Tensor

from .config import TransformerConfig


def source_ids(tokenizer, text: str, config: TransformerConfig) -> list[int]:
    """What the encoder reads: the source's tokens, then </s> (encoder-decoder); the tokens alone (decoder-only)."""
    ids = tokenizer.encode(text)
    return with_eos(ids, config)


def with_eos(ids: list[int], config: TransformerConfig) -> list[int]:
    """Already-encoded source tokens as the encoder reads them: + [</s>] for an encoder-decoder model."""
    return list(ids) + [config.eos_id] if config.is_encoder_decoder else list(ids)


def decoder_ids(target: list[int], config: TransformerConfig) -> tuple[list[int], list[int]]:
    """(decoder input, decoder target) for the target tokens: <s> + target, and target + </s>."""
    return [config.bos_id] + list(target), list(target) + [config.eos_id]


def pad(sequences: list[list[int]], pad_id: int) -> Tensor:
    """(B, longest) LongTensor, right-padded with pad_id."""
    out = torch.full((len(sequences), max(len(s) for s in sequences)), pad_id, dtype=torch.long)
    for i, s in enumerate(sequences):
        out[i, : len(s)] = torch.tensor(s, dtype=torch.long)
    return out


def pair_batch(tokenizer, pairs: list[tuple[str, str]], config: TransformerConfig) -> tuple[Tensor, Tensor, Tensor]:
    """(src, tgt_in, tgt_out) for (source, target) text pairs, each padded to its longest row:
    src (B, S) = source + </s>; tgt_in (B, T) = <s> + target; tgt_out (B, T) = target + </s>."""
    return id_pair_batch([(tokenizer.encode(s), tokenizer.encode(t)) for s, t in pairs], config)


def id_pair_batch(pairs: list[tuple[list[int], list[int]]], config: TransformerConfig) -> tuple[Tensor, Tensor, Tensor]:
    """pair_batch for pairs that are already token ids."""
    src = pad([with_eos(s, config) for s, _ in pairs], config.pad_id)  # (B, S)
    dec = [decoder_ids(t, config) for _, t in pairs]
    return src, pad([i for i, _ in dec], config.pad_id), pad([o for _, o in dec], config.pad_id)  # (B, T) each
