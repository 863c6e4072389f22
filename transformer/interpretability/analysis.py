"""Numbers that describe what an attention head does, computed from its weights (T queries x S keys).

Each score takes one head's weights as a (T, S) tensor whose rows sum to 1 (or 0 for a fully masked row), and
optionally the *content* positions: the query rows and key columns that hold text, leaving out the markers a model
adds (`<s>`, `</s>`). A pattern from `transformer.probe` knows them (`AttentionPattern.scores()`), so the overview,
the Train tab, the CLI and the model cards all score a head with the same definition.

Band scores (diagonal, anti-diagonal, previous token) are the mean, over the content queries, of the weight on one
expected key; a query with no such key counts 0. They lie in 0..1, and 1 means the head does exactly that.
"""
from __future__ import annotations

from typing import Sequence

import torch
from torch import Tensor

from ..data import repeated_random_tokens
from ..encoding import decoder_batch
from ..heads import AttentionKind, HeadId
from ..tokenization import UNK_ID

Positions = Sequence[int] | Tensor | None  # content positions along one axis; None = every position


def _positions(n: int, positions: Positions) -> Tensor:
    return torch.arange(n) if positions is None else torch.as_tensor(positions, dtype=torch.long).reshape(-1)


def entropy(w: Tensor, queries: Positions = None, keys: Positions = None) -> float:
    """Mean over content queries of -sum_s w log w (over every key), in nats: 0 = looks at one key, log S = looks
    everywhere equally. `keys` is accepted for a uniform signature; a row's entropy always covers all its keys."""
    rows = w[_positions(w.size(0), queries)]
    return float(-(rows * rows.clamp_min(1e-12).log()).sum(-1).mean()) if len(rows) else 0.0


def mean_distance(w: Tensor, queries: Positions = None, keys: Positions = None) -> float:
    """Mean over content queries t of sum_s w[t, s] |s - t|: how far, in positions, a head looks."""
    T, S = w.shape
    q = _positions(T, queries)
    dist = (torch.arange(S)[None, :] - q[:, None]).abs().to(w.dtype)  # (len(q), S)
    return float((w[q] * dist).sum(-1).mean()) if len(q) else 0.0


def _band(w: Tensor, rows: Tensor, columns: Tensor) -> float:
    """Mean of w[rows[i], columns[i]] over i; a column outside 0..S-1 (no expected key) counts 0."""
    if not len(rows):
        return 0.0
    valid = (columns >= 0) & (columns < w.size(1))
    return float(w[rows[valid], columns[valid]].sum() / len(rows))


def diagonal(w: Tensor, queries: Positions = None, keys: Positions = None) -> float:
    """Mean weight of the i-th content query on the i-th content key (copying, or attending to itself)."""
    q, k = _positions(w.size(0), queries), _positions(w.size(1), keys)
    i = torch.arange(len(q))
    cols = torch.where(i < len(k), k[i.clamp_max(max(len(k) - 1, 0))], -1) if len(k) else torch.full_like(i, -1)
    return _band(w, q, cols)


def anti_diagonal(w: Tensor, queries: Positions = None, keys: Positions = None) -> float:
    """Mean weight of the i-th content query on content key n-1-i, n = the number of content keys (reading the
    input backwards: in `reverse`, output letter i comes from source letter n-1-i; `</s>` takes no part)."""
    q, k = _positions(w.size(0), queries), _positions(w.size(1), keys)
    mirrored = len(k) - 1 - torch.arange(len(q))  # index into k
    cols = torch.where(mirrored >= 0, k[mirrored.clamp_min(0)], -1) if len(k) else torch.full_like(mirrored, -1)
    return _band(w, q, cols)


def previous_token(w: Tensor, queries: Positions = None, keys: Positions = None) -> float:
    """Mean weight of content query t on key t-1, over the content queries t >= 1 (a previous-token head)."""
    q = _positions(w.size(0), queries)
    q = q[q >= 1]
    return _band(w, q, q - 1)


HEAD_SCORES = {"entropy": entropy, "mean distance": mean_distance, "diagonal": diagonal,
               "anti-diagonal": anti_diagonal, "previous token": previous_token}
