"""The minimal pairs the patching demos use, on the shipped models whose circuits are known.

- "Which heads copy?" (induction): n random distinct characters then the same again without its last one, so the
  model's next character is the copy's last (`induction_texts`). The corrupted input changes the first half's
  characters except its last: the character to copy stays where it was, but what came before it (what the
  previous-token head writes there, and the induction head's key reads) no longer matches. Changing that
  character too would leave nothing for the copy to find: the induction head would attend to it and copy the
  new character, and the previous-token head's part would hide behind it.
- "Who carries a word?" (translate-en-es): a held-out verse and the same verse with one word changed to another of
  as many tokens (`TRANSLATION_EXAMPLES`); both runs read the model's translation of the clean verse, and the
  metric is measured at the first target position where the two runs' top tokens differ
  (`diverging_position`): where the changed word's translation is produced.
"""
from __future__ import annotations

import random

import torch

from ..data import INDUCTION_ALPHABET
from ..heads import AttentionKind, HeadId
from ..model import Transformer
from .activation_patching import head_patching
from .attribution_patching import attribution_patching, rank_correlation
from .path_patching import path_patching
from .patching_metric import logit_difference
from .patching_runs import MinimalPair, PairRun, minimal_pair, run_pair

# (verse of data/bible-en-es/test.tsv, English, the changed English)
TRANSLATION_EXAMPLES = [
    ("Luke.15.11", "He said, “A certain man had two sons.", "He said, “A certain man had two daughters."),
    ("Gen.24.26", "The man bowed his head, and worshiped Yahweh.", "The woman bowed his head, and worshiped Yahweh."),
]


def induction_texts(n: int = 20, seed: int = 0) -> tuple[str, str]:
    """(clean, corrupted): n random distinct characters then the first n - 1 again; the corrupted text's first half
    has other characters except its last (see the module's docstring). 2 <= n <= 31 (the alphabet has 62)."""
    if not 2 <= n <= len(INDUCTION_ALPHABET) // 2:
        raise ValueError(f"n: between 2 and {len(INDUCTION_ALPHABET) // 2}, got {n}")
    chars = random.Random(seed).sample(INDUCTION_ALPHABET, 2 * n - 1)
    first, other = chars[:n], chars[n:]
    return "".join(first + first[:-1]), "".join(other + first[-1:] + first[:-1])


@torch.no_grad()
def diverging_position(model: Transformer, pair: MinimalPair | PairRun) -> int:
    """The first decoder position where the clean and corrupted runs' top tokens differ (the last if none does)."""
    logits = run_pair(model, pair).logits
    top = [logits[w][0].argmax(-1) for w in ("clean", "corrupted")]  # (T,) each
    differ = (top[0] != top[1]).nonzero()
    return int(differ[0]) if len(differ) else len(top[0]) - 1


def induction_pairs(model: Transformer, tokenizer, n_pairs: int = 20, n: int = 20, keep_copied: bool = True
                    ) -> list[MinimalPair]:
    """`n_pairs` induction demo pairs (seeds 0, 1, ...); `keep_copied=False` changes the whole first half instead
    (the variant the module's docstring explains away)."""
    pairs = []
    for seed in range(n_pairs):
        clean, corrupted = induction_texts(n, seed)
        if not keep_copied:
            changed = random.Random(seed + 10_000).sample([c for c in INDUCTION_ALPHABET if c not in clean], n)
            corrupted = "".join(changed) + clean[n:]
        pairs.append(minimal_pair(model, tokenizer.encode(clean), tokenizer.encode(corrupted), tokenizer=tokenizer))
    return pairs


def induction_circuit(model: Transformer, tokenizer, previous_token: tuple[int, int], induction: tuple[int, int],
                      n_pairs: int = 20, n: int = 20, keep_copied: bool = True) -> dict[str, object]:
    """The circuit's figures over `n_pairs` demo pairs (each with its default logit difference), means:
    `heads` (L, H) activation patching of each head's output; `path` {"query", "key", "value"}: path patching
    previous-token head -> induction head through each input; `attribution` (L, H) its gradient estimate;
    `rank_correlation` of the mean attribution grid with the mean patching grid, and its mean over pairs."""
    heads, attribution, path, rhos = [], [], [], []
    for pair in induction_pairs(model, tokenizer, n_pairs, n, keep_copied):
        pair = run_pair(model, pair)  # each input of the pair once, for every figure below
        metric = logit_difference(model, pair)
        heads.append(head_patching(model, pair, metric).values)
        attribution.append(attribution_patching(model, pair, metric)[AttentionKind.DECODER_SELF].values)
        grid = path_patching(model, pair, metric, HeadId(AttentionKind.DECODER_SELF, *previous_token))[AttentionKind.DECODER_SELF]
        path.append(grid.values[:, induction[0], induction[1]])  # (3,): query, key, value
        rhos.append(rank_correlation(attribution[-1], heads[-1]))
    heads_mean, attribution_mean, path_mean = (torch.stack(x).mean(0) for x in (heads, attribution, path))
    return {"heads": heads_mean, "attribution": attribution_mean,
            "path": dict(zip(("query", "key", "value"), path_mean.tolist())),
            "rank_correlation": rank_correlation(attribution_mean, heads_mean),
            "rank_correlation_per_pair": sum(rhos) / len(rhos)}
