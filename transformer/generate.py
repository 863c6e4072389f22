"""Autoregressive decoding: greedy, sampling (temperature, top-k, top-p) and beam search, with a KV cache.

`generate` is a generator yielding one GenerationStep per new token, so a UI can stream the text.
Without a cache every step re-runs the decoder over the whole sequence; with it, each step feeds only the
newest token and attends over stored keys and values. Both give the same tokens (tests/unit/test_generate.py).

Decoding runs under torch.inference_mode(), not just no_grad: no tensor it makes can ever need a gradient, and
skipping autograd's bookkeeping (version counters, view tracking) saves a little on each of the ~600 small
operations of a decoding step. Everything it hands back is plain Python (ids, probabilities).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import torch
from torch import Tensor

from .config import TransformerConfig
from .encoding import most_target_tokens, run_ids, source_ids
from .memory import cache_numbers_per_token
from .model import HeadMask, Transformer
from .sampling import distribution, filter_top_k, filter_top_p, most_likely  # noqa: F401  (the filters: importers)

STRATEGIES = ("greedy", "sample", "beam")


@dataclass
class GenerationStep:
    token_id: int
    prob: float  # probability of token_id under the distribution it was chosen from
    top: list[tuple[int, float]]  # the five most likely tokens of that distribution, (id, prob), and token_id


def never_emitted(config: TransformerConfig) -> list[int]:
    """Ids generation never produces: pad and bos, unless one of them is also EOS (GPT-2's <|endoftext|> is all
    three), in which case producing it ends the text."""
    return sorted({config.pad_id, config.bos_id} - {config.eos_id})


def cache_bytes_per_token(config: TransformerConfig, dtype: torch.dtype = torch.float32) -> int:
    """Bytes the decoder's self-attention cache grows by per generated token, all layers
    (transformer.memory.cache_numbers_per_token numbers of `dtype`)."""
    return cache_numbers_per_token(config) * torch.tensor([], dtype=dtype).element_size()


def context_start(length: int, max_len: int) -> int:
    """The first position a decoder-only model reads when its sequence (prompt + generated so far) is `length`
    tokens long. Up to max_len it reads everything; each time the context would overflow, it drops the oldest
    tokens and keeps the last max_len // 2 (+ 1, the token just added), then grows again."""
    start = 0
    while length - start > max_len:
        start += max_len + 1 - max_len // 2  # the overflow happens at length start + max_len + 1
    return start


class _Decoder:
    """Decoding state of `batch` parallel sequences: the tokens so far and, with use_cache, the KV cache.

    A decoder-only model whose context fills up reads only the tokens from `context_start(length, max_len)` on
    (the one rule, shared with `transformer.probe`); cached and uncached decoding drop at the same point, so they
    stay equal.
    """

    def __init__(self, model: Transformer, ids: list[int], batch: int, use_cache: bool,
                 head_mask: HeadMask | None = None):
        cfg, dev = model.config, model.device
        self.model, self.cfg, self.use_cache, self.head_mask = model, cfg, use_cache, head_mask
        if len(ids) > cfg.max_len:
            raise ValueError(f"input is {len(ids)} tokens long; this model reads at most max_len={cfg.max_len}")
        self.memory = self.memory_mask = None
        *source, first = run_ids(cfg, ids)[0]  # ([the source], <s>) or ([], the prompt): what the decoder reads first
        if not ids:
            raise ValueError("the input is empty: an encoder-decoder model needs at least one source token" if source
                             else "the prompt is empty: a decoder-only model needs at least one token to continue")
        if source:
            with model.switched_off(head_mask):
                memory, mask = model.encode(torch.tensor(source, device=dev))
            self.memory = memory.expand(batch, -1, -1)  # (batch, S, d_model)
            self.memory_mask = None if mask is None else mask.expand(batch, -1, -1, -1)
        self.tokens = torch.tensor([first] * batch, device=dev)  # (batch, 1): <s>; or (batch, T): the prompt
        self.context_start = 0
        banned = never_emitted(cfg)
        self.banned = torch.tensor(banned, device=dev) if banned else None  # ids masked out of every step's logits
        self._reset_cache()

    def _reset_cache(self):
        self.cache = self.model.new_cache() if self.use_cache else None
        self.n_cached = 0

    @property
    def full(self) -> bool:
        """An encoder-decoder target cannot grow past max_len."""
        return self.memory is not None and self.tokens.size(1) >= self.cfg.max_len

    def next_logits(self) -> Tensor:
        """Logits for the next token of every sequence, (batch, vocab_size)."""
        with self.model.switched_off(self.head_mask):  # one block per step: none stays open across a yield
            if self.use_cache:
                new = self.tokens[:, self.context_start + self.n_cached:]  # (batch, new)
                logits = self.model.decode(new, self.memory, self.memory_mask, cache=self.cache, start=self.n_cached,
                                           last_only=True)
                self.n_cached += new.size(1)
            else:
                logits = self.model.decode(self.tokens[:, self.context_start:], self.memory, self.memory_mask,
                                           last_only=True)
        logits = logits[:, -1].float()  # (batch, vocab_size)
        if self.banned is not None:
            logits.index_fill_(-1, self.banned, float("-inf"))
        return logits

    def append(self, next_tokens: Tensor, parents: Tensor | None = None):
        """Add one token per sequence; `parents` (beam search) says which sequence each new one extends."""
        if parents is not None:
            self.tokens = self.tokens.index_select(0, parents)
            for layer_cache in self.cache or []:
                for c in layer_cache:
                    if c is not None:
                        c.reorder(parents)
        self.tokens = torch.cat([self.tokens, next_tokens[:, None]], dim=1)  # (batch, T + 1)
        if self.memory is None:  # decoder-only: the context drops its oldest tokens
            start = context_start(self.tokens.size(1), self.cfg.max_len)
            if start != self.context_start:
                self.context_start = start
                self._reset_cache()


