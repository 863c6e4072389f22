"""Which cross-attention feature of the shipped translate-en-es SAEs is a word class, and on which test verse it shows
(issue 42, item 4: the demo of "What the heads write" names a feature found here, not guessed).

The word class: the Spanish future tense, whose ending the decoder writes as a token of its own ("ará", "arán",
"aréis", "irá", ...) or inside a word ("será"). For every feature of the cross-attention SAEs (layers 2 and 3): its
top TOP held-out activations (the SAE's held-out verses, data/bible-en-es/valid.tsv), the share of them where the
decoder writes a future ending (precision), and the share of those where the head that writes most of the feature
reads (its largest cross-attention weight) the English "shall" or "will". Then, for the best feature, the test verses
(data/bible-en-es/test.tsv, never trained on) up to MAX_WORDS English words where, translated by the model itself,
it is the most active feature at a row writing a future ending: the demo's candidates.

    python bench/feature_demo_search.py [--top 40] [--threads 2]
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from transformer import load_checkpoint  # noqa: E402
from transformer.heads import AttentionKind  # noqa: E402
from transformer.interpretability.feature_cli import RECIPES  # noqa: E402
from transformer.interpretability.feature_data import feature_batches  # noqa: E402
from transformer.interpretability.feature_page import head_share  # noqa: E402
from transformer.interpretability.features import AttentionLayer, width  # noqa: E402
from transformer.interpretability.input_features import input_activations  # noqa: E402
from transformer.interpretability.probe import record_attention  # noqa: E402
from transformer.interpretability.sae_files import load_sae  # noqa: E402
from transformer.points import points  # noqa: E402
from transformer.translation.corpus import held_out  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PATH = ROOT / "checkpoints" / "translate-en-es"
MAX_WORDS = 20


def writes_future(token: str) -> bool:
    """Whether a Spanish token is, or ends with, a future-tense ending ("ará", "arán", " será", "aréis,")."""
    word = token.strip()
    return bool(re.search(r"(ar|er|ir)(á|án|ás|é|emos|éis)[,.;:?!]*$", word) or word in
                {"será", "serán", "serás", "seré", "seremos", "seréis", "habrá", "hará", "harán", "dirá", "vendrá"})


def reads_shall(token: str) -> bool:
    return token.strip().lower() in {"shall", "will"}


@torch.no_grad()
def feature_table(model, tokenizer, info, top: int) -> list[tuple]:
    """(precision, main head reads shall/will, layer, feature, main head, its share, firing positions) per feature."""
    batches = feature_batches(RECIPES["translate-en-es"].data, model, tokenizer, "held-out")
    rows = []
    for L in (2, 3):
        layer = AttentionLayer("cross", L)
        sae = load_sae(PATH, info, layer, width(model))
        share = head_share(sae, model.config.n_heads)  # (F, H)
        fs, produced, attended = [], [], []
        for (src, tgt_in), tgt_out in batches:
            pattern = AttentionKind.CROSS.point(L, "pattern")
            with points(read=[layer.point, pattern]) as seen:
                model(src, tgt_in)
            real = tgt_in != model.config.pad_id  # (B, T)
            fs.append(sae.encode(seen[layer.point].flatten(2))[real])  # (n, F)
            produced += [tokenizer.id_to_token(int(t)) for t in tgt_out[real]]
            keys = seen[pattern].argmax(-1).permute(0, 2, 1)[real]  # (n, H): the key each head reads most
            rows_of = real.nonzero()[:, 0]
            attended += [[tokenizer.id_to_token(int(src[b, k])) for k in ks] for b, ks in zip(rows_of.tolist(),
                                                                                             keys.tolist())]
        f = torch.cat(fs)  # (N, F)
        for j in range(f.size(1)):
            firing = int((f[:, j] > 0).sum())
            if firing < top:
                continue
            head = int(share[j].argmax())
            best = f[:, j].topk(top).indices.tolist()
            future = [i for i in best if writes_future(produced[i])]
            reads = sum(reads_shall(attended[i][head]) for i in future) / max(len(future), 1)
            rows.append((len(future) / top, reads, L, j, head, float(share[j, head]), firing))
    return sorted(rows, reverse=True)


@torch.no_grad()
def demo_verses(model, tokenizer, info, L: int, features: set[int]) -> list[tuple]:
    """(English, row, the token written there, the feature, its activation, verse) of the test verses where one of
    `features` is the most active feature at a row writing a future ending, shortest first."""
    layer = AttentionLayer("cross", L)
    sae = load_sae(PATH, info, layer, width(model))
    out = []
    for pair in held_out()[0]:
        if len(pair.en.split()) > MAX_WORDS:
            continue
        record = record_attention(model, tokenizer, pair.en)
        f = input_activations(model, sae, layer, record.input_ids, record.target_ids)  # (T, F)
        tokens = record.patterns["cross"].query_tokens
        for t, token in enumerate(tokens):
            top = int(f[t].argmax())
            if writes_future(token) and top in features:
                out.append((pair.en, t, token, top, round(float(f[t, top]), 2), pair.verse))
    return sorted(out, key=lambda row: len(row[0]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    model, tokenizer, info = load_checkpoint(PATH, device="cpu")
    rows = feature_table(model, tokenizer, info, args.top)
    print(f"| cross layer | feature | future endings among its top {args.top} | its main head | that head's share | "
          "the head reads shall/will there | positions it fires at |")
    for precision, reads, L, j, head, share, firing in rows[:8]:
        print(f"| {L} | {j} | {precision:.0%} | {L}.{head} | {share:.0%} | {reads:.0%} | {firing} |")
    L = rows[0][2]
    best = {j for precision, reads, layer, j, *_ in rows if layer == L and precision >= 0.7 and reads >= 0.9}
    print(f"\ntest verses where one of the features {sorted(best)} of cross layer {L} (future endings >= 70%, their "
          "main head reading shall/will >= 90%) is the most active at a row writing a future ending:")
    for en, t, token, j, activation, verse in demo_verses(model, tokenizer, info, L, best)[:12]:
        print(f"  {verse}: row {t} writes {token!r}, feature {j} ({activation}): {en}")


if __name__ == "__main__":
    main()
