"""A feature's page, as data: where it fires, which heads write it, what it does to the logits.

For feature j of an SAE on a layer's concatenated head outputs (features.py), with d_j (H d_k,) its unit decoder row:
- top contexts: the held-out positions where f_j is largest, each with the tokens around it;
- heads: the norm of d_j's slice of each head, ||d_j[h d_k : (h+1) d_k]||; their squares sum to 1 (d_j has unit
  norm), so `share[h]` = ||slice_h||^2 is the part of the feature head h writes (1 / H each for a random direction);
- logit effect (a layer whose output reaches the decoder's stream: decoder self or cross, in a pre-norm model): the
  feature's direction in the residual stream, d_j W^O (d_model,), read by the unembedding through the final norm
  with its scale left out (logit_attribution.FrozenNorm.unscaled: a positive factor per input, which changes no
  token's rank): the tokens it pushes up most and down most, directly (later layers not counted).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from ..model import Transformer
from .features import Activations, AttentionLayer, layer_activations
from .logit_attribution import FrozenNorm, check_pre_norm
from .patching_runs import token_name
from .sae import SparseAutoencoder


@dataclass(frozen=True)
class Context:
    """One place a feature fires: `tokens` the stream's ids around it, `at` the index in `tokens` of the position
    itself, `activation` f_j there, `row` and `position` where it is in the activations' batches."""

    tokens: list[int]
    at: int
    activation: float
    row: int
    position: int


@dataclass(frozen=True)
class LogitEffect:
    """The tokens a feature's direction pushes up (`top`) and down (`bottom`) most: (token id, effect) pairs."""

    top: list[tuple[int, float]]
    bottom: list[tuple[int, float]]


@dataclass(frozen=True)
class FeaturePage:
    """Feature `feature` of an SAE on `layer`: `head_norms` and `share` (H,), `contexts` (largest first),
    `frequency` the share of the held-out positions where it fires, `logit_effect` (None with `no_logit_effect`
    saying why)."""

    feature: int
    layer: AttentionLayer
    head_norms: Tensor
    share: Tensor
    contexts: list[Context]
    frequency: float
    logit_effect: LogitEffect | None
    no_logit_effect: str = ""

    def describe(self, tokenizer=None) -> list[str]:
        """The page in lines of text (what the CLI prints)."""
        heads = ", ".join(f"{self.layer.layer}.{h} {float(s):.2f}" for h, s in enumerate(self.share))
        lines = [f"feature {self.feature} of {self.layer}: fires at {self.frequency:.1%} of positions; "
                 f"written by heads (share): {heads}"]
        for c in self.contexts:
            lines.append(f"  {c.activation:7.3f}  {context_text(tokenizer, c)}")
        if self.logit_effect is not None:
            for name, pairs in (("up", self.logit_effect.top), ("down", self.logit_effect.bottom)):
                lines.append(f"  logits {name}: " + ", ".join(f"{token_name(tokenizer, t)} {v:+.2f}" for t, v in pairs))
        elif self.no_logit_effect:
            lines.append(f"  no logit effect: {self.no_logit_effect}")
        return lines


def context_text(tokenizer, context: Context) -> str:
    """A context in words: the tokens before it, the position's own token in brackets, the tokens after."""
    plain = lambda t: token_name(tokenizer, t).strip("'")  # noqa: E731  a token's text unquoted
    c = context
    before, after = ("".join(plain(t) for t in part) for part in (c.tokens[:c.at], c.tokens[c.at + 1:]))
    return f"{before}[{plain(c.tokens[c.at])}]{after}"


def head_norms(sae: SparseAutoencoder, n_heads: int) -> Tensor:
    """(F, H): the norm of each feature's decoder row in each head's d_k slice."""
    W_dec = sae.W_dec.detach()  # (F, H d_k)
    return W_dec.view(W_dec.size(0), n_heads, -1).norm(dim=-1)


def head_share(sae: SparseAutoencoder, n_heads: int) -> Tensor:
    """(F, H): the part of each feature each head writes, ||slice_h||^2 / ||d_j||^2 (each row sums to 1)."""
    norms = head_norms(sae, n_heads).pow(2)
    return norms / norms.sum(-1, keepdim=True)


def feature_direction(model: Transformer, sae: SparseAutoencoder, layer: AttentionLayer, feature: int) -> Tensor:
    """(d_model,): d_j W^O, what one unit of feature j adds to the residual stream (float64)."""
    attn = layer.kind.modules(model)[layer.layer]
    return sae.W_dec.detach()[feature].double() @ attn.W_O.detach().double()  # (H d_k) @ (H d_k, d_model)


