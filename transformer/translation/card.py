"""The model card of the translation checkpoint, written from its config.json (training record and metrics)."""
from __future__ import annotations

import json

from ..interpretability.feature_card import card_section


def _aer_rows(alignment: dict) -> list[str]:
    n_heads = len(alignment["aer"][0]) - 1
    header = "| layer | " + " | ".join(f"head {h}" for h in range(n_heads)) + " | mean of heads |"
    rows = [header, "|" + " --- |" * (n_heads + 2)]
    for layer, row in enumerate(alignment["aer"]):
        rows.append(f"| {layer} | " + " | ".join(f"{v:.3f}" for v in row) + " |")
    return rows


def _round(value):
    return round(value, 4) if isinstance(value, float) else value


def _stage_lines(t: dict) -> list[str]:
    stage = t.get("previous_stage")
    if not stage:
        return []
    return ["- it continued the weights of a first stage, trained with:", "", "```", stage["command"], "```", "",
            f"  {stage['steps']} steps, {stage['wall_time_s'] / 60:.0f} min; both stages together: "
            f"{t['total_wall_time_s'] / 60:.0f} min of training"]


def _unseen_lines(u: dict | None) -> list[str]:
    """The greedy row again on the unseen test verses (transformer.translation.overlap's rule)."""
    if not u:
        return []
    return [f"| greedy, the {u['verses']} unseen test verses | {u['bleu_greedy']} | {u['chrf_greedy']} |", "",
            "The split is by random verse, so parallel passages leak (Kings and Chronicles, the Gospels, repeated "
            f"formulas): {u['near_duplicates']} of the {u['all_verses']} test verses share at least "
            f"{u['near_duplicate_share']:.0%} of their Spanish word 4-grams with one training verse. *Unseen* verses "
            f"share under {u['threshold']:.0%} with every training verse (the share of a verse: its largest share of "
            "lower-cased word 4-grams with any one training verse, `transformer/translation/overlap.py`; every test "
            "verse's share is in `data/bible-en-es/overlap.tsv`). Greedy on the whole split: BLEU "
            f"{u['bleu_greedy_all']}, chrF {u['chrf_greedy_all']}; on the {u['verses']} unseen verses: BLEU "
            f"{u['bleu_greedy']}, chrF {u['chrf_greedy']}. Recompute: `python -m transformer.translation.evaluate "
            "checkpoints/translate-en-es --unseen` (the shares themselves, from the SWORD modules: "
            "`python -m transformer.translation.overlap`)."]


def _eflomal_lines(e: dict | None, a: dict, pretrained: dict | None = None) -> list[str]:
    """eflomal's row beside the best head's, scored by the same protocol (transformer.translation.statistical), and
    a pretrained translator's (`pretrained`: transformer.translation.aer --card)."""
    if not e:
        return []
    layer, head = a["best_head"]
    return ["", "A statistical aligner as the anchor, scored the same way (each gold-linked Spanish word to one "
            f"English word, the same {e['verses']} test verses and gold): eflomal (Östling & Tiedemann 2016), run on "
            f"the {e['training_verses']} training verses with the test verses, its forward alignment "
            "(`python -m transformer.translation.statistical checkpoints/translate-en-es`; it samples without a "
            "seed, so a rerun moves the third decimal):", "",
            "| aligner | precision | recall | AER |", "| --- | --- | --- | --- |",
            f"| eflomal | {e['precision']:.3f} | {e['recall']:.3f} | {e['aer']:.3f} |",
            f"| best head (layer {layer}, head {head}) | {a['precision'][layer][head]:.3f} | "
            f"{a['recall'][layer][head]:.3f} | {a['best_head_aer']:.3f} |",
            f"| diagonal | {a['diagonal']['precision']:.3f} | {a['diagonal']['recall']:.3f} | "
            f"{a['diagonal']['aer']:.3f} |", *_pretrained_lines(pretrained)]


MARIAN = "Helsinki-NLP/opus-mt-en-es"
MEASURE_MARIAN = f"python -m transformer.translation.aer {MARIAN} --card checkpoints/translate-en-es"


def _pretrained_lines(p: dict | None) -> list[str]:
    """A real translator's cross-attention scored the same way (transformer.translation.aer --card): its row, or,
    until someone with its weights runs the command, that it is not measured and the command that measures it."""
    if not p:
        return ["", f"Marian ({MARIAN}, the paper's model trained on OPUS): **not measured yet**. Its weights "
                "could not be downloaded where this card was written, and no figure is given without them. "
                f"`{MEASURE_MARIAN}` measures its cross-attention on the same verses and gold with the same "
                "protocol (its best head) and adds its row to this table."]
    layer, head = p["best_head"]
    return [f"| {p['source']} cross-attention, best head (layer {layer}, head {head}) | {p['precision']:.3f} | "
            f"{p['recall']:.3f} | {p['aer']:.3f} |", "", f"{p['source']}'s row: `python -m "
            f"transformer.translation.aer {p['source']} --card checkpoints/translate-en-es` on {p['verses']} test "
            "verses."]


