"""Words, not subwords: which tokens make up each word, and attention merged from tokens into words.

The one owner of two rules, shared by the Attention tab's "words" switch and the translation alignment scores:

- `word_spans`: a token starts a new word when its text starts with whitespace (our BPE's Metaspace marker "▁"
  and GPT-2's "Ġ" both become a space in `id_to_token`; a raw "▁" is read as one too), or it follows a special
  token, or it is the first token. A token made only of whitespace joins the word after it, so a run of spaces or a
  newline does not make a word of its own. Special tokens (`<s>`, `</s>`, `<pad>`, `<|endoftext|>`) are words of
  their own; `<unk>` is not special: an unknown character belongs to the word it is in. On a text with words
  separated by single spaces and no space at either end, the text words are exactly `text.split()`, in order
  (`text_words` gives their positions among the spans), whichever tokenizer cut them (char, BPE or GPT-2).
- `merge_to_words`: the weight of query word i on key word j is the sum over word j's key tokens of the weights,
  averaged over word i's query tokens (as Clark et al. 2019, "What does BERT look at?", do). A query word's
  row therefore still sums to 1; the weights of every key word still add up to what its tokens received.
"""
from __future__ import annotations

from typing import Collection, Sequence

import torch
from torch import Tensor

SPECIAL_WORDS = frozenset({"<pad>", "<s>", "</s>", "<|endoftext|>"})  # each is a word of its own
WORD_MARKER = "\u2581"  # the Metaspace marker of a word start, as the `tokenizers` vocabulary spells it


def _starts_word(token: str) -> bool:
    return token[:1].isspace() or token.startswith(WORD_MARKER)


def _is_blank(token: str) -> bool:
    return token.replace(WORD_MARKER, " ").isspace()


def word_spans(tokens: Sequence[str], specials: Collection[str] = SPECIAL_WORDS) -> list[range]:
    """The token positions of each word, in order: ranges that cover 0..len(tokens)-1 once each.

    `tokens` are token texts as the tokenizers' `id_to_token` shows them. Example: ["<s>", "The", " cat", "s",
    " sat", "</s>"] -> [range(0, 1), range(1, 2), range(2, 4), range(4, 5), range(5, 6)].
    """
    spans: list[range] = []
    start = 0
    for t, token in enumerate(tokens):
        if t == 0:
            continue
        before = tokens[t - 1]
        new_word = (token in specials or before in specials
                    or (_starts_word(token) and not _is_blank(before)))  # blanks join the word after them
        if new_word:
            spans.append(range(start, t))
            start = t
    if tokens:
        spans.append(range(start, len(tokens)))
    return spans


def tokenizer_word_spans(tokenizer, ids: Sequence[int], specials: Collection[str] = SPECIAL_WORDS) -> list[range]:
    """word_spans of the tokens of `ids`, read with `tokenizer.id_to_token` (char, BPE and GPT-2 tokenizers)."""
    return word_spans([tokenizer.id_to_token(int(i)) for i in ids], specials)


def word_labels(tokens: Sequence[str], spans: Sequence[range]) -> list[str]:
    """Each word's text: its tokens joined, markers read as spaces, spaces at either end stripped (a word that is
    only whitespace keeps it)."""
    labels = []
    for span in spans:
        text = "".join(tokens[t] for t in span).replace(WORD_MARKER, " ")
        labels.append(text.strip() or text)
    return labels


def text_words(tokens: Sequence[str], spans: Sequence[range], specials: Collection[str] = SPECIAL_WORDS
               ) -> list[int]:
    """Indices into `spans` of the words that are text (not special tokens): the k-th of them is the k-th word of
    the text (`text.split()[k]` for a text with single spaces between words)."""
    return [w for w, span in enumerate(spans) if not (len(span) == 1 and tokens[span.start] in specials)]


def _check_spans(spans: Sequence[range], n: int, axis: str) -> None:
    if not spans or spans[0].start != 0 or spans[-1].stop != n or any(
            len(s) == 0 or s.step != 1 or s.start != prev.stop for prev, s in zip(spans, spans[1:])):
        raise ValueError(f"{axis} spans must cover the {n} {axis} positions in order, each word one or more tokens, "
                         f"got {[(s.start, s.stop) for s in spans]}")


def _membership(spans: Sequence[range], n: int, dtype, device) -> Tensor:
    """(n_words, n) with 1 where token t belongs to word w."""
    member = torch.zeros(len(spans), n, dtype=dtype, device=device)
    for w, span in enumerate(spans):
        member[w, span.start:span.stop] = 1
    return member


def merge_to_words(weights: Tensor, query_spans: Sequence[range], key_spans: Sequence[range]) -> Tensor:
    """Attention between words from attention between tokens: weights (..., T, S) -> (..., W_q, W_k).

    merged[..., i, j] = mean over query tokens t of word i of ( sum over key tokens s of word j of weights[..., t, s] ).
    `query_spans` cover the T query positions and `key_spans` the S key positions (`word_spans`); for
    self-attention pass the same spans twice. Rows of the result sum to what the rows of `weights` sum to, on
    average over each word's tokens (1 for attention weights).
    """
    T, S = weights.shape[-2:]
    _check_spans(query_spans, T, "query")
    _check_spans(key_spans, S, "key")
    queries = _membership(query_spans, T, weights.dtype, weights.device)  # (W_q, T)
    queries = queries / queries.sum(-1, keepdim=True)  # mean over a word's query tokens
    keys = _membership(key_spans, S, weights.dtype, weights.device).T  # (S, W_k): sum over a word's key tokens
    return queries @ weights @ keys  # (..., W_q, W_k)


def merge_mask(mask: Tensor, query_spans: Sequence[range], key_spans: Sequence[range]) -> Tensor:
    """A (T, S) bool mask (True = may attend) in words (W_q, W_k): word i may attend to word j when one of its
    query tokens may attend to one of j's key tokens (a causal mask keeps a word's attention to itself)."""
    return merge_to_words(mask.float(), query_spans, key_spans) > 0