LOW_IS_INTERESTING = {"entropy"}  # a sharp head (low entropy) is the interesting one; for the others, high is


def head_scores(weights: Tensor, queries: Positions = None, keys: Positions = None) -> dict[str, Tensor]:
    """Every score for every head: weights (L, H, T, S) -> {score name: (L, H)}, on the given content positions."""
    L, H = weights.shape[:2]
    return {name: torch.tensor([[fn(weights[l, h].float(), queries, keys) for h in range(H)] for l in range(L)])
            for name, fn in HEAD_SCORES.items()}


def argmax_hit_rate(w: Tensor, expected: Tensor) -> float:
    """Fraction of queries t whose strongest key is expected[t]."""
    return float((w.argmax(-1) == expected).float().mean())


# --- head detectors: duplicate-token and induction heads (Olsson et al. 2022; TransformerLens) ------------------
# These take a head's (T, T) self-attention weights and the (T,) token ids the sequence was made of.


def _earlier_copies(ids: Tensor) -> Tensor:
    """(T, T) bool: same[t, s] is True when s < t and ids[s] == ids[t] (an earlier occurrence of query t's token)."""
    T = ids.size(0)
    return (ids[:, None] == ids[None, :]) & torch.ones(T, T, dtype=torch.bool, device=ids.device).tril(-1)


def _mean_over_queries(w: Tensor, keys: Tensor) -> float:
    """Mean over the queries that have at least one marked key of the weight on their marked keys; 0.0 if none."""
    queries = keys.any(-1)
    return float((w * keys).sum(-1)[queries].mean()) if queries.any() else 0.0


def duplicate_token(w: Tensor, ids: Tensor) -> float:
    """Mean weight that query t puts on the earlier positions s < t holding its own token (ids[s] == ids[t]),
    over the queries whose token occurred before; 0.0 when none did. A duplicate-token head scores 1."""
    return _mean_over_queries(w, _earlier_copies(ids.to(w.device)))


def induction(w: Tensor, ids: Tensor) -> float:
    """Mean weight that query t puts on the tokens that followed the earlier occurrences of its own token (key s + 1
    for every s < t with ids[s] == ids[t]), over the queries whose token occurred before; 0.0 when none did.

    An induction head "looks back over the sequence for previous instances of the current token, finds the token
    that came after it, and predicts that the same completion will occur again" (Olsson et al. 2022). On n random
    distinct tokens repeated twice, this is TransformerLens' induction score: the mean weight from each position t
    of the second half on key t - n + 1.
    """
    copies = _earlier_copies(ids.to(w.device))
    return _mean_over_queries(w, torch.roll(copies, 1, dims=-1))  # key s -> s + 1; s + 1 <= t, so nothing wraps


DETECTORS = {"previous token": lambda w, ids: previous_token(w), "duplicate token": duplicate_token,
             "induction": induction}


def detector_scores(weights: Tensor, ids: Tensor) -> dict[str, Tensor]:
    """Every detector for every head, on one sequence: weights (L, H, T, T), ids (T,) -> {name: (L, H)}."""
    L, H = weights.shape[:2]
    return {name: torch.tensor([[fn(weights[l, h].float(), ids) for h in range(H)] for l in range(L)])
            for name, fn in DETECTORS.items()}


def random_token_ids(cfg, vocab_size: int | None = None) -> Tensor:
    """The ids of [0, vocab_size) (default: the whole vocabulary) other than pad, bos, eos and <unk>."""
    vocab_size = cfg.vocab_size if vocab_size is None else vocab_size
    if not 0 < vocab_size <= cfg.vocab_size:
        raise ValueError(f"vocab_size: must be in [1, {cfg.vocab_size}], got {vocab_size}")
    keep = torch.ones(vocab_size, dtype=torch.bool)
    keep[[i for i in {cfg.pad_id, cfg.bos_id, cfg.eos_id, UNK_ID} if i < vocab_size]] = False
    return keep.nonzero().squeeze(-1)


