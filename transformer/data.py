"""Training data: synthetic sequence-to-sequence tasks, text corpora through `datasets`, padded batches."""
from __future__ import annotations

import datetime as dt
import os
import random
import re
import socket
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch
from torch import Tensor

from .config import TransformerConfig
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


# --- text corpora ---------------------------------------------------------------------------------------------


def load_text(source: str | Path, hub_only: bool = False, max_chars: int | None = None) -> str:
    """A whole text corpus as one string: a local file read through `datasets`' "text" loader, or else the name of
    a Hub dataset with a "text" column. A Hub name that cannot be reached raises ValueError saying so.
    `hub_only` skips the local file (use `load_hub_text`, which checks the name first). With `max_chars`, a Hub
    dataset is streamed and the read stops once that many characters have come: a dataset of any size costs at
    most about that much download, disk and memory (the result may run one row past it)."""
    import datasets  # imported here: `datasets` takes a second to import

    datasets.disable_progress_bars()  # library code does not print
    load_dataset = datasets.load_dataset

    path = Path(source)
    if not hub_only and path.is_file():
        ds = load_dataset("text", data_files=str(path), sample_by="document", split="train")
        return "".join(ds["text"])
    if not hub_reachable():
        raise ValueError(f"could not load {source!r}: it is not a local file, and the Hugging Face Hub cannot be "
                         f"reached from this machine (offline, or HF_HUB_OFFLINE / HF_DATASETS_OFFLINE is set)")
    try:
        if max_chars is not None:
            return _streamed_text(load_dataset(str(source), split="train", streaming=True), max_chars)
        ds = load_dataset(str(source), split="train")
    except NoTextColumn:
        raise
    except Exception as e:  # offline, unknown name, gated: all are "cannot load this"
        raise ValueError(f"could not load {source!r}: not a local file, and the Hugging Face Hub dataset failed to "
                         f"load ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})") from None
    if "text" not in ds.column_names:
        raise ValueError(f"dataset {source!r} has no 'text' column (columns: {ds.column_names})")
    return "\n".join(ds["text"])


class NoTextColumn(ValueError):
    """A dataset without the "text" column a text corpus is read from."""


def _streamed_text(rows, max_chars: int) -> str:
    """The "text" column of a streamed dataset, rows joined by newlines, read until max_chars characters."""
    parts, total = [], 0
    for row in rows:
        if "text" not in row:
            raise NoTextColumn(f"the dataset has no 'text' column (columns: {sorted(row)[:10]})")
        text = row["text"] if isinstance(row["text"], str) else ""
        parts.append(text)
        total += len(text) + 1
        if total >= max_chars:
            break
    return "\n".join(parts)[:max_chars]


HUB_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,95}(/[A-Za-z0-9][A-Za-z0-9_.-]{0,95})?")


def load_hub_text(name: str, max_chars: int | None = None) -> str:
    """A Hub dataset's "text" column as one string, for callers that must never read a local file (the app): `name`
    must look like `owner/dataset` or `dataset`, never a path, and is checked before anything touches the disk or
    the network. With `max_chars`, the dataset is streamed and read only that far (load_text)."""
    if not isinstance(name, str) or not HUB_NAME.fullmatch(name) or ".." in name or name.endswith((".", "-")):
        raise ValueError(f"the Hub dataset must be a name like 'owner/dataset' or 'dataset' (letters, digits, "
                         f"'-', '_', '.'; at most 96 characters each), got {str(name)[:60]!r}")
    if Path(name).exists() or name.split("/")[0] in _packaged_builders():
        raise ValueError(f"{name!r} is not a Hub dataset name here (it names a local folder or a file format)")
    return load_text(name, hub_only=True, max_chars=max_chars)


def _packaged_builders() -> set[str]:
    """`datasets`' own loaders ("text", "csv", "json", ...), which read local files: never a Hub name here."""
    from datasets.packaged_modules import _PACKAGED_DATASETS_MODULES

    return set(_PACKAGED_DATASETS_MODULES)


