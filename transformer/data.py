"""Training data: synthetic sequence-to-sequence tasks, batches of a text (the corpora themselves:
transformer.corpora, whose names this module gives too) and the induction task's repeated random tokens."""
from __future__ import annotations

import datetime as dt
import random
import string
from dataclasses import dataclass
from typing import Callable

import torch
from torch import Tensor

from .config import TransformerConfig
from .corpora import (KNOWN_CORPORA, KnownCorpus, NoTextColumn, hub_offline, hub_reachable,  # noqa: F401
                      load_hub_text, load_known_corpus, load_text, split_text, text_splits)
from .encoding import pair_batch

# --- synthetic tasks ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    """A source -> target mapping that makes fresh examples; `alphabet` holds every character it can use."""

    name: str
    description: str
    make: Callable[[random.Random], tuple[str, str]]
    alphabet: str
    max_source_len: int
    max_target_len: int

    def sample(self, rng: random.Random) -> tuple[str, str]:
        return self.make(rng)


LETTERS = string.ascii_lowercase
MAX_SEQ = 20


def _letters(rng: random.Random, lo: int = 1, hi: int = MAX_SEQ) -> str:
    return "".join(rng.choice(LETTERS) for _ in range(rng.randint(lo, hi)))


def _copy(rng):
    s = _letters(rng)
    return s, s


def _reverse(rng):
    s = _letters(rng)
    return s, s[::-1]


def _sort(rng):
    s = _letters(rng)
    return s, "".join(sorted(s))


MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
FIRST_DATE, LAST_DATE = dt.date(1950, 1, 1), dt.date(2049, 12, 31)  # two-digit years are unambiguous in this range


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


DATE_FORMATS: list[Callable[[dt.date], str]] = [
    lambda d: f"{MONTHS[d.month - 1]} {d.day}, {d.year}",  # March 3, 1998
    lambda d: f"{d.day} {MONTHS[d.month - 1][:3]} {d.year % 100:02d}",  # 3 Mar 98
    lambda d: f"{WEEKDAYS[d.weekday()]} {_ordinal(d.day)} of {MONTHS[d.month - 1]} {d.year}",  # Tuesday 3rd of March 1998
    lambda d: f"{d.month:02d}/{d.day:02d}/{d.year}",  # 03/03/1998 (US order)
    lambda d: f"{d.day:02d}.{d.month:02d}.{d.year}",  # 03.03.1998 (European order)
    lambda d: f"{d.day} {MONTHS[d.month - 1]} {d.year}",  # 3 March 1998
    lambda d: f"{MONTHS[d.month - 1][:3]} {d.day} {d.year}",  # Mar 3 1998
    lambda d: f"the {_ordinal(d.day)} of {MONTHS[d.month - 1]}, {d.year}",  # the 3rd of March, 1998
    lambda d: f"{WEEKDAYS[d.weekday()][:3]}, {d.day} {MONTHS[d.month - 1][:3]} {d.year}",  # Tue, 3 Mar 1998
    lambda d: f"{MONTHS[d.month - 1].upper()} {d.day} {d.year}",  # MARCH 3 1998
    lambda d: f"{d.year}/{d.month}/{d.day}",  # 1998/3/3
]


def _date(rng):
    d = FIRST_DATE + dt.timedelta(days=rng.randrange((LAST_DATE - FIRST_DATE).days + 1))
    return rng.choice(DATE_FORMATS)(d), d.isoformat()


def _date_alphabet() -> str:
    chars = set(string.digits + " ,./-")
    for name in MONTHS + WEEKDAYS:
        chars |= set(name) | set(name.upper())
    chars |= set("thstndrdof")
    return "".join(sorted(chars))


TASKS: dict[str, Task] = {
    "copy": Task("copy", "Copy the letters unchanged", _copy, LETTERS, MAX_SEQ, MAX_SEQ),
    "reverse": Task("reverse", "Write the letters backwards", _reverse, LETTERS, MAX_SEQ, MAX_SEQ),
    "sort": Task("sort", "Sort the letters alphabetically", _sort, LETTERS, MAX_SEQ, MAX_SEQ),
    "dates": Task("dates", "Rewrite a date written by a human as ISO 8601 (YYYY-MM-DD)", _date, _date_alphabet(), 32, 10),
}


def task_batch(task: Task, tokenizer, rng: random.Random, batch_size: int, config: TransformerConfig):
    """Fresh examples as `encoding.pair_batch` assembles them: src = source + </s>; the decoder reads <s> + target
    (teacher forcing, the target shifted right) and is scored on target + </s>. Returns (src, tgt_in, tgt_out,
    pairs)."""
    pairs = [task.sample(rng) for _ in range(batch_size)]
    return (*pair_batch(tokenizer, pairs, config), pairs)


class TaskData:
    """Seq2seq batches from a synthetic task; validation examples come from a different seed."""

    def __init__(self, task: Task, tokenizer, model_cfg, seed: int, n_val: int):
        self.task, self.tokenizer, self.cfg = task, tokenizer, model_cfg
        self.rng = random.Random(seed)
        val_rng = random.Random(seed + 1_000_003)
        self.val_pairs = [task.sample(val_rng) for _ in range(n_val)]

    def train_batch(self, batch_size: int):
        src, tgt_in, tgt_out, _ = task_batch(self.task, self.tokenizer, self.rng, batch_size, self.cfg)
        return (src, tgt_in), tgt_out

    def state(self) -> dict:
        version, internal, gauss = self.rng.getstate()
        return {"rng": [version, list(internal), gauss]}

    def load_state(self, state: dict):
        version, internal, gauss = state["rng"]
        self.rng.setstate((version, tuple(internal), gauss))


