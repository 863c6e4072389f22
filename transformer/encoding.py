"""How a text becomes the ids a model reads: the one owner of the encoder-decoder input rule.

An encoder-decoder model reads `encode(source) + [</s>]`; its decoder reads `<s> + target` (teacher forcing: the
target shifted right) and is scored on `target + </s>`. A decoder-only model reads the tokens as they are.
Everything above this module (data, training, generation, the probe, evaluation) builds ids through these
functions, so the rule is written once. Imports only the config and the tokenizers.

`encode_input` adds the cut policy of a text too long for the model (what the app shows, through the probe).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from .config import TransformerConfig
from .tokenization import unknown_characters


def source_ids(tokenizer, text: str, config: TransformerConfig) -> list[int]:
    """What the encoder reads: the source's tokens, then </s> (encoder-decoder); the tokens alone (decoder-only)."""
    ids = tokenizer.encode(text)
    return with_eos(ids, config)


def target_tokens(tokenizer, text: str) -> list[int]:
    """A target text's tokens: a tokenizer with a target language of its own (Marian's: `encode_target`, the target
    SentencePiece model) cuts it with that; every other tokenizer reads both sides alike."""
    return getattr(tokenizer, "encode_target", tokenizer.encode)(text)


def with_eos(ids: list[int], config: TransformerConfig) -> list[int]:
    """Already-encoded source tokens as the encoder reads them: + [</s>] for an encoder-decoder model; between
    bos and eos ([CLS] ... [SEP]) for an encoder-only one (BERT); as they are for a decoder-only one."""
    if config.is_encoder_only:
        return [config.bos_id, *ids, config.eos_id]
    return list(ids) + [config.eos_id] if config.is_encoder_decoder else list(ids)


def decoder_ids(target: list[int], config: TransformerConfig) -> tuple[list[int], list[int]]:
    """(decoder input, decoder target) for the target tokens: <s> + target, and target + </s>.
    <s> is the config's decoder start token (`decoder_start`: bos_id, or Marian's pad)."""
    return [config.decoder_start] + list(target), list(target) + [config.eos_id]


def run_ids(config: TransformerConfig, input_ids: list[int], target_ids: list[int] | None = None
            ) -> tuple[tuple[list[int], ...], list[int]]:
    """What one forward pass of a model of `config` reads, and what labels its last stack's positions: (the model's
    arguments, the token each position of the decoder, or of the encoder-only model, produces or reads).

    An encoder-decoder model reads the source `input_ids` (with its </s>) and <s> + `target_ids`, each position
    labelled by the token it produces (target + </s>); any other model reads `input_ids` alone, labelled by
    themselves. The one way a run's inputs are built: the record, its views and the logit lens call it."""
    if not config.is_encoder_decoder:
        return (list(input_ids),), list(input_ids)
    dec_in, produced = decoder_ids(list(target_ids or []), config)
    return (list(input_ids), dec_in), produced


def decoder_batch(config: TransformerConfig, tokens: Tensor) -> tuple[Tensor, ...]:
    """The model's arguments for a batch of decoder inputs `tokens` (B, T) read as they are: (tokens,), or for an
    encoder-decoder model an empty source (</s> alone, (B, 1)) and the tokens as its decoder input."""
    if not config.is_encoder_decoder:
        return (tokens,)
    return torch.tensor([with_eos([], config)] * tokens.size(0), device=tokens.device), tokens


def most_source_tokens(config: TransformerConfig) -> int:
    """The most text tokens the encoder of `config` takes: max_len - 1, leaving room for </s>; max_len - 2 for an
    encoder-only model, leaving room for [CLS] and [SEP]; a decoder-only model's input takes max_len."""
    if config.is_encoder_only:
        return config.max_len - 2
    return config.max_len - 1 if config.is_encoder_decoder else config.max_len


def most_target_tokens(config: TransformerConfig) -> int:
    """The most target tokens the decoder of an encoder-decoder `config` reads after <s> (max_len - 1): also the most
    tokens a greedy translation can produce, since each step's decoder input is <s> + the outputs so far."""
    return config.max_len - 1