def model_card(name: str, info: dict) -> str:
    t, m, cfg = info["training"], info["metrics"], info["model"]
    a = m.get("alignment")
    lines = [
        f"# {name}", "",
        "English -> Spanish translation with the paper's encoder-decoder, trained on a real public-domain corpus: "
        "the World English Bible (Debian `sword-text-web`) and the Reina-Valera 1909 (Debian `sword-text-sparv`), "
        "aligned verse by verse (`transformer/translation/bible.py`).", "",
        "## Data", "",
        f"- {t.get('train_pairs', '?')} training verse pairs ({t.get('train_pairs_dropped_too_long', 0)} dropped as "
        f"longer than the model's context); 1,000 test and 1,000 validation verses held out by the seeded rule of "
        "`transformer/translation/corpus.py`, committed as `data/bible-en-es/test.tsv` and `valid.tsv`.",
        "- A verse pair is kept when both verses exist under the KJV references in both modules and their word "
        "counts are within a factor of 2 (a verse the two versifications split differently is dropped).", "",
        "## How it was trained", "", "```", t["command"], "```", "",
        f"- steps: {t['steps']} ({t.get('epochs', '?')} epochs), target tokens seen: {t['tokens']:,}, "
        f"wall time: {t['wall_time_s'] / 60:.0f} min",
        f"- hardware: {t['hardware']}",
        *_stage_lines(t),
        f"- validation loss (nats per Spanish token, no smoothing, first 300 validation verses): final "
        f"{_round(t.get('val_loss_final'))}, average of the snapshots at steps {t.get('averaged_snapshots')}: "
        f"{_round(t.get('val_loss_averaged'))}; shipped: the lower of the two, "
        f"{'the average' if t.get('averaged') else 'the final weights'}", "",
        "Choices (the paper's recipe unless said): a shared English+Spanish BPE vocabulary "
        f"({cfg['vocab_size']} tokens, section 5.1) so one embedding serves both sides and the output layer "
        "(tied, section 3.4); Adam with beta2 0.98 (5.3); label smoothing 0.1 (5.4); dropout "
        f"{cfg['dropout']} (the paper's 0.1 is for 4.5M sentence pairs; this corpus has 29k, so more regularisation); "
        "the average of the last snapshots (6.1) when it validates better than the last weights; beam search with 4 beams (6.1) and the score log P / length. "
        "Pre-norm (`norm_first`) instead of the paper's post-norm: at this budget it trains without a long warm-up. "
        "Sizes are smaller than the base model so that it trains on 2 CPU cores within 2 hours and stays under "
        "40 MB.", "",
        "## Architecture", "", "```json", json.dumps(cfg, indent=1), "```", "",
        "## Translation quality (1,000 test verses, sacrebleu)", "",
        "| system | BLEU | chrF |", "| --- | --- | --- |",
        f"| copy the English source (baseline) | {m.get('bleu_copy_source')} | {m.get('chrf_copy_source')} |",
        f"| greedy | {m.get('bleu_greedy')} | {m.get('chrf_greedy')} |",
    ]
    if "bleu_beam4" in m:
        lines.append(f"| beam 4 | {m['bleu_beam4']} | {m['chrf_beam4']} |")
    lines += _unseen_lines(m.get("unseen"))
    lines += ["", "Recompute: `python -m transformer.translation.evaluate checkpoints/translate-en-es` (writes this "
              "card), or with `--check` to compare the greedy BLEU and the best head's AER with this card without "
              "writing; `tests/integration/test_translation_checkpoint.py` does the same.", ""]
    if a:
        layer, head = a["best_head"]
        d = a["diagonal"]
        lines += [
            "## Does cross-attention align words? (AER against Strong's-number links)", "",
            "Each Spanish word that has a gold link is aligned to the English word its attention weights most "
            "(subword weights summed over an English word's tokens, averaged over a Spanish word's; "
            "`transformer/interpretability/words.py`), with the reference Spanish read by the decoder. Gold: an "
            "English and a Spanish word tagged with the same Strong's number. Alignment error rate (Och & Ney "
            f"2003; lower is better) on the {a['verses']} test verses ({a['gold_links']} gold links):", "",
            *_aer_rows(a), "",
            f"- best head: layer {layer}, head {head}: AER {a['best_head_aer']:.3f} (precision "
            f"{a['precision'][layer][head]:.3f}, recall {a['recall'][layer][head]:.3f})",
            f"- best layer (mean of its heads): layer {a['best_layer_mean']}",
            f"- diagonal baseline (Spanish word j of m reads English word round(j n / m)): AER {d['aer']:.3f} "
            f"(precision {d['precision']:.3f}, recall {d['recall']:.3f})",
            *_eflomal_lines(m.get("eflomal"), a, m.get("pretrained_alignment")), "",
            "One link per Spanish word caps recall: the gold often links one Spanish word to several English ones "
            "(\"de tal manera\" <- \"so\"), and Strong's tags also link function words that translate the same "
            "Hebrew or Greek word (\"the\", \"of\"), so no alignment of this kind reaches AER 0.", "",
        ]
    lines += ["## Known limits", "",
              "- It has only read the Bible in a 1909 translation: modern English gets archaic Spanish (\"vosotros\", "
              "\"á\") and words outside that vocabulary are guessed from subwords.",
              f"- Inputs longer than {cfg['max_len'] - 1} tokens are cut.", ""]
    if info.get("features"):  # the shipped SAEs (transformer/interpretability/feature_card.py)
        lines.append(card_section(name, info["features"]))
    return "\n".join(lines)