class TextData:
    """Language-model batches: random windows of the training tokens; validation windows are fixed."""

    def __init__(self, train_text: str, val_text: str, tokenizer, block_size: int, seed: int, n_val: int):
        self.tokenizer, self.block_size = tokenizer, block_size
        self.train_ids = torch.tensor(tokenizer.encode(train_text))
        self.val_ids = torch.tensor(tokenizer.encode(val_text))
        if len(self.train_ids) <= block_size + 1 or len(self.val_ids) <= block_size + 1:
            raise ValueError(f"the text is too short for block_size={block_size}: it needs more than "
                             f"{10 * (block_size + 1)} tokens")
        self.generator = torch.Generator().manual_seed(seed)
        val_gen = torch.Generator().manual_seed(seed + 1_000_003)
        self.val_batch = text_batch(self.val_ids, block_size, min(n_val, 64), val_gen)

    def train_batch(self, batch_size: int):
        x, y = text_batch(self.train_ids, self.block_size, batch_size, self.generator)
        return (x,), y

    def state(self) -> dict:
        return {"generator": self.generator.get_state().tolist()}

    def load_state(self, state: dict):
        self.generator.set_state(torch.tensor(state["generator"], dtype=torch.uint8))


def text_batch(data: Tensor, block_size: int, batch_size: int, generator: torch.Generator) -> tuple[Tensor, Tensor]:
    """Random windows of a token stream: x (B, block_size) and y, the same windows shifted one token left."""
    starts = torch.randint(len(data) - block_size - 1, (batch_size,), generator=generator)
    x = torch.stack([data[i: i + block_size] for i in starts.tolist()])  # (B, T)
    y = torch.stack([data[i + 1: i + 1 + block_size] for i in starts.tolist()])  # (B, T)
    return x, y


# --- repeated random tokens: the induction-head task of Olsson et al. (2022) -----------------------------------

INDUCTION_ALPHABET = string.ascii_letters + string.digits  # 62 characters a teacher can type
INDUCTION_MIN_HALF = 4  # the shortest first half of a training sequence


def repeated_random_tokens(ids: Tensor, n_seqs: int, seq_len: int, generator: torch.Generator,
                           prefix: int = 0) -> Tensor:
    """(n_seqs, prefix + 2 * seq_len): `prefix` random tokens, then seq_len more, then those seq_len again.

    The prefix + seq_len tokens are drawn from `ids` without repeats, so every token of the second copy occurred
    exactly once before: for query t of the second copy, the token to predict is the one at t - seq_len + 1.
    """
    if not 1 <= seq_len <= len(ids) - prefix or prefix < 0:
        raise ValueError(f"seq_len: prefix + seq_len must be at most {len(ids)} (distinct tokens from {len(ids)} "
                         f"ids), got seq_len={seq_len}, prefix={prefix}")
    order = torch.rand(n_seqs, len(ids), generator=generator).argsort(-1)[:, : prefix + seq_len]  # distinct per row
    first = ids[order]  # (n_seqs, prefix + seq_len)
    return torch.cat([first, first[:, prefix:]], dim=1)  # (n_seqs, prefix + 2 * seq_len)


class InductionData:
    """Language-model batches for the induction-head task: a random prefix of p tokens, then n random tokens, then
    the same n again (all distinct before the repeat, drawn from `ids`).

    Every training batch draws its own n from [min_half, max_half] and p from [0, max_len - 2n], so neither a
    fixed offset nor a fixed ratio of positions finds the earlier copy (without the prefix a 2-layer model learns
    to read position t/2 instead of forming a previous-token head): the model has to find it by its content.
    x is a sequence without its last token and y the sequence without its first (like TextData); the validation
    batch is fixed, with n = max_half and no prefix.
    """

    def __init__(self, ids: Tensor, min_half: int, max_len: int, seed: int, n_val: int):
        self.max_half = min(max_len // 2, len(ids))
        if not 1 <= min_half <= self.max_half:
            raise ValueError(f"min_half: must be in [1, {self.max_half}], got {min_half}")
        self.ids, self.min_half, self.max_len = ids, min_half, max_len
        self.generator = torch.Generator().manual_seed(seed)
        val = repeated_random_tokens(ids, min(n_val, 64), self.max_half,
                                     torch.Generator().manual_seed(seed + 1_000_003))
        self.val_batch = val[:, :-1], val[:, 1:]  # (B, 2 max_half - 1) each

    def train_batch(self, batch_size: int):
        n = int(torch.randint(self.min_half, self.max_half + 1, (), generator=self.generator))
        p = int(torch.randint(0, min(self.max_len - 2 * n, len(self.ids) - n) + 1, (), generator=self.generator))
        seqs = repeated_random_tokens(self.ids, batch_size, n, self.generator, prefix=p)  # (B, p + 2n)
        return (seqs[:, :-1],), seqs[:, 1:]

    def state(self) -> dict:
        return {"generator": self.generator.get_state().tolist()}

    def load_state(self, state: dict):
        self.generator.set_state(torch.tensor(state["generator"], dtype=torch.uint8))