@dataclass(frozen=True)
class Unembedding:
    """What a feature's logit effect reads its direction through, in float64: the final norm's linear part with its
    scale left out (`norm`, FrozenNorm.unscaled) and the unembedding `W_U` (V, d_model). Made once per model and
    kept by its caller (store.saes keeps the shipped models'): converting W_U each time was most of a logit
    effect's cost."""

    norm: FrozenNorm
    W_U: Tensor

    @classmethod
    @torch.no_grad()
    def of(cls, model: Transformer) -> "Unembedding":
        """`model`'s; ValueError for a model whose heads have no direct path to the logits (post-norm, MLA)."""
        check_pre_norm(model, "a feature's logit effect")
        return cls(FrozenNorm.unscaled(model.decoder_norm), model.lm_head.weight.detach().double())


def unembedding_or_none(model: Transformer) -> Unembedding | None:
    """Unembedding.of(model), or None when it has none (logit_effect then says why, feature by feature)."""
    try:
        return Unembedding.of(model)
    except ValueError:
        return None


@torch.no_grad()
def logit_effect(model: Transformer, sae: SparseAutoencoder, layer: AttentionLayer, feature: int, n: int = 5,
                 unembedding: Unembedding | None = None) -> LogitEffect:
    """The n tokens feature j pushes up and down most, directly, read through `unembedding` (model's, made here
    when None); ValueError for a layer or model with no direct path from its heads to the logits (an encoder, a
    post-norm model)."""
    if layer.kind.stack != "decoder":
        raise ValueError("encoder self-attention writes the source's stream, which no logit reads directly")
    read = unembedding if unembedding is not None else Unembedding.of(model)
    effect = read.norm.read_tokens(feature_direction(model, sae, layer, feature), read.W_U)  # (V,)
    up, down = effect.topk(n), (-effect).topk(n)
    return LogitEffect([(int(i), float(v)) for v, i in zip(up.values, up.indices)],
                       [(int(i), -float(v)) for v, i in zip(down.values, down.indices)])


def top_contexts(f: Tensor, acts: Activations, n: int = 8, before: int = 12, after: int = 2, pad_id: int = 0
                 ) -> list[Context]:
    """The n positions where the activations f (N,) of one feature are largest (and positive), each with up to
    `before` tokens before it and `after` real tokens after it (the row's padding left out)."""
    values, order = f.topk(min(n, f.numel()))
    out = []
    for v, i in zip(values.tolist(), order.tolist()):
        if v <= 0:
            break
        row, t = acts.where[i].tolist()
        start = max(0, t - before)
        tokens = acts.tokens[row, start:t + 1].tolist()
        tokens += [i for i in acts.tokens[row, t + 1:t + after + 1].tolist() if i != pad_id]  # padding sits last
        out.append(Context(tokens, t - start, v, row, t))
    return out


def feature_page(model: Transformer, sae: SparseAutoencoder, layer: AttentionLayer, feature: int,
                 held_out: Activations, n_contexts: int = 8) -> FeaturePage:
    """Feature `feature`'s page, its contexts from `held_out` (the layer's activations on data the SAE was not
    trained on, features.layer_activations)."""
    return feature_pages(model, sae, layer, [feature], held_out, n_contexts)[0]


@torch.no_grad()
def feature_pages(model: Transformer, sae: SparseAutoencoder, layer: AttentionLayer, features: list[int],
                  held_out: Activations, n_contexts: int = 8) -> list[FeaturePage]:
    """The pages of several features (those `features_at` found at a position), the held-out activations
    encoded once for all of them."""
    for feature in features:
        if not 0 <= feature < sae.config.n_features:
            raise ValueError(f"feature: this SAE has features 0 to {sae.config.n_features - 1}, got {feature}")
    f_all = sae.encode(held_out.x)  # (N, F)
    H = model.config.n_heads
    norms, shares = head_norms(sae, H), head_share(sae, H)
    unembedding = unembedding_or_none(model)
    pages = []
    for feature in features:
        f = f_all[:, feature]  # (N,)
        try:
            effect, why = logit_effect(model, sae, layer, feature, unembedding=unembedding), ""
        except ValueError as e:
            effect, why = None, str(e)
        contexts = top_contexts(f, held_out, n_contexts, pad_id=model.config.pad_id)
        pages.append(FeaturePage(feature, layer, norms[feature], shares[feature], contexts,
                                 float((f > 0).float().mean()), effect, why))
    return pages


@torch.no_grad()
def features_at(model: Transformer, sae: SparseAutoencoder, layer: AttentionLayer, inputs: tuple[Tensor, ...],
                position: int, n: int = 8) -> list[tuple[int, float]]:
    """The features active at one position of one input (inputs: the model's arguments, batch of 1), largest
    first, at most n: (feature, activation) pairs. One forward of the model up to the output and one SAE encode."""
    acts = layer_activations(model, layer, [(inputs, inputs[-1])])
    hit = ((acts.where[:, 0] == 0) & (acts.where[:, 1] == position)).nonzero()
    if not len(hit):
        raise ValueError(f"position: the input has no token at position {position}")
    f = sae.encode(acts.x[int(hit[0])])  # (F,)
    values, order = f.topk(min(n, f.numel()))
    return [(int(i), float(v)) for v, i in zip(values, order) if v > 0]
