"""Direct logit attribution: how much each head and each feed-forward block writes, directly, into a logit difference.

In a pre-norm decoder the residual stream the final norm reads is a sum of what every part wrote:

    x = e + sum_l ( sum_h z_{l,h} W^O_{l,h} + b^O_l + FFN_l )        (e: token embedding + positions)

and the logit difference of answer a over b is  N(x) (u_a - u_b)  with u the unembedding's rows and N the final
norm, the paper's LayerNorm or Llama's RMSNorm:

    LayerNorm(x) = (x - mean(x)) / sigma(x) * gamma + beta,      sigma(x) = sqrt(var(x) + eps)
    RMSNorm(x)   =  x            / rms(x)   * g,                 rms(x)   = sqrt(mean(x^2) + eps)

Freezing sigma (or rms) at its value on this run (the standard convention) makes that linear in each term c:

    DLA(c) = (c - mean(c)) / sigma * gamma . (u_a - u_b),      plus beta . (u_a - u_b) for the final norm's shift,
    DLA(c) =  c            / rms   * g     . (u_a - u_b)        (RMSNorm: no centring, no shift),

and the terms (embedding, each head, each FFN, the biases) sum to the logit difference exactly. A head's term
leaves out the part of its output no input changes (`value_constants`: W^V's bias and the LayerNorm's shift
through W^V, which its weights, summing to 1, pass on whatever it attends to); the biases term holds those, the
W^O biases and the final norm's shift (TransformerLens's convention: it folds them into b^O).

It measures only the direct path through the unembedding: a head whose output later heads read (a previous-token
head) can matter a great deal and still attribute nothing here.

Post-norm models (the paper's layers: LayerNorm(x + Sublayer(x))) are refused: there the stream passes through a
LayerNorm after every sub-layer, so what reaches the unembedding is not a sum of what the heads wrote and no
frozen scale makes it one. Activation patching measures those models.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from ..model import Transformer
from ..norms import RMSNorm
from .patching_metric import LogitDifference
from ..heads import AttentionKind
from .patching_runs import MinimalPair, PairRun, run_pair
from ..points import point_name


@dataclass(frozen=True)
class LogitAttribution:
    """The direct contributions to one logit difference on one run (the clean run of a pair).

    `heads`: {kind: (layers, heads)} for decoder self-attention (and cross-attention); `ffn`: (layers,) or None for
    an attention-only model; `embedding`, `biases` (the heads' constant parts, the W^O biases, the final norm's
    shift): numbers;
    `logit_difference`: the model's own, which the terms sum to."""

    heads: dict[str, Tensor]
    ffn: Tensor | None
    embedding: float
    biases: float
    logit_difference: float
    metric: str

    def terms(self) -> list[tuple[str, float]]:
        """Every term with its label, in the order the stream adds them."""
        out = [("embedding", self.embedding)]
        L = next(iter(self.heads.values())).size(0)
        for i in range(L):
            for kind, grid in self.heads.items():
                out += [(f"{kind} layer {i} head {h}", float(v)) for h, v in enumerate(grid[i])]
            if self.ffn is not None:
                out.append((f"feed-forward layer {i}", float(self.ffn[i])))
        return out + [("biases", self.biases)]

    def total(self) -> float:
        return sum(v for _, v in self.terms())


def check_pre_norm(model: Transformer, what: str) -> None:
    """Raise ValueError for a post-norm model: `what` needs the residual stream to be a sum of the parts' writes."""
    if not model.config.norm_first or model.config.attention == "mla":
        why = ("its multi-head latent attention has no per-head W^O" if model.config.attention == "mla" else
               "this is a post-norm model (the paper's layers): a LayerNorm follows every sub-layer, so what reaches "
               "the unembedding is not a sum of what each head and feed-forward block wrote")
        raise ValueError(f"{what} needs a pre-norm model: {why}. Activation patching measures any model.")


