"""How much memory training a model, or generating with it, takes, estimated from its config before anything is
allocated.

An upper bound, not a measurement: tests/reliability/test_request_bounds.py trains a few configs, measures their peak
resident memory and checks that the estimate is above it and within a few times of it. The app refuses a run
whose estimate is over its budget before it builds the model (transformer.train.run.build_run(memory_limit=...)), and a
generation whose estimate is over its budget before it decodes (generation_bytes: beam width x length x model).
"""
from __future__ import annotations

from .config import TransformerConfig

FLOAT_BYTES = 4  # float32 weights, gradients, optimiser state and activations


def parameter_bound(config: TransformerConfig) -> int:
    """At most this many parameters: embeddings and an untied output layer, and per layer its attention (q, k, v,
    out: 4 d_model^2 at most, fewer with GQA, MQA or MLA), cross-attention in the decoder of an encoder-decoder, the
    feed-forward network (2 d_model d_ff) and the norms and biases."""
    c = config
    d, d_ff = c.d_model, c.d_ff
    per_layer = 4 * d * d + 2 * d * d_ff + 10 * d + d_ff
    cross = 4 * d * d + 4 * d if c.n_encoder_layers else 0
    layers = c.n_encoder_layers * per_layer + c.n_decoder_layers * (per_layer + cross)
    return 2 * c.vocab_size * d + c.max_len * d + layers


def training_bytes(config: TransformerConfig, batch_size: int, seq_len: int | None = None) -> int:
    """Bytes that training `config` with `batch_size` sequences of `seq_len` tokens (default: its max_len) may take
    at its peak: weights, gradients and AdamW's two moments (16 bytes a parameter), plus the activations kept for
    the backward pass, per token and layer about 8 d_model + 4 d_ff numbers and two of each head's attention rows,
    and 4 numbers per logit (logits, softmax, their gradients)."""
    c = config
    T = seq_len or c.max_len
    tokens = batch_size * T
    per_layer = 8 * c.d_model + 4 * c.d_ff + 2 * c.n_heads * T
    layers = c.n_encoder_layers + c.n_decoder_layers * (2 if c.n_encoder_layers else 1)  # cross-attention: more
    activations = tokens * (layers * per_layer + 4 * c.vocab_size + 4 * c.d_model)
    return 4 * FLOAT_BYTES * parameter_bound(c) + FLOAT_BYTES * activations


def check_training_memory(config: TransformerConfig, batch_size: int, limit: int) -> None:
    """Refuse, before anything is allocated, a run whose estimated peak (training_bytes) is over `limit` bytes; the
    ValueError says what to lower."""
    need = training_bytes(config, batch_size)
    if need > limit:
        raise ValueError(f"this model and batch would need about {need / 2**30:.1f} GiB of memory to train; a run "
                         f"may use {limit / 2**30:.1f} GiB here: lower the batch size, d_model or layers")


def cache_numbers_per_token(config: TransformerConfig) -> int:
    """Numbers the decoder's self-attention cache grows by per generated token, all layers: multi-head attention
    keeps a key and a value per key/value head, 2 x n_kv_heads x d_k numbers; MLA keeps its latent and its
    decoupled rotary key, kv_latent_dim + d_R numbers."""
    per_layer = (config.kv_latent_dim + config.d_rope if config.attention == "mla"
                 else 2 * config.n_kv_heads * config.d_k)
    return config.n_decoder_layers * per_layer


def generation_bytes(config: TransformerConfig, prompt_tokens: int, new_tokens: int, num_beams: int = 1) -> int:
    """Bytes that decoding `new_tokens` after `prompt_tokens` with `num_beams` sequences (transformer.generate) may
    take at its peak, the weights aside (already in memory): per sequence and token, the self-attention KV cache of
    every decoder layer (cache_numbers_per_token) three times, since each step's concatenation and beam search's
    reorder each make a copy; per sequence, one layer at a time of the prompt's forward pass (8 d_model + 4 d_ff numbers and three
    (T x T) attention rows of each head per token: scores, mask, softmax); an encoder-decoder's cross-attention
    keys and values of its source for every sequence and layer; and 4 numbers per logit of the last position."""
    c = config
    beams, P = max(1, num_beams), max(1, min(prompt_tokens, c.max_len))
    T = min((0 if c.n_encoder_layers else P) + new_tokens + 1, c.max_len)  # the decoder's cache: max_len at most
    cache = 3 * beams * T * cache_numbers_per_token(c)
    prompt = beams * (P if not c.n_encoder_layers else 1) * (8 * c.d_model + 4 * c.d_ff + 3 * c.n_heads * P)
    encoder = P * (8 * c.d_model + 4 * c.d_ff + 3 * c.n_heads * P) if c.n_encoder_layers else 0
    cross = beams * P * c.n_decoder_layers * 2 * c.d_model if c.n_encoder_layers else 0
    step = beams * (8 * c.d_model + 4 * c.d_ff + 3 * c.n_heads * T) + 4 * beams * c.vocab_size
    return FLOAT_BYTES * (cache + max(prompt, encoder) + cross + step)


def check_generation_memory(config: TransformerConfig, prompt_tokens: int, new_tokens: int, num_beams: int,
                            limit: int) -> None:
    """Refuse, before decoding, a generation whose estimated peak (generation_bytes) is over `limit` bytes; the
    ValueError says what to lower."""
    need = generation_bytes(config, prompt_tokens, new_tokens, num_beams)
    if need > limit:
        raise ValueError(f"{num_beams} beam(s) of {new_tokens} new tokens after a {prompt_tokens}-token input would "
                         f"need about {need / 2**20:,.0f} MiB of memory with this model; a generation may use "
                         f"{limit / 2**20:,.0f} MiB here: lower the beams, the new tokens or the input's length")
