"""The special tokens' ids and the padding rules that come with them: the paper's scheme (<pad>, <s>, </s>, three
tokens of their own) and the families that differ from it (GPT-2, Llama: one token for all; Marian: the decoder
starts from its pad)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .config_checks import check_fields, optional, token_id


@dataclass
class SpecialTokens:
    """pad_id, bos_id and eos_id may coincide: GPT-2 has one special token, <|endoftext|> (50256), that starts and
    ends a text and that Hugging Face also pads with. A pad_id equal to bos_id or eos_id means "no padding token"
    (`has_padding` is False): no key is masked as padding, and generation emits that token only as EOS."""

    pad_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    decoder_start_id: int | None = None  # the token the decoder input starts with; None = bos_id (Marian: its pad)

    CHECKS: ClassVar[dict] = {"pad_id": token_id, "bos_id": token_id, "eos_id": token_id,
                              "decoder_start_id": optional(token_id)}

    def __post_init__(self):
        check_fields(self, SpecialTokens.CHECKS)

    @property
    def decoder_start(self) -> int:
        """The first token of every decoder input: <s> (bos_id) in the paper's scheme; Marian starts with its pad."""
        return self.bos_id if self.decoder_start_id is None else self.decoder_start_id

    @property
    def has_padding(self) -> bool:
        """True when pad_id is a token of its own; False when it is also BOS or EOS (GPT-2: no padding token)."""
        return self.pad_id not in (self.bos_id, self.eos_id)

    def masks_padding(self, decoder: bool = False) -> bool:
        """Whether the encoder's (or, `decoder`, the decoder's) self-attention hides pad keys.

        A model without a padding token of its own (GPT-2, `has_padding` False) masks nothing: its <|endoftext|> in
        a prompt is a real token that later positions attend to. Nor does the decoder of a model whose decoder input
        starts with the pad token (Marian): that first pad is a real token, and padding at the end of a target is
        hidden from every real position by the causal mask already."""
        return self.has_padding and not (decoder and self.decoder_start == self.pad_id)