def decoder_length(n_target: int) -> int:
    """How many positions the decoder runs for a target of `n_target` tokens: <s> + target in, target + </s> out.
    Also the generation length that lets a model produce the target and its </s>."""
    return n_target + 1


def max_len_for(longest_source: int, longest_target: int) -> int:
    """The max_len a task's model is built with: its longest text and room for the two markers <s> and </s>."""
    return max(longest_source, longest_target) + 2


def source_batch(tokenizer, sources: list[str], config: TransformerConfig) -> Tensor:
    """(B, S) the encoder's batch of source texts: each `source_ids`, right-padded with pad_id."""
    return pad([source_ids(tokenizer, s, config) for s in sources], config.pad_id)


def pad(sequences: list[list[int]], pad_id: int) -> Tensor:
    """(B, longest) LongTensor, right-padded with pad_id."""
    out = torch.full((len(sequences), max(len(s) for s in sequences)), pad_id, dtype=torch.long)
    for i, s in enumerate(sequences):
        out[i, : len(s)] = torch.tensor(s, dtype=torch.long)
    return out


def pair_batch(tokenizer, pairs: list[tuple[str, str]], config: TransformerConfig) -> tuple[Tensor, Tensor, Tensor]:
    """(src, tgt_in, tgt_out) for (source, target) text pairs, each padded to its longest row:
    src (B, S) = source + </s>; tgt_in (B, T) = <s> + target; tgt_out (B, T) = target + </s>."""
    return id_pair_batch([(tokenizer.encode(s), target_tokens(tokenizer, t)) for s, t in pairs], config)


def id_pair_batch(pairs: list[tuple[list[int], list[int]]], config: TransformerConfig) -> tuple[Tensor, Tensor, Tensor]:
    """pair_batch for pairs that are already token ids."""
    src = pad([with_eos(s, config) for s, _ in pairs], config.pad_id)  # (B, S)
    dec = [decoder_ids(t, config) for _, t in pairs]
    return src, pad([i for i, _ in dec], config.pad_id), pad([o for _, o in dec], config.pad_id)  # (B, T) each


@dataclass
class EncodedInput:
    """A text as a model reads it: `ids` (with `</s>` for an encoder source), and what the cut left out."""

    ids: list[int]
    n_text_tokens: int  # tokens of the whole text, before any cut
    n_kept: int  # tokens of the text that were kept
    limit: int  # the most text tokens this reader takes
    unknown: str  # characters of the text the tokenizer does not know (they became <unk>)
    what: str = "input"

    @property
    def truncated(self) -> bool:
        return self.n_kept < self.n_text_tokens

    def cut_message(self) -> str:
        """One sentence saying what was cut, or "" when nothing was."""
        if not self.truncated:
            return ""
        return (f"The {self.what} has {self.n_text_tokens} tokens; this model reads at most {self.limit}, so it was "
                f"cut to its {'first' if self.what != 'prompt' else 'last'} {self.n_kept}.")


def encode_input(model, tokenizer, text: str, *, max_tokens: int | None = None,
                 role: str = "input") -> EncodedInput:
    """Encode `text` for `model` (anything with a `.config`), cutting it to what the model (and `max_tokens`, a display limit) can read.

    role "input": the source of an encoder-decoder model (`text + </s>`, first tokens kept) or the whole input of
    a decoder-only model (last tokens kept) or `[CLS] text [SEP]` for an encoder-only one (first tokens kept);
    role "target": the decoder's target of an encoder-decoder model (room is left for `<s>`; first tokens kept).
    """
    cfg = model.config
    if not text:
        raise ValueError(f"the {role} is empty: type some text")
    ids = target_tokens(tokenizer, text) if role == "target" else tokenizer.encode(text)
    keep_last = cfg.arch == "decoder-only" and role == "input"
    limit = most_source_tokens(cfg) if role == "input" else most_target_tokens(cfg)  # room for </s>, [CLS] [SEP] or <s>
    limit = limit if max_tokens is None else min(limit, max_tokens)
    kept = ids[-limit:] if keep_last else ids[:limit]
    what = "prompt" if keep_last else role
    read = with_eos(kept, cfg) if role == "input" else kept
    return EncodedInput(read, len(ids), len(kept), limit, unknown_characters(tokenizer, text), what)
