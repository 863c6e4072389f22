"""How much memory training a model takes, estimated from its config before anything is allocated.

An upper bound, not a measurement: tests/reliability/test_request_bounds.py trains a few configs, measures their peak
resident memory and checks that the estimate is above it and within a few times of it. The app refuses a run
whose estimate is over its budget before it builds the model (transformer.run.build_run(memory_limit=...)).
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
