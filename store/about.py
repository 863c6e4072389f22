"""What a checkpoint was trained on and what input it expects, in one sentence or two: the one owner of that text
(the checkpoint list, the Generate tab and the demos all show it). Read from the checkpoint's own config.json (its
`task` and `training` sections) or, for a model trained in this app, the same fields of its info. No gradio here."""
from __future__ import annotations

import random
import re

from transformer.data import INDUCTION_ALPHABET, LETTERS, TASKS
from transformer.translation import TASK as TRANSLATION


def _example(task) -> str:
    return task.sample(random.Random(0))[0]


def trained_on(task: str | None, training: dict | None, pretrained: bool = False) -> str:
    """Markdown: what data the model learned from and what to type into it (a cold student typed "Hello, how are
    you?" into `reverse` and got letters back with no hint why, issue 29 item 5)."""
    training = training or {}
    if pretrained:
        return ("**Pretrained** (its authors' weights from the Hugging Face cache, read into the from-scratch "
                "model): trained on large amounts of general English text; type ordinary English.")
    if task == TRANSLATION:
        pairs = training.get("train_pairs")
        count = f"{int(pairs):,} " if pairs else ""
        data = re.sub(r"\s*\([^)]*\)", "", str(training.get("data", "World English Bible -> Reina-Valera 1909")))
        data = data.replace("->", "with their Spanish in the")
        return (f"**Trained on the Bible**: {count}verses of the {data}. It expects an "
                f"**English Bible verse** (e.g. *And God said, Let there be light.*) and answers in 1909 Bible "
                f"Spanish; a modern sentence comes back as fluent nonsense.")
    if task == "induction":
        return (f"**Trained on random characters that repeat** (the induction task): it expects distinct characters "
                f"of `{INDUCTION_ALPHABET[:10]}…`, then the same again (e.g. `kqwzjxkqwzjx`), and predicts the "
                f"repeat; other text means nothing to it.")
    if task in TASKS:
        spec = TASKS[task]
        if spec.alphabet == LETTERS:
            expects = (f"lowercase letters a-z, at most {spec.max_source_len}, e.g. `{_example(spec)}`; anything else "
                       f"(capitals, spaces, punctuation) it never saw")
        else:
            expects = f"at most {spec.max_source_len} characters like `{_example(spec)}`"
        return f"**Trained on the synthetic task `{task}`**: {spec.description}. It expects {expects}."
    text = str(training.get("command", ""))
    if "shakespeare" in text.lower():
        return ("**Trained on Tiny Shakespeare** (the plays, one character per token): it continues English text in "
                "that style, e.g. `ROMEO:`.")
    return "**Trained on a text** given when it was trained (one character per token): it continues text like it."