def _step(probs: Tensor, top: list[tuple[int, float]], chosen: int) -> GenerationStep:
    """The step that emits `chosen`: its probability, and `top` plus the chosen token when it is not among them."""
    prob = next((p for t, p in top if t == chosen), None)
    if prob is None:  # sampling picked a token outside the top n
        prob = float(probs[chosen])
        top = top + [(chosen, prob)]
    return GenerationStep(chosen, prob, top)


def _argmax(probs: Tensor, top: list[tuple[int, float]]) -> int:
    """probs.argmax() (the lowest id among equal maxima), read from the top list when its best entry is unique."""
    if len(top) > 1 and top[0][1] > top[1][1]:
        return top[0][0]
    return int(probs.argmax())


def _check_decoding(max_new_tokens, strategy, temperature, top_k, top_p, num_beams):
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy: must be one of {STRATEGIES}, got {strategy!r}")
    if not isinstance(max_new_tokens, int) or max_new_tokens < 0:
        raise ValueError(f"max_new_tokens: must be a non-negative integer, got {max_new_tokens!r}")
    if temperature < 0:
        raise ValueError(f"temperature: must be >= 0, got {temperature}")
    if top_k is not None and top_k < 1:
        raise ValueError(f"top_k: must be >= 1, got {top_k}")
    if top_p is not None and not 0 < top_p <= 1:
        raise ValueError(f"top_p: must be in (0, 1], got {top_p}")
    if num_beams < 1:
        raise ValueError(f"num_beams: must be >= 1, got {num_beams}")


@torch.inference_mode()
def generate(model: Transformer, input_ids, max_new_tokens: int, *, strategy: str = "greedy",
             temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None, num_beams: int = 4,
             length_penalty: float = 1.0, use_cache: bool = True, seed: int | None = None,
             head_mask: HeadMask | None = None) -> Iterator[GenerationStep]:
    """Yield a GenerationStep per new token: the source's translation (encoder-decoder) or the prompt's
    continuation (decoder-only). Stops at EOS (not yielded) or after max_new_tokens.

    temperature 0 is greedy. Beam search yields its best hypothesis once the search has ended.
    """
    _check_decoding(max_new_tokens, strategy, temperature, top_k, top_p, num_beams)
    if model.config.is_encoder_only:
        raise ValueError("an encoder-only model (BERT) reads a whole text at once and predicts masked tokens; it "
                         "does not write text one token after another: use fill the mask (transformer.fill_mask)")
    ids = input_ids.reshape(-1).tolist() if isinstance(input_ids, Tensor) else list(input_ids)
    if strategy == "beam":
        yield from _beam_search(_Decoder(model, ids, num_beams, use_cache, head_mask), max_new_tokens, num_beams,
                                length_penalty)
        return
    decoder = _Decoder(model, ids, 1, use_cache, head_mask)
    sampling, eos = strategy == "sample" and temperature > 0, model.config.eos_id
    rng = None
    if seed is not None:
        rng = torch.Generator(device=model.device).manual_seed(seed)
    for _ in range(max_new_tokens):
        if decoder.full:
            return
        probs = distribution(decoder.next_logits()[0], strategy, temperature, top_k, top_p)  # (vocab_size,)
        top = most_likely(probs)
        if sampling:
            token = int(torch.multinomial(probs, 1, generator=rng))
        else:
            token = _argmax(probs, top)
        if token == eos:
            return
        yield _step(probs, top, token)
        decoder.append(torch.tensor([token], device=model.device))


