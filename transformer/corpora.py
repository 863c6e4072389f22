"""Text corpora through `datasets`: a local file or a Hub dataset name (checked, streamed up to a length), the
known corpora with their own splits, and the 90/10 cut of any other text. transformer.data batches them."""
from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

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


