"""Measure a translation checkpoint: BLEU and chrF (sacrebleu) of greedy and beam translations of the test verses,
the copy-the-source baseline, and how well each cross-attention head aligns words (AER against Strong's links).

    python -m transformer.translation.evaluate checkpoints/translate-en-es   # writes the metrics and the card
    python -m transformer.translation.evaluate checkpoints/translate-en-es --check   # recompute, compare, no write
    python -m transformer.translation.evaluate checkpoints/translate-en-es --unseen  # BLEU, chrF: whole, unseen

BLEU and chrF are given on the whole test split and on its *unseen* verses: those whose Spanish shares under 10% of
its 4-grams with any one training verse (transformer.translation.overlap, from the committed overlap.tsv).
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import torch
from tqdm import tqdm

from ..checkpoint import load_checkpoint, save_checkpoint
from ..encoding import most_target_tokens, pad, source_ids, target_tokens
from ..generate import generate, greedy_batch
from ..heads import AttentionKind
from ..interpretability.probe import record_ids
from .alignment import aligned_targets, diagonal_alignment, heads_alignments, lowest_aer_head, score_on_gold
from .bible import VersePair
from .corpus import DATA_DIR, held_out
from .gold import WordCross, cross_words, gold_links
from .overlap import NEAR_DUPLICATE, UNSEEN, read_overlap, unseen

BEAM, LENGTH_PENALTY = 4, 1.0


def bleu(hypotheses: list[str], references: list[str]) -> float:
    """Corpus BLEU (sacrebleu's default 13a tokenisation, one reference per verse)."""
    import sacrebleu

    return round(sacrebleu.corpus_bleu(hypotheses, [references]).score, 2)


def chrf(hypotheses: list[str], references: list[str]) -> float:
    import sacrebleu

    return round(sacrebleu.corpus_chrf(hypotheses, [references]).score, 2)


def max_output_tokens(model) -> int:
    return most_target_tokens(model.config)


@torch.no_grad()
def translate_greedy(model, tokenizer, sources: list[str], batch_size: int = 32) -> list[str]:
    """Greedy translations, in the order of `sources`, a padded batch at a time (transformer.generate.greedy_batch).

    The batches are made of sources of similar length (sorted by token count): a batch decodes until its longest
    output ends and attends over its longest source, so mixed lengths cost ~1.7x the time. The padding is masked,
    so a source's translation does not depend on its batch (on the shipped model's 1,000 test verses: the same
    strings either way)."""
    cfg = model.config
    ids = [source_ids(tokenizer, s, cfg)[-cfg.max_len:] for s in sources]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    out: list[str] = [""] * len(ids)
    for start in range(0, len(order), batch_size):
        batch = order[start:start + batch_size]
        outputs = greedy_batch(model, pad([ids[i] for i in batch], cfg.pad_id).to(model.device),
                               max_output_tokens(model))
        for i, o in zip(batch, outputs):
            out[i] = tokenizer.decode(o)
    return out


@torch.no_grad()
def translate_beam(model, tokenizer, sources: list[str], num_beams: int = BEAM,
                   length_penalty: float = LENGTH_PENALTY, progress=None) -> list[str]:
    """Beam-search translations, one verse at a time (transformer.generate.generate, strategy="beam")."""
    cfg, out = model.config, []
    for s in sources:
        ids = source_ids(tokenizer, s, cfg)[-cfg.max_len:]
        steps = generate(model, ids, max_output_tokens(model), strategy="beam", num_beams=num_beams,
                         length_penalty=length_penalty)
        out.append(tokenizer.decode(step.token_id for step in steps))
        if progress is not None:
            progress.update(1)
    return out


@torch.no_grad()
def word_cross_attention(model, tokenizer, en: str, es: str) -> WordCross:
    """The decoder reads the reference Spanish (teacher forcing); the row of each Spanish word is the attention of
    the steps that produce its tokens (transformer.interpretability.probe.record_ids), in words
    (transformer.translation.gold.cross_words): exactly `en.split()` and `es.split()`."""
    cfg = model.config
    src = source_ids(tokenizer, en, cfg)[: cfg.max_len]
    tgt = target_tokens(tokenizer, es)[: most_target_tokens(cfg)]
    return cross_words(record_ids(model, tokenizer, src, tgt).patterns[AttentionKind.CROSS])


def alignment_table(model, tokenizer, pairs: list[VersePair], progress=None) -> dict:
    """AER, precision and recall per [layer][head] (the last column: the layer's mean over heads), pooled over
    the verses, with the diagonal baseline and the best head."""
    L, H = model.config.n_decoder_layers, model.config.n_heads
    predicted = [[[] for _ in range(H + 1)] for _ in range(L)]
    golds, diagonal = [], []
    for pair in pairs:
        attention = word_cross_attention(model, tokenizer, pair.en, pair.es)
        n_en, n_es = attention.weights.shape[-1], attention.weights.shape[-2]
        gold = gold_links(pair, n_en, n_es)
        targets = aligned_targets(gold)
        golds.append(gold)
        diagonal.append(diagonal_alignment(n_en, n_es, targets))
        for layer, heads in enumerate(heads_alignments(attention.weights, targets)):
            for h, links in enumerate(heads):
                predicted[layer][h].append(links)
        if progress is not None:
            progress.update(1)
    scores = [[score_on_gold(predicted[layer][h], golds) for h in range(H + 1)] for layer in range(L)]
    table = {k: [[round(getattr(s, k), 4) for s in row] for row in scores] for k in ("aer", "precision", "recall")}
    layer, head = lowest_aer_head(table)
    layer_means = [row[-1] for row in table["aer"]]
    return {**table, "best_head": [layer, head], "best_head_aer": table["aer"][layer][head],
            "best_layer_mean": int(min(range(L), key=layer_means.__getitem__)),
            "diagonal": score_on_gold(diagonal, golds).to_dict(), "verses": len(pairs),
            "gold_links": sum(len(g) for g in golds)}


def unseen_scores(test: list[VersePair], greedy: list[str], shares: dict) -> dict:
    """Greedy BLEU and chrF on the whole split and on its unseen verses (share < UNSEEN,
    transformer.translation.overlap), with the threshold and the counts."""
    keep = unseen(test, shares)
    kept = [(g, p.es) for g, p, k in zip(greedy, test, keep) if k]
    hypotheses, references = [g for g, _ in kept], [r for _, r in kept]
    return {"threshold": UNSEEN, "verses": len(kept), "bleu_greedy": bleu(hypotheses, references),
            "chrf_greedy": chrf(hypotheses, references), "all_verses": len(test),
            "bleu_greedy_all": bleu(greedy, [p.es for p in test]), "chrf_greedy_all": chrf(greedy, [p.es for p in test]),
            "near_duplicate_share": NEAR_DUPLICATE,
            "near_duplicates": sum(shares[p.verse][0] >= NEAR_DUPLICATE for p in test)}


def measure(model, tokenizer, test: list[VersePair], beam: bool = True) -> dict:
    """Every metric of the card, on the test verses."""
    sources, references = [p.en for p in test], [p.es for p in test]
    start = time.perf_counter()
    greedy = translate_greedy(model, tokenizer, sources)
    metrics = {"test_verses": len(test), "bleu_greedy": bleu(greedy, references),
               "chrf_greedy": chrf(greedy, references),
               "bleu_copy_source": bleu(sources, references), "chrf_copy_source": chrf(sources, references),
               "seconds_greedy": round(time.perf_counter() - start, 1),
               "unseen": unseen_scores(test, greedy, read_overlap())}
    if beam:
        start = time.perf_counter()
        with tqdm(total=len(sources), desc=f"beam {BEAM}", unit="verse") as bar:
            beamed = translate_beam(model, tokenizer, sources, progress=bar)
        metrics.update({f"bleu_beam{BEAM}": bleu(beamed, references), f"chrf_beam{BEAM}": chrf(beamed, references),
                        "length_penalty": LENGTH_PENALTY, "seconds_beam": round(time.perf_counter() - start, 1)})
    with tqdm(total=len(test), desc="alignment", unit="verse") as bar:
        metrics["alignment"] = alignment_table(model, tokenizer, test, progress=bar)
    metrics["examples"] = [{"verse": p.verse, "en": p.en, "es": p.es, "greedy": g}
                           for p, g in list(zip(test, greedy))[:3]]
    return metrics


def update_metrics(checkpoint: str | Path, metrics: dict) -> None:
    """Merge `metrics` into the checkpoint's config.json metrics and rewrite its card from that file; the weights,
    the tokenizer and the rest of config.json are left as they are (each file replaced whole by a rename)."""
    from ..checkpoint import read_info
    from .card import model_card

    path = Path(checkpoint)
    info = read_info(path)
    info["metrics"] = {**info.get("metrics", {}), **metrics}
    for name, text in (("config.json", json.dumps(info, indent=2) + "\n"), ("README.md", model_card(path.name, info))):
        tmp = path / f".{name}.tmp"
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path / name)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m transformer.translation.evaluate", description=__doc__)
    p.add_argument("checkpoint")
    p.add_argument("--check", action="store_true", help="recompute greedy BLEU and the best head's AER and compare "
                   "them with the card's; write nothing")
    p.add_argument("--no-beam", action="store_true", help="skip the beam search (the slowest part)")
    p.add_argument("--card-only", action="store_true", help="rewrite README.md from the metrics in config.json")
    p.add_argument("--unseen", action="store_true", help="only the greedy BLEU and chrF on the whole split and on "
                   "its unseen verses (about a minute): print them and write them to the card (with --check: "
                   "print them beside the card's, write nothing)")
    args = p.parse_args(argv)
    model, tokenizer, info = load_checkpoint(args.checkpoint)
    from .card import model_card

    if args.card_only:
        card = model_card(Path(args.checkpoint).name, {**info, "model": model.config.to_dict()})
        (Path(args.checkpoint) / "README.md").write_text(card, encoding="utf-8")
        return 0
    test, _ = held_out(DATA_DIR)
    if args.unseen:
        measured = unseen_scores(test, translate_greedy(model, tokenizer, [p.en for p in test]), read_overlap())
        print(json.dumps({"card": info["metrics"].get("unseen"), "measured": measured} if args.check else measured))
        if not args.check:
            update_metrics(args.checkpoint, {"unseen": measured})
        return 0
    metrics = measure(model, tokenizer, test, beam=not (args.no_beam or args.check))
    if args.check:
        card = info["metrics"]
        print(json.dumps({"bleu_greedy": [card.get("bleu_greedy"), metrics["bleu_greedy"]],
                          "bleu_greedy_unseen": [card.get("unseen", {}).get("bleu_greedy"),
                                                 metrics["unseen"]["bleu_greedy"]],
                          "best_head_aer": [card.get("alignment", {}).get("best_head_aer"),
                                            metrics["alignment"]["best_head_aer"]]}))
        return 0
    update_metrics(args.checkpoint, metrics)
    print(json.dumps({k: v for k, v in metrics.items() if k not in ("alignment", "examples")}))
    print(f"best head: layer {metrics['alignment']['best_head'][0]} head {metrics['alignment']['best_head'][1]}, "
          f"AER {metrics['alignment']['best_head_aer']} (diagonal {metrics['alignment']['diagonal']['aer']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
