"""The card a checkpoint trained from the command line carries (transformer.train.cli): what it was trained on and
how, its architecture, the metrics measured on the finished model, and its known limits."""
from __future__ import annotations

import json

from ..data import INDUCTION_ALPHABET, INDUCTION_MIN_HALF, KNOWN_CORPORA, TASKS
from ..evaluate import bits, exact_match, text_loss
from ..interpretability.analysis import repeated_sequence_scores
from ..interpretability.head_metrics import induction_metrics, previous_token_scores, reverse_anti_diagonality


def card_metrics(model, tokenizer, args, val_text) -> dict:
    """The metrics a checkpoint's card states, measured on the finished model (a task's exact match on 1,000
    examples, the induction card's heads, a text model's validation loss and head scores)."""
    if args.task:
        metrics = {"exact_match": exact_match(model, tokenizer, TASKS[args.task], n=1000, seed=2024),
                   "exact_match_examples": 1000}
        if args.task == "reverse":
            metrics["anti_diagonal_cross_attention"] = reverse_anti_diagonality(model, tokenizer, TASKS["reverse"])
        return metrics
    if args.induction:
        return induction_metrics(model)
    loss = text_loss(model, tokenizer, val_text)  # one pass over the whole validation text
    prev = previous_token_scores(model, tokenizer, val_text)
    detectors = repeated_sequence_scores(model)  # on random tokens repeated twice, as TransformerLens measures them
    return {"val_loss_per_token": round(loss.loss_per_token, 4), "val_perplexity": round(loss.perplexity, 3),
            "tokenizer": tokenizer.kind,  # perplexity is per token of this tokenizer
            "val_nats_per_char": round(loss.nats_per_char, 4), "val_bpc": round(bits(loss.nats_per_char), 4),
            "val_tokens": loss.tokens, "val_chars": loss.chars,
            "previous_token_score": [[round(v, 3) for v in row] for row in prev.tolist()],
            "duplicate_token_score": [[round(v, 3) for v in row] for row in detectors["duplicate token"].tolist()],
            "induction_score": [[round(v, 3) for v in row] for row in detectors["induction"].tolist()]}


def model_card(name: str, args, info: dict, command: str) -> str:
    t, m = info["training"], info["metrics"]
    data = (f"synthetic task `{args.task}`: {TASKS[args.task].description}; fresh examples every step"
            if args.task else f"`{args.text}`, first 90% of the characters (the last 10% are validation)")
    if args.text in KNOWN_CORPORA:
        corpus = KNOWN_CORPORA[args.text]
        data = (f"{corpus.title}: Hugging Face Hub dataset `{corpus.hub_name}`, config `{corpus.config}`; its "
                f"train split (its validation split is the validation text)")
    if args.induction:
        max_len = info["model"]["max_len"]
        data = (f"the induction-head task (Olsson et al. 2022): a prefix of p random characters, then n more, then "
                f"the same n again (distinct characters of `{INDUCTION_ALPHABET}` before the repeat); every batch "
                f"draws n from {INDUCTION_MIN_HALF}..{max_len // 2} and p from 0..{max_len} - 2n; fresh sequences "
                f"every step")
    lines = [f"# {name}", "", f"Data: {data}.", "", "## How it was trained", "", "```", command, "```", "",
             f"- steps: {t['steps']}, tokens seen: {t['tokens']:,}, wall time: {t['wall_time_s']} s",
             f"- hardware: {t['hardware']}", ""]
    stage = t.get("previous_stage")
    if stage:
        lines += ["It started from the weights of an earlier stage (written to the `--init-from` directory), trained "
                  "with:", "", "```", stage["command"], "```",
                  "", f"- steps: {stage['steps']}, tokens seen: {stage['tokens']:,}, wall time: "
                  f"{stage['wall_time_s']} s", f"- hardware: {stage['hardware']}", "",
                  f"In total: {stage['steps'] + t['steps']} steps, {stage['tokens'] + t['tokens']:,} tokens, "
                  f"{stage['wall_time_s'] + t['wall_time_s']:.0f} s.", ""]
    lines += ["## Architecture", "", "```json",
             json.dumps(info["model"], indent=1), "```", "", "## Measured metrics", ""]
    for key, value in m.items():
        lines.append(f"- {key}: {value}")
    if "val_perplexity" in m:
        lines += ["", (f"On the whole validation text, read in consecutive windows of {info['model']['max_len']} "
                       f"tokens: perplexity = exp(val_loss_per_token), per {m['tokenizer']} token (vocabulary "
                       f"{info['model']['vocab_size']}), so it compares only models with the same tokenizer; nats "
                       f"per character (total nats / characters) compares any two.")]
    lines += ["", "## Known limits", ""]
    if args.task:
        lines.append(f"- Trained only on inputs that `TASKS['{args.task}']` makes; other inputs are out of "
                     f"distribution (max source length {TASKS[args.task].max_source_len}).")
    elif args.induction:
        lines.append("- It has only ever seen a random string followed by its repeat: it predicts the second copy and "
                     "guesses on everything else. Characters outside the alphabet become `<unk>`.")
    else:
        level = "character" if m.get("tokenizer", "char") == "char" else "subword (BPE)"
        lines.append(f"- A small {level}-level model: it imitates the look of the corpus, not its sense.")
    lines += ["", f"Re-run the command above to reproduce these metrics (seeded; CPU timings vary).", ""]
    return "\n".join(lines)
