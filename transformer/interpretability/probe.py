"""The probe: "input -> tokens -> positions -> attention record", one owner for the app, the Trainer and the CLI.

- `encode_input` (owned by transformer.encoding, re-exported here for the app): how a text becomes the ids a model
  reads, and how a too-long input is cut. An encoder reads `text + </s>` and keeps the *first* tokens (a sentence
  is read from its start); a decoder-only model keeps the *last* ones (the next token depends on the most recent
  context).
- `step_context`: which tokens a decoding step read (a decoder-only model whose context fills up drops its oldest
  tokens: `transformer.generate.context_start`).
- `AttentionPattern` / `AttentionRecord`: attention weights that carry their kind, the tokens of both axes, which
  cells were masked, and which positions are text (the head scores leave `<s>` and `</s>` out).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import Tensor

from ..attention import relative_bias
from ..encoding import EncodedInput, decoder_ids, encode_input, most_target_tokens, run_ids  # noqa: F401  (re-exported)
from ..generate import context_start, generate
from ..heads import AttentionKind
from ..model import ModelOutput, Transformer
from ..points import points
from .analysis import detector_scores, head_scores, top_head

KINDS = tuple(kind.value for kind in AttentionKind)  # the kinds' text, for the app's choices


def step_context(model: Transformer, input_ids: list[int], output_ids: list[int], step: int) -> tuple[list[int], int]:
    """What decoding step `step` (the step that produced output_ids[step]) read: (decoder input ids, position in
    the whole sequence of the first of them). `input_ids` are what `generate` was given (a prompt, or a source
    with its `</s>`); the decoder's input is `<s>` + earlier outputs (encoder-decoder) or the prompt + earlier
    outputs, from `context_start` on (decoder-only)."""
    cfg = model.config
    if not 0 <= step < len(output_ids):
        raise ValueError(f"step: must be in [0, {len(output_ids)}), got {step}")
    if cfg.is_encoder_decoder:
        return decoder_ids(output_ids[:step], cfg)[0], 0
    sequence = input_ids + output_ids[:step]
    start = context_start(len(sequence), cfg.max_len)
    return sequence[start:], start


@dataclass
class AttentionPattern:
    """One kind of attention of one example: weights (L, H, T, S) on the CPU, with the tokens of both axes.

    `mask` (T, S) is True where a query may attend (the causal mask of decoder self-attention); `query_text` and
    `key_text` are the positions that hold text rather than `<s>` / `</s>`: head scores are computed on them.
    """

    kind: AttentionKind  # its text ("cross") is accepted and made the kind
    weights: Tensor  # (L, H, T, S)
    query_tokens: list[str]
    key_tokens: list[str]
    mask: Tensor  # (T, S) bool
    query_text: list[int]
    key_text: list[int]
    key_ids: list[int] = field(default_factory=list)  # token ids of the keys (the detectors compare tokens)

    def __post_init__(self):
        self.kind = AttentionKind.parse(self.kind)

    @property
    def drawn_mask(self) -> Tensor | None:
        """The mask a heatmap greys: the causal mask of decoder self-attention, None for a kind that hides
        nothing (AttentionKind.causal, the one mask rule)."""
        return self.mask if self.kind.causal else None

    @property
    def shape(self) -> tuple[int, int]:
        """(layers, heads)."""
        return tuple(self.weights.shape[:2])

    def scores(self) -> dict[str, Tensor]:
        """Every head score, {name: (layers, heads)}: transformer.analysis.head_scores on the text positions, and,
        for self-attention, the duplicate-token and induction detectors on this input's tokens. Computed once per
        weights tensor (a record is read by every redraw, and by every user sharing it)."""
        cached = self.__dict__.get("_scores")
        if cached is None or cached[0] is not self.weights:
            scores = head_scores(self.weights, self.query_text, self.key_text)
            if self.kind != AttentionKind.CROSS and self.key_ids:
                detected = detector_scores(self.weights, torch.tensor(self.key_ids))
                scores.update({k: v for k, v in detected.items() if k not in scores})
            cached = self.__dict__["_scores"] = (self.weights, scores)
        return dict(cached[1])

    def top_head(self, score: str, layer: int | None = None) -> tuple[int, int]:
        """(layer, head) that scores best on `score` (analysis.top_head: lowest entropy, highest of the others), in
        `layer` or in the whole model."""
        return top_head(self.scores()[score], score, layer)

    def sharpest_head(self, layer: int | None = None) -> tuple[int, int]:
        """(layer, head) with the lowest entropy, in `layer` or in the whole model."""
        return self.top_head("entropy", layer)


INSIDE = ("q", "k", "v")  # the points of every attention layer the views of a record read (record_inside)


@dataclass(eq=False)
class AttentionRecord:
    """Every attention pattern of one example, by kind, the ids the model read, and what the encoding cut or did
    not know. Records are shared between users (a cache): nothing may modify one after it is made.

    A record holds its patterns only: the q, k and v its views read are `record_inside`'s, one more pass, which
    the caller keeps beside the record (three times the record's bytes: held in every record, they made it four
    times larger, and what keeps records by count was sized for patterns)."""

    patterns: dict[str, AttentionPattern]
    input_ids: list[int] = field(default_factory=list)  # the encoder's source (+ </s>) or the decoder-only input
    target_ids: list[int] | None = None  # encoder-decoder: the target the decoder read after <s>
    notices: list[str] = field(default_factory=list)  # sentences about cuts, in the order of the inputs
    unknown_chars: str = ""

    @property
    def truncated(self) -> bool:
        return bool(self.notices)

    @property
    def kinds(self) -> list[str]:
        return [k for k in KINDS if k in self.patterns]


def _is_text(cfg, ids: list[int]) -> list[int]:
    return [i for i, t in enumerate(ids) if t not in (cfg.bos_id, cfg.eos_id, cfg.pad_id)]


def run_record(model: Transformer, input_ids: list[int], target_ids: list[int] | None,
               return_attention: bool = False) -> ModelOutput:
    """The one forward pass a record is made of, on this input (and target; `run_ids` builds what the model reads):
    run it inside a `points` block to read more of it."""
    args, _ = run_ids(model.config, input_ids, target_ids)
    return model(*(torch.tensor([ids], device=model.device) for ids in args), return_attention=return_attention)


@torch.no_grad()
def record_ids(model: Transformer, tokenizer, input_ids: list[int], target_ids: list[int] | None = None
               ) -> AttentionRecord:
    """Attention of `model` reading `input_ids` (a source with its `</s>`, or a decoder-only input) and, for an
    encoder-decoder model, the target `target_ids` (without `<s>`/`</s>`): one forward pass, every pattern.

    Self-attention rows and columns are labelled by the token at that position. Cross-attention rows are labelled
    by the token each decoder position *produces* (target + `</s>`), so in `reverse` output "c" looking at source
    "c" lies on the anti-diagonal.
    """
    cfg, name = model.config, tokenizer.id_to_token
    maps = run_record(model, input_ids, target_ids, return_attention=True).attention
    target_ids = list(target_ids or []) if cfg.is_encoder_decoder else None
    source = list(input_ids)  # the encoder's ids, or the decoder-only (encoder-only) model's
    args, produced = run_ids(cfg, source, target_ids)
    dec_in = args[-1]  # what the decoder reads: <s> + target, or the decoder-only model's input
    axes = {  # kind: (the ids that label the queries, the keys' ids)
        AttentionKind.ENCODER_SELF: (source, source),
        AttentionKind.DECODER_SELF: (dec_in, dec_in),
        AttentionKind.CROSS: (produced, source),  # <s> + target in, each row labelled by the token it produces
    }
    patterns = {}
    for kind in AttentionKind.of(cfg):
        queries, keys = axes[kind]
        weights = torch.stack(getattr(maps, kind.field))[:, 0].float().cpu()  # (L, H, queries, keys)
        patterns[kind] = AttentionPattern(kind, weights, [name(i) for i in queries], [name(i) for i in keys],
                                          kind.mask(len(queries), len(keys)), _is_text(cfg, queries),
                                          _is_text(cfg, keys), list(keys))
    return AttentionRecord(patterns, list(input_ids), target_ids)


@torch.no_grad()
def record_inside(model: Transformer, record: AttentionRecord) -> dict[str, Tensor]:
    """The q, k and v (INSIDE) of every attention layer in the record's forward pass, by point name, on the CPU
    without the batch dimension: q (H, T, d), k (G, S, d), v (G, S, d_v). One forward pass of the record's input
    through the named points, its patterns read as the record's were (the same kernel: the same bits). The views
    (value_weighted_norms, qk_step) take it as an argument; a caller that shows several keeps it."""
    cfg = model.config
    names = [kind.point(i, n) for kind in AttentionKind.of(cfg) for i in range(kind.n_layers(cfg)) for n in INSIDE]
    with points(read=names) as seen:
        run_record(model, record.input_ids, record.target_ids, return_attention=True)
    return {n: seen[n][0].cpu().clone() for n in names}  # compact copies: a q is a view of the fused projection


def inside_point(inside: dict[str, Tensor], kind: AttentionKind, layer: int, name: str) -> Tensor:
    """The point `name` (q, k or v) of layer `layer` of `kind` in `inside` (record_inside's), or a ValueError
    saying what to pass."""
    point = kind.point(layer, name)
    if point not in inside:
        raise ValueError(f"no {point!r} in the inside given: pass record_inside(model, record) of this record")
    return inside[point]


def example_attention(model: Transformer, tokenizer, input_ids: list[int], target_ids: list[int] | None = None
                      ) -> AttentionPattern:
    """The attention the Train tab and the CLI show of one validation example (the Trainer's `attention` callback):
    cross-attention for an encoder-decoder model, decoder self-attention otherwise."""
    kinds = AttentionKind.of(model.config)
    return record_ids(model, tokenizer, input_ids, target_ids).patterns[kinds[-1]]  # cross, or decoder self


@torch.no_grad()
def record_attention(model: Transformer, tokenizer, text: str, target: str | None = None,
                     max_tokens: int | None = 64) -> AttentionRecord:
    """Attention of `model` on `text` (and, for encoder-decoder, `target`: the model's own greedy output when
    empty), cut as `encode_input` says; the record's notices say what was cut."""
    source = encode_input(model, tokenizer, text, max_tokens=max_tokens)
    inputs, target_ids = [source], None
    if model.config.is_encoder_decoder:
        if target:
            encoded = encode_input(model, tokenizer, target, max_tokens=max_tokens, role="target")
            inputs.append(encoded)
            target_ids = encoded.ids
        else:
            limit = most_target_tokens(model.config)
            limit = limit if max_tokens is None else min(max_tokens, limit)
            target_ids = [s.token_id for s in generate(model, source.ids, limit)]
    record = record_ids(model, tokenizer, source.ids, target_ids)
    record.notices = [m for m in (e.cut_message() for e in inputs) if m]
    record.unknown_chars = "".join(sorted(set("".join(e.unknown for e in inputs))))
    return record


@torch.no_grad()
def record_step(model: Transformer, tokenizer, input_ids: list[int], output_ids: list[int], step: int
                ) -> tuple[AttentionPattern, int]:
    """Where decoding step `step` looked: the pattern of the forward pass that step made, over the context it read
    (`step_context`), and the query row of that step (the last decoder position). Cross-attention for an
    encoder-decoder model (which source tokens the output came from), self-attention for a decoder-only one."""
    context, _ = step_context(model, input_ids, output_ids, step)
    kind = AttentionKind.of(model.config)[-1]  # cross-attention, or decoder self-attention
    if kind is AttentionKind.CROSS:
        pattern = record_ids(model, tokenizer, input_ids, context[1:]).patterns[kind]
        pattern.query_tokens[-1] = tokenizer.id_to_token(output_ids[step])  # cross rows: the token produced
    else:
        pattern = record_ids(model, tokenizer, context).patterns[kind]
    return pattern, len(context) - 1


@dataclass
class QKStep:
    """Equation 1 for one query of one head, step by step; every tensor is over the S keys unless said otherwise."""

    query_token: str
    key_tokens: list[str]
    d_k: int
    scores: Tensor  # q . k_s
    scaled: Tensor  # q . k_s / sqrt(d_k)
    allowed: Tensor  # bool: False where the mask forbids the key
    weights: Tensor  # softmax of the allowed scaled scores; exactly 0 where masked
    output: Tensor  # (d_k,): sum_s weights_s v_s, this head's output for the query
    contributions: Tensor  # weights_s * |v_s|: how much each key adds to the output
    bias: Tensor | None = None  # ALiBi's -m_h |i - s|, added to `scaled` before the softmax; None without ALiBi


@torch.no_grad()
def qk_step(model: Transformer, record: AttentionRecord, inside: dict[str, Tensor], kind: str, layer: int, head: int,
            query: int) -> QKStep:
    """Softmax(q K^T / sqrt(d_k)) V for query `query` of one head, from the q, k, v that head computed in the
    record's forward pass (`inside`, record_inside's: no new pass, and `weights` equals the record's heatmap row)."""
    kind = AttentionKind.parse(kind)
    pattern = record.patterns[kind]
    L, H = pattern.shape
    T = len(pattern.query_tokens)
    if not (0 <= layer < L and 0 <= head < H and 0 <= query < T):
        raise ValueError(f"layer {layer}, head {head}, query {query}: this pattern has {L} layers, {H} heads and "
                         f"{T} queries")
    q, k, v = (inside_point(inside, kind, layer, n).float() for n in INSIDE)  # q (H, T, d), k (G, S, d), v (G, S, d_v)
    g = head // (H // k.size(0))  # the key/value head query head `head` reads (GQA/MQA share them)
    q, k, v = q[head, query], k[g], v[g]  # (d,), (S, d), (S, d_v)
    S, d_k = k.shape  # d_k: the size the scores are scaled by (MLA with RoPE: d_k + d_R)
    padding = model.key_mask(torch.tensor([pattern.key_ids]))  # (1, 1, 1, S), or None with no padding
    allowed = pattern.mask[query] if padding is None else pattern.mask[query] & padding[0, 0, 0].cpu()  # (S,)
    bias = relative_bias(kind.modules(model)[layer].position, T, S)  # (H, T, S): ALiBi, else None
    bias = None if bias is None else bias[head, query].float().cpu()  # (S,)
    scores = k @ q  # (S,)
    scaled = scores / math.sqrt(d_k)
    logits = scaled if bias is None else scaled + bias
    weights = torch.softmax(logits.masked_fill(~allowed, float("-inf")), dim=-1).nan_to_num(0.0)  # (S,)
    return QKStep(pattern.query_tokens[query], pattern.key_tokens, d_k, scores, scaled, allowed, weights,
                  weights @ v, weights * v.norm(dim=-1), bias)

