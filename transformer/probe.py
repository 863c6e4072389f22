"""Run a model on one input and collect every attention pattern with the tokens that label its axes."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from .generate import generate
from .model import Transformer
from .tokenization import unknown_characters

KINDS = ("encoder self", "decoder self", "cross")


@dataclass
class AttentionRecord:
    """Attention of one example. Each pattern is (layers, heads, queries, keys), on the CPU.

    Decoder self-attention is labelled by the decoder's input tokens; cross-attention rows by the token that
    each decoder position produces (so in `reverse`, output "c" looking at source "c" lies on the anti-diagonal).
    """

    source_tokens: list[str]  # encoder input (encoder-decoder) or the text (decoder-only)
    decoder_tokens: list[str]  # decoder input: <s> + target (encoder-decoder) or the text (decoder-only)
    output_tokens: list[str]  # what each decoder position predicts: target + </s> (encoder-decoder)
    patterns: dict[str, Tensor]  # kind -> (L, H, T, S)
    truncated: bool
    unknown_chars: str  # characters of the input that the tokenizer does not know

    def axes(self, kind: str) -> tuple[list[str], list[str]]:
        """(query labels, key labels) of a kind of attention."""
        return {"encoder self": (self.source_tokens, self.source_tokens),
                "decoder self": (self.decoder_tokens, self.decoder_tokens),
                "cross": (self.output_tokens, self.source_tokens)}[kind]


def _encode(tokenizer, text: str, cap: int) -> tuple[list[int], bool, str]:
    ids = tokenizer.encode(text)
    unknown = unknown_characters(tokenizer, text)
    return ids[:cap], len(ids) > cap, unknown


@torch.no_grad()
def record_attention(model: Transformer, tokenizer, text: str, target: str | None = None,
                     max_tokens: int = 64) -> AttentionRecord:
    """Attention of `model` on `text` (and, for encoder-decoder, `target`: the model's own greedy output when None).

    Inputs longer than max_tokens (or the model's max_len) are truncated; `truncated` says so.
    """
    cfg, name = model.config, tokenizer.id_to_token
    if not text:
        raise ValueError("the input is empty: type some text")
    cap = min(max_tokens, cfg.max_len - 1)
    ids, truncated, unknown = _encode(tokenizer, text, cap)
    if not cfg.is_encoder_decoder:
        maps = model(torch.tensor([ids], device=model.device), return_attention=True).attention
        tokens = [name(i) for i in ids]
        patterns = {"decoder self": torch.stack(maps.decoder_self)[:, 0].cpu()}
        return AttentionRecord(tokens, tokens, tokens[1:] + [""], patterns, truncated, unknown)
    src = ids + [cfg.eos_id]
    if target is None or target == "":
        out = [s.token_id for s in generate(model, src, cap)]
    else:
        out, cut, unknown_target = _encode(tokenizer, target, cap)
        truncated, unknown = truncated or cut, "".join(sorted(set(unknown + unknown_target)))
    dec_in = [cfg.bos_id] + out
    maps = model(torch.tensor([src], device=model.device), torch.tensor([dec_in], device=model.device),
                 return_attention=True).attention
    patterns = {"encoder self": torch.stack(maps.encoder_self)[:, 0].cpu(),  # (L, H, S, S)
                "decoder self": torch.stack(maps.decoder_self)[:, 0].cpu(),  # (L, H, T, T)
                "cross": torch.stack(maps.cross)[:, 0].cpu()}  # (L, H, T, S)
    return AttentionRecord([name(i) for i in src], [name(i) for i in dec_in],
                           [name(i) for i in out + [cfg.eos_id]], patterns, truncated, unknown)
