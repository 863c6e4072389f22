"""The Transformer: encoder-decoder (figure 1 of the paper) or decoder-only, built from the same layers."""
from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field
from types import MappingProxyType

import torch
from torch import Tensor, nn

from .attention import KVCache, MultiHeadAttention, padding_mask
from .config import TransformerConfig
from .dropout import Dropout
from .embeddings import TokenEmbedding, TokenTypes
from .heads import AttentionKind
from .layers import DecoderLayer, EncoderLayer
from .masked_lm import MaskedLMHead
from .norms import make_norm
from .points import Point, check, name_points, points
from .positions import position_scheme

INPUTS = {"encoder-decoder": "an encoder-decoder model needs both a source and a target: model(src, tgt)",
          "decoder-only": "a decoder-only model takes one token sequence: model(tokens)",
          "encoder-only": "an encoder-only model takes one token sequence: model(tokens)"}  # what forward refuses
LayerCache = tuple[KVCache, KVCache | None]  # (decoder self-attention, cross-attention or None)
_NO_BLOCK = nullcontext(MappingProxyType({}))  # a call that reads and writes nothing opens no `points` block


@dataclass
class AttentionMaps:
    """Attention weights of every layer, one tensor per layer, each (B, H, query length, key length)."""

    encoder_self: list[Tensor] = field(default_factory=list)  # (B, H, S, S)
    decoder_self: list[Tensor] = field(default_factory=list)  # (B, H, T, T)
    cross: list[Tensor] = field(default_factory=list)  # (B, H, T, S); empty for decoder-only


@dataclass
class HeadMask:
    """Which attention heads run, for head ablation at forward time (nothing is stored on the model, so many users
    can share one model object): per kind, a (layers, heads) tensor with 1 for a head that runs and 0 for one
    switched off. None = every head runs. A write to each layer's `z` point (its heads' outputs before W^O)."""

    encoder_self: Tensor | None = None
    decoder_self: Tensor | None = None
    cross: Tensor | None = None

    def writes(self) -> dict:
        """{point name: write}: each masked layer's z (B, T, H, d_k) times its row of the mask."""
        out = {}
        for kind in AttentionKind:
            mask = getattr(self, kind.field)
            for i, row in enumerate(mask if mask is not None else []):
                out[kind.point(i, "z")] = lambda z, row=row: z * row.to(z.dtype).view(1, 1, -1, 1)  # (B, T, H, d_k)
        return out


@dataclass
class ModelOutput:
    logits: Tensor  # (B, T, vocab_size)
    attention: AttentionMaps | None = None