def value_constants(model: Transformer, kind: AttentionKind, layer: int) -> Tensor:
    """(H, d_k): the part of each head's output z that no input changes. Its values are
    v = LayerNorm(x) W^V + b^V = x_hat diag(gamma) W^V + (beta W^V + b^V), and its weights sum to 1 over the keys,
    so z = sum_s p_s v_s carries beta W^V + b^V whatever it attends to (beta: the shift of the LayerNorm before
    the values: the sub-layer's, or the encoder's final norm for cross-attention)."""
    attn = kind.modules(model)[layer]
    norm = model.encoder_norm if kind is AttentionKind.CROSS else getattr(model, kind.stack)[layer].sublayers[0].norm
    W_V = attn.W_V.double()  # (d_model, G d_k)
    constant = torch.zeros(W_V.size(1), dtype=torch.float64, device=W_V.device)
    if getattr(norm, "bias", None) is not None:
        constant += norm.bias.double() @ W_V
    if attn.in_proj.bias is not None:
        constant += attn.in_proj.bias[attn.sizes[0] + attn.sizes[1]:].double()
    return constant.view(attn.n_kv_heads, attn.d_k).repeat_interleave(attn.n_heads // attn.n_kv_heads, dim=0)


@dataclass(frozen=True)
class FrozenNorm:
    """The final norm made linear by freezing its scale at its value on one residual vector x (the module's
    docstring): `centre` is True for LayerNorm (it subtracts the mean; RMSNorm does not), `scale` (d_model,) is
    gamma / sigma(x) (or g / rms(x)), `shift` beta (None for RMSNorm). `direction` is read through it."""

    centre: bool
    scale: Tensor
    shift: Tensor | None

    @classmethod
    def at(cls, norm: nn.Module, x: Tensor) -> "FrozenNorm":
        """`norm` (nn.LayerNorm or RMSNorm) frozen at x (d_model,), in float64."""
        x, linear = x.double(), cls.unscaled(norm)
        if linear.centre:
            spread = (x.var(unbiased=False) + norm.eps).sqrt()  # sigma(x) = sqrt(var(x) + eps)
        else:
            spread = (x.pow(2).mean() + norm.eps).sqrt()  # rms(x) = sqrt(mean(x^2) + eps)
        return cls(linear.centre, linear.scale / spread, linear.shift)

    @classmethod
    def unscaled(cls, norm: nn.Module) -> "FrozenNorm":
        """`norm`'s linear part with sigma(x) (or rms(x)) left out, in float64: what a direction the stream carries
        does to every logit up to one positive factor per input, which changes no token's rank (TransformerLens's
        folded LayerNorm)."""
        if isinstance(norm, nn.LayerNorm):
            return cls(True, norm.weight.double(), None if norm.bias is None else norm.bias.double())
        if isinstance(norm, RMSNorm):
            return cls(False, norm.weight.double(), None)
        raise ValueError(f"direct logit attribution knows LayerNorm and RMSNorm, not {type(norm).__name__}")

    def read_tokens(self, c: Tensor, unembedding: Tensor) -> Tensor:
        """(..., d_model) -> (..., V): `read` of c along every row of `unembedding` (V, d_model) at once."""
        c = c - c.mean(-1, keepdim=True) if self.centre else c
        return (c * self.scale) @ unembedding.t()

    def read(self, c: Tensor, direction: Tensor) -> Tensor:
        """DLA(c): (..., d_model) -> (...), the term c's direct part of x . direction through the frozen norm."""
        return self.read_tokens(c, direction.unsqueeze(0))[..., 0]

    def constant(self, direction: Tensor) -> float:
        """The shift's part: beta . direction (0 for RMSNorm)."""
        return 0.0 if self.shift is None else float(self.shift @ direction)


@torch.no_grad()
def direct_logit_attribution(model: Transformer, pair: MinimalPair | PairRun, metric: LogitDifference
                             ) -> LogitAttribution:
    """Each part's direct contribution to `metric` on the clean run, the final norm's scale frozen at its
    value there (see the module's docstring); refuses post-norm models."""
    check_pre_norm(model, "direct logit attribution")
    if not isinstance(metric, LogitDifference):
        raise ValueError("direct logit attribution splits a logit difference: choose two answer tokens")
    L, p = model.config.n_decoder_layers, metric.position
    kinds = [k for k in AttentionKind.of(model.config) if k.stack == "decoder"]  # what writes the decoder's stream
    has_ffn = model.decoder[0].ffn is not None
    runs = run_pair(model, pair)
    logits, seen = runs.logits["clean"], runs.seen["clean"]
    point = lambda i, name: seen[point_name("decoder", i, name)][0, p]  # noqa: E731  (d_model,) at position p
    norm = FrozenNorm.at(model.decoder_norm, point(L - 1, "resid_post"))  # what the final norm reads
    u = model.lm_head.weight.double()
    direction = u[metric.answer] - u[metric.other]  # (d_model,)

    def dla(c: Tensor) -> Tensor:  # (..., d_model) -> (...)
        return norm.read(c, direction)

    heads, biases = {}, norm.constant(direction)
    for kind in kinds:
        grid = torch.zeros(L, model.config.n_heads, dtype=torch.float64)
        for i in range(L):
            attn = kind.modules(model)[i]
            z = seen[kind.point(i, "z")][0, p].double()  # (H, d_k)
            W_O = attn.W_O.double().view(attn.n_heads, attn.d_k, -1)  # (H, d_k, d_model)
            constant = value_constants(model, kind, i)  # (H, d_k)
            grid[i] = dla(torch.einsum("hk,hkd->hd", z - constant, W_O))  # (H,)
            biases += float(dla(torch.einsum("hk,hkd->d", constant, W_O)))
            if attn.out_proj.bias is not None:
                biases += float(dla(attn.out_proj.bias.double()))
        heads[str(kind)] = grid
    ffn = torch.stack([dla(point(i, "ffn.out").double()) for i in range(L)]) if has_ffn else None
    return LogitAttribution(heads, ffn, float(dla(point(0, "resid_pre").double())), biases,
                            float(metric(logits)[0]), metric.describe())