def hub_offline() -> bool:
    """Whether the environment puts `datasets` in offline mode: HF_DATASETS_OFFLINE when it is set, else
    HF_HUB_OFFLINE (the order `datasets.config` reads them in)."""
    flag = os.environ.get("HF_DATASETS_OFFLINE")
    flag = os.environ.get("HF_HUB_OFFLINE", "") if flag is None else flag
    return flag.strip().lower() in ("1", "true", "yes", "on")


def hub_reachable(timeout: float = 3.0) -> bool:
    """False at once in offline mode (`hub_offline`), else whether huggingface.co answers within `timeout` seconds
    (so an offline machine gets a clear error in seconds instead of a minute of retries)."""
    if hub_offline():
        return False
    try:
        socket.create_connection(("huggingface.co", 443), timeout=timeout).close()
        return True
    except OSError:
        return False


def split_text(text: str, val_fraction: float = 0.1) -> tuple[str, str]:
    """Train on the first 90% of the characters, validate on the last 10%."""
    cut = int(len(text) * (1 - val_fraction))
    return text[:cut], text[cut:]


# --- known corpora: a short name for a Hub dataset that comes with its own train and validation splits -----------


def _join_lines(rows: list[str]) -> str:
    """WikiText's rows are the lines of its files, each ending in its newline; a blank line is an empty row."""
    return "".join(row or "\n" for row in rows)


@dataclass(frozen=True)
class KnownCorpus:
    """A corpus known by a short name: a Hub dataset and config whose own "train" and "validation" splits are used
    (not our 90/10 cut); `join` makes one text of a split's "text" rows; `tokenizer` is the default for it."""

    title: str
    hub_name: str
    config: str
    join: Callable[[list[str]], str]
    tokenizer: str


KNOWN_CORPORA: dict[str, KnownCorpus] = {
    "wikitext-2": KnownCorpus("WikiText-2 raw, Merity et al. 2016", "Salesforce/wikitext", "wikitext-2-raw-v1",
                              _join_lines, tokenizer="bpe"),
}


def load_known_corpus(name: str) -> tuple[str, str]:
    """(train text, validation text) of a corpus of KNOWN_CORPORA, from its own splits through
    `datasets.load_dataset` (the local cache in offline mode). Anything that stops it loading is a ValueError that
    says how to pass a local file instead."""
    if name not in KNOWN_CORPORA:
        raise ValueError(f"unknown corpus {name!r}: known corpora are {sorted(KNOWN_CORPORA)}")
    corpus = KNOWN_CORPORA[name]
    what = f"{name!r} (Hub dataset {corpus.hub_name}, config {corpus.config})"
    instead = ("pass a local copy instead, e.g. --text path/to/corpus.txt (any local text file works; it is cut "
               "90/10 into training and validation text, not the corpus's own splits)")
    if not hub_offline() and not hub_reachable():
        raise ValueError(f"could not load {what}: the Hugging Face Hub cannot be reached from this machine; {instead}")
    import datasets  # imported here: `datasets` takes a second to import

    datasets.disable_progress_bars()  # library code does not print
    try:
        splits = datasets.load_dataset(corpus.hub_name, corpus.config)
    except Exception as e:  # offline and not cached, renamed, unreachable: all are "cannot load this"
        offline = "in offline mode (HF_HUB_OFFLINE / HF_DATASETS_OFFLINE) it is not in the local cache; "
        reason = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        raise ValueError(f"could not load {what}: {offline if hub_offline() else ''}{reason}; {instead}") from None
    for split in ("train", "validation"):
        if split not in splits or "text" not in splits[split].column_names:
            raise ValueError(f"{what} has no {split!r} split with a 'text' column (splits: {list(splits)})")
    return corpus.join(splits["train"]["text"]), corpus.join(splits["validation"]["text"])


def text_splits(source: str | Path) -> tuple[str, str]:
    """(train text, validation text): a known corpus's own splits, else the 90/10 cut of `load_text(source)` (a
    local file or a Hub dataset name). A known name wins over a file of that name: write ./wikitext-2 for the file."""
    if isinstance(source, str) and source in KNOWN_CORPORA:
        return load_known_corpus(source)
    return split_text(load_text(source))


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