class Transformer(nn.Module):
    """The Transformer of "Attention Is All You Need" (figure 1): an encoder of `n_encoder_layers` EncoderLayers and
    a decoder of `n_decoder_layers` DecoderLayers over shared token embeddings (x sqrt(d_model), section 3.4) and
    the config's position scheme; the output projection is tied to the embeddings when `tie_embeddings`.

    Encoder-decoder: `model(src, tgt)` reads the source (B, S) and the decoder input (B, T). Decoder-only (GPT-style,
    `n_encoder_layers` 0): `model(tokens)`, the decoder layers without cross-attention. Both return a ModelOutput:
    logits (B, T, vocab_size) of the next token, and with `return_attention=True` every attention map. `encode` and
    `decode` are the two halves, which generation calls with a KV cache (`new_cache`).
    Encoder-only (BERT-style, no decoder): `model(tokens)` runs the encoder layers, every position seeing every other,
    and the masked-LM head (masked_lm.py): logits (B, T, vocab_size) of the token at each position.

    Its insides are read and written through named points (transformer/points.py; `point_names()` lists them):
    attention maps, head masks and the logit lens's residuals are reads and writes of them.
    """

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.config = cfg = config
        self.embed = TokenEmbedding(cfg.vocab_size, cfg.d_model, scale=cfg.scale_embeddings)
        # Absolute positions (sinusoidal, learned) are added to the embeddings; relative ones (RoPE, ALiBi) act
        # inside every self-attention layer, which share one `position` module.
        positions = position_scheme(cfg)
        self.pos_encoding, position = positions.absolute, positions.relative
        self.token_types = TokenTypes(cfg.type_vocab_size, cfg.d_model) if cfg.type_vocab_size else None  # BERT's
        self.embed_norm = make_norm(cfg) if cfg.embedding_norm else nn.Identity()
        self.embed_dropout = Dropout(cfg.dropout)  # "dropout to the sums of the embeddings and the positional encodings"
        self.encoder = nn.ModuleList(EncoderLayer(cfg, position) for _ in range(cfg.n_encoder_layers))
        self.decoder = nn.ModuleList(DecoderLayer(cfg, cross_attention=bool(AttentionKind.CROSS.n_layers(cfg)), position=position)
                                     for _ in range(cfg.n_decoder_layers))
        # Pre-norm stacks end with a norm (LayerNorm, or RMSNorm); post-norm layers already end with one.
        use_final_norm = cfg.norm_first
        self.encoder_norm = make_norm(cfg) if use_final_norm and cfg.n_encoder_layers else nn.Identity()
        self.decoder_norm = make_norm(cfg) if use_final_norm and cfg.n_decoder_layers else nn.Identity()  # GPT-2's ln_f
        self.mlm_head = MaskedLMHead(cfg) if cfg.is_encoder_only else None
        # logits = x W^T (+ b: BERT's decoder bias, or Marian's final_logits_bias, one number per vocabulary entry)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=cfg.is_encoder_only or cfg.final_logits_bias)
        self._init_weights()
        if cfg.tie_embeddings:  # "we share the same weight matrix between the two embedding layers and the pre-softmax linear transformation"
            self.lm_head.weight = self.embed.weight
        self.final = Point()  # the decoder's output after the final norm: what lm_head reads
        self._point_names = tuple(name_points(self))
        self._point_set = frozenset(self._point_names)  # what a block's names are checked against, at every call

    def _init_weights(self):
        if self.config.init == "gpt2":
            # GPT-2: every matrix N(0, 0.02), biases 0; the N projections that add into the residual stream
            # (attention out_proj, FFN w_2) N(0, 0.02 / sqrt(N)), N = 2 n_layers for a decoder-only model.
            residual = [p for name, p in self.named_parameters() if name.endswith(("out_proj.weight", "ffn.w_2.weight"))]
            for name, p in self.named_parameters():
                if p.dim() > 1:
                    nn.init.normal_(p, std=0.02)
                elif name.endswith("bias"):
                    nn.init.zeros_(p)
            for p in residual:
                nn.init.normal_(p, std=0.02 / len(residual) ** 0.5)
            return
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        for module in self.modules():  # W^Q, W^K, W^V share one tensor, but each is its own matrix with its own fans
            if isinstance(module, MultiHeadAttention):
                for block in module.projection_blocks():
                    nn.init.xavier_uniform_(block)
        if self.config.pos_encoding == "learned":
            nn.init.normal_(self.pos_encoding.table, std=0.02)
        if self.token_types is not None:
            nn.init.normal_(self.token_types.weight, std=0.02)
        if self.lm_head.bias is not None:
            nn.init.zeros_(self.lm_head.bias)

    def _embed(self, ids: Tensor, start: int = 0) -> Tensor:
        """Token embeddings plus, for absolute schemes, the positions' vectors. RoPE and ALiBi have no table, so
        they run past max_len (the length the model was trained on)."""
        T = ids.size(1)
        x = self.embed(ids)  # (B, T, d_model)
        if self.pos_encoding is not None:
            if start + T > self.config.max_len:
                raise ValueError(f"sequence of {start + T} tokens is longer than this model's "
                                 f"max_len={self.config.max_len}")
            x = self.pos_encoding(x, start)  # (B, T, d_model)
        if self.token_types is not None:
            x = self.token_types(x)
        return self.embed_dropout(self.embed_norm(x))

    def key_mask(self, ids: Tensor, decoder: bool = False) -> Tensor | None:
        """Padding mask over keys, or None when there is no padding (so the fused kernel needs no mask). Whether a
        stack masks its pad keys at all is the special tokens' rule (`config.masks_padding`: GPT-2 and Marian's
        decoder do not)."""
        if not self.config.masks_padding(decoder) or not (ids == self.config.pad_id).any():
            return None
        return padding_mask(ids, self.config.pad_id)

    def point_names(self) -> list[str]:
        """Every named point of this model, in module order (transformer/points.py documents each one's shape)."""
        return list(self._point_names)

    def _points(self, head_mask: HeadMask | None, kinds: list[AttentionKind]):
        """The block one call runs in: `head_mask`'s writes and a read of the patterns of `kinds`, if any (else no
        block, and no cost)."""
        read = [kind.point(i, "pattern") for kind in kinds for i in range(kind.n_layers(self.config))]
        if head_mask is None and not read:
            return _NO_BLOCK
        return points(read=read, write=head_mask.writes() if head_mask is not None else None)

    def switched_off(self, head_mask: HeadMask | None):
        """A block in which `encode` and `decode` run with the heads `head_mask` switches off (no block for None).
        A generation opens one around each call: a block left open across a `yield` would reach its caller's own
        model calls."""
        return self._points(head_mask, [])

    def _maps(self, seen: dict[str, Tensor], kind: AttentionKind) -> list[Tensor]:
        """The weights (B, H, T, S) of every layer of `kind` that a block read."""
        return [seen[kind.point(i, "pattern")] for i in range(kind.n_layers(self.config))]

    def encode(self, src: Tensor) -> tuple[Tensor, Tensor | None]:
        """src (B, S) -> memory (B, S, d_model), source padding mask (B, 1, 1, S) or None."""
        check(self._point_set)  # the active blocks' names against this model's
        src_mask, x = self.key_mask(src), self._embed(src)
        for layer in self.encoder:
            x = layer(x, src_mask)
        return self.encoder_norm(x), src_mask

    def decode(self, tgt: Tensor, memory: Tensor | None = None, memory_mask: Tensor | None = None, *,
               cache: list[LayerCache] | None = None, start: int = 0, last_only: bool = False) -> Tensor:
        """tgt (B, T) -> logits (B, T, vocab_size).

        With a `cache` the decoder sees only the new tokens; `start` is their position in the sequence.
        `last_only` projects only the last position onto the vocabulary, (B, 1, vocab_size): all a decoding step
        needs (for GPT-2 and a 128-token prompt that skips 127 x 768 x 50257 multiply-adds).
        """
        check(self._point_set)
        tgt_mask, x = (self.key_mask(tgt, decoder=True) if cache is None else None), self._embed(tgt, start)
        for i, layer in enumerate(self.decoder):
            x = layer(x, tgt_mask, memory, memory_mask, cache=None if cache is None else cache[i])
        if last_only:
            x = x[:, -1:]  # (B, 1, d_model)
        return self.lm_head(self.final(self.decoder_norm(x)))  # (B, T or 1, vocab_size)

    def forward(self, src_or_tokens: Tensor, tgt: Tensor | None = None, return_attention: bool = False,
                head_mask: HeadMask | None = None) -> ModelOutput:
        """Encoder-decoder: model(src, tgt). Decoder-only: model(tokens). Logits predict the next token.
        `return_attention` reads every `pattern` point; `head_mask` switches heads off for this call only (head
        ablation, a write to the `z` points). Encoder-only: model(tokens), logits of the token at each position (a
        masked one included)."""
        cfg = self.config
        if (tgt is not None) != cfg.is_encoder_decoder:
            raise ValueError(INPUTS[cfg.arch])
        with self._points(head_mask, AttentionKind.of(cfg) if return_attention else []) as seen:
            memory, src_mask = self.encode(src_or_tokens) if cfg.n_encoder_layers else (None, None)
            if cfg.is_encoder_only:  # the masked-LM head reads the encoder's output: (B, S, vocab_size)
                logits = self.lm_head(self.mlm_head(memory))
            else:  # the decoder reads the target (encoder-decoder) or the tokens (decoder-only)
                logits = self.decode(src_or_tokens if tgt is None else tgt, memory, src_mask)
        attention = AttentionMaps(*(self._maps(seen, kind) for kind in AttentionKind)) if return_attention else None
        return ModelOutput(logits, attention)

    def new_cache(self) -> list[LayerCache]:
        """An empty KV cache: per decoder layer, (self-attention cache, cross-attention cache or None)."""
        return [(KVCache(), KVCache(static=True) if layer.cross_attn is not None else None) for layer in self.decoder]

    @property
    def device(self) -> torch.device:
        return self.embed.weight.device


def parameter_counts(model: Transformer) -> dict[str, int]:
    """Trainable parameters per component. Tied embeddings are counted once, under the embedding."""
    groups = {"embeddings": 0, "positional encoding": 0, "encoder self-attention": 0, "decoder self-attention": 0,
              "cross-attention": 0, "feed-forward": 0, "layer norms": 0, "output projection": 0}
    for name, p in model.named_parameters():  # shared (tied) parameters appear once
        if name.startswith(("embed.", "token_types", "embed_norm.")):
            key = "embeddings"
        elif name.startswith("pos_encoding."):
            key = "positional encoding"
        elif ".self_attn." in name:
            key = "encoder self-attention" if name.startswith("encoder.") else "decoder self-attention"
        elif ".cross_attn." in name:
            key = "cross-attention"
        elif ".ffn." in name:
            key = "feed-forward"
        elif "norm" in name:
            key = "layer norms"
        else:
            key = "output projection"
        groups[key] += p.numel()
    return {k: v for k, v in groups.items() if v}