def repeated_sequences(model, vocab_size: int | None = None, seq_len: int | None = None, n_seqs: int = 16,
                       seed: int = 0) -> Tensor:
    """(n_seqs, 2 * seq_len) on the model's device: seq_len random distinct tokens, then the same again.

    Tokens are drawn from the model's vocabulary (or its first `vocab_size` ids) without pad, bos, eos and <unk>;
    `seq_len` defaults to min(25, max_len // 2, the number of such tokens).
    """
    cfg = model.config
    ids = random_token_ids(cfg, vocab_size)
    seq_len = min(25, cfg.max_len // 2, len(ids)) if seq_len is None else seq_len
    if not 1 <= seq_len <= cfg.max_len // 2:
        raise ValueError(f"seq_len: two copies must fit in max_len={cfg.max_len}, got seq_len={seq_len}")
    return repeated_random_tokens(ids, n_seqs, seq_len, torch.Generator().manual_seed(seed)).to(model.device)


@torch.no_grad()
def repeated_sequence_scores(model, vocab_size: int | None = None, seq_len: int | None = None, n_seqs: int = 16,
                             seed: int = 0) -> dict[str, Tensor]:
    """The DETECTORS of every decoder self-attention head, averaged over the repeated_sequences (random distinct
    tokens repeated twice, TransformerLens' test for induction heads) -> {name: (layers, heads)}.

    A decoder-only model reads each sequence as its input. An encoder-decoder model reads it as its decoder input,
    with an empty source (</s> alone), and its decoder self-attention is scored (its encoder and cross-attention
    are not).
    """
    cfg = model.config
    tokens = repeated_sequences(model, vocab_size, seq_len, n_seqs, seed)
    maps = model(*decoder_batch(cfg, tokens), return_attention=True).attention.decoder_self  # (n_seqs, 1) source
    weights = torch.stack(maps).float().cpu()  # (L, B, H, T, T)
    per_seq = [detector_scores(weights[:, b], tokens[b].cpu()) for b in range(n_seqs)]
    return {name: torch.stack([s[name] for s in per_seq]).mean(0) for name in DETECTORS}


def induction_scores(model, vocab_size: int | None = None, seq_len: int | None = None, n_seqs: int = 16,
                     seed: int = 0) -> Tensor:
    """(layers, heads) induction score of every decoder self-attention head (see repeated_sequence_scores)."""
    return repeated_sequence_scores(model, vocab_size, seq_len, n_seqs, seed)["induction"]


def top_head(scores: Tensor, name: str | None = None, layer: int | None = None) -> tuple[int, int]:
    """(layer, head) of the best entry of a (layers, heads) table of the score `name`: the highest, or the lowest
    for a score where low is interesting (LOW_IS_INTERESTING: the sharpest head has the lowest entropy); within
    `layer` when given. The one rule of "the best head": the probe, the app and the model cards use it."""
    values = -scores if name in LOW_IS_INTERESTING else scores
    if layer is not None:
        return layer, int(values[layer].argmax())
    layer, head = divmod(int(values.argmax()), values.size(1))
    return layer, head


def best_head(scores: Tensor, name: str | None = None, kind: AttentionKind = AttentionKind.DECODER_SELF
              ) -> tuple[HeadId, float]:
    """(the head, its score) of the best entry (`top_head`) of a (layers, heads) score table of `kind`."""
    layer, head = top_head(scores, name)
    return HeadId(kind, layer, head), float(scores[layer, head])


def attention_rollout(weights: Tensor) -> Tensor:
    """Attention rollout (Abnar & Zuidema 2020) of a stack of self-attention layers, weights (L, H, T, T) -> (T, T).

    Each layer's heads are averaged, the residual connection is counted as attention to oneself, Ã_l = (A_l + I) / 2,
    and the layers are multiplied through: rollout = Ã_L ... Ã_2 Ã_1. Row t estimates how much of the last layer's
    position t comes from each input token. It ignores the values, the feed-forward layers and the norms: a rough
    picture of the flow of information, not an explanation."""
    L, H, T, S = weights.shape
    if T != S:
        raise ValueError(f"rollout needs self-attention (T == S), got {T} queries x {S} keys")
    eye = torch.eye(T, dtype=weights.dtype)
    rollout = eye
    for layer in weights:
        rollout = (layer.mean(0) + eye) / 2 @ rollout  # (T, T)
    return rollout