def _beam_search(decoder: _Decoder, max_new_tokens: int, num_beams: int, length_penalty: float):
    """Keep the num_beams most probable partial outputs; a finished one scores log P / length^length_penalty.

    Each step ranks the 2 num_beams best continuations of all beams: those among the first num_beams that end in
    EOS are finished, the best num_beams others go on. The search stops when the best live beam, scored at its
    current length, cannot beat the num_beams-th finished one. This is `transformers`' beam search with its
    default `early_stopping=False` (and fairseq's rule for finished hypotheses), token for token
    (tests/unit/test_pretrained_marian.py).
    """
    eos = decoder.cfg.eos_id
    device = decoder.tokens.device
    scores = torch.full((num_beams,), float("-inf"), device=device)
    scores[0] = 0.0  # all beams start identical: expand only the first
    histories: list[list[GenerationStep]] = [[] for _ in range(num_beams)]
    finished: list[tuple[float, list[GenerationStep]]] = []
    for step in range(max_new_tokens):
        if decoder.full:
            break
        logp = decoder.next_logits().log_softmax(-1)  # (num_beams, vocab_size)
        vocab = logp.size(-1)
        candidates = (scores[:, None] + logp).view(-1).topk(2 * num_beams)
        parents, tokens, new_scores, new_histories = [], [], [], []
        for rank, (score, flat) in enumerate(zip(candidates.values.tolist(), candidates.indices.tolist())):
            beam, token = divmod(flat, vocab)
            if score == float("-inf"):
                break
            if token == eos:
                if rank < num_beams:  # an EOS ranked below the num_beams best is not a candidate answer
                    finished.append((score / (step + 1) ** length_penalty, histories[beam]))
                continue
            probs = logp[beam].exp()
            item = _step(probs, most_likely(probs), token)
            parents.append(beam)
            tokens.append(token)
            new_scores.append(score)
            new_histories.append(histories[beam] + [item])
            if len(parents) == num_beams:
                break
        if not parents:
            break
        while len(parents) < num_beams:  # fewer live candidates than beams: pad with dead copies
            parents.append(parents[0]); tokens.append(tokens[0]); new_scores.append(float("-inf"))
            new_histories.append(new_histories[0])
        scores = torch.tensor(new_scores, device=device)
        histories = new_histories
        decoder.append(torch.tensor(tokens, device=device), torch.tensor(parents, device=device))
        if len(finished) >= num_beams:
            worst_finished = sorted(s for s, _ in finished)[-num_beams]
            if worst_finished >= float(scores.max()) / (step + 1) ** length_penalty:
                break
    finished += [(float(s) / max(len(h), 1) ** length_penalty, h) for s, h in zip(scores.tolist(), histories)
                 if s > float("-inf")]
    best = max(finished, key=lambda f: f[0])[1]
    yield from best


def generate_text(model: Transformer, tokenizer, text: str, max_new_tokens: int, **decoding) -> str:
    """The one-call form: a source in, its decoded output out (encoder-decoder); a prompt's continuation
    (decoder-only)."""
    ids = source_ids(tokenizer, text, model.config)
    return tokenizer.decode(step.token_id for step in generate(model, ids, max_new_tokens, **decoding))


@torch.inference_mode()
def greedy_batch(model: Transformer, src: Tensor, max_new_tokens: int, head_mask: HeadMask | None = None
                 ) -> list[list[int]]:
    """Greedy decoding of a padded batch of sources (B, S) at once, with the KV cache (encoder-decoder only).

    Returns each output's tokens up to, not including, its EOS. Used to score exact match quickly.
    """
    cfg = model.config
    with model.switched_off(head_mask):
        memory, src_mask = model.encode(src)
    cache, B = model.new_cache(), src.size(0)
    token = torch.full((B, 1), cfg.decoder_start, device=src.device)  # (B, 1)
    outputs, done = [], torch.zeros(B, dtype=torch.bool, device=src.device)
    banned = never_emitted(cfg)
    for step in range(min(max_new_tokens, most_target_tokens(cfg))):
        with model.switched_off(head_mask):
            logits = model.decode(token, memory, src_mask, cache=cache, start=step, last_only=True)
        logits = logits[:, -1]  # (B, vocab_size)
        logits[:, banned] = float("-inf")  # as in generate()
        token = logits.argmax(-1, keepdim=True)  # (B, 1)
        outputs.append(token[:, 0])
        done |= token[:, 0] == cfg.eos_id
        if done.all():
            break
    result = []
    for row in torch.stack(outputs, 1).tolist():  # (B, steps)
        result.append(row[: row.index(cfg.eos_id)] if cfg.eos_id in row else row)
    return result
