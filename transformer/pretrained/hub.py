"""Where pretrained files come from: a local directory, or a Hub repo fetched into (or read from) the local Hugging
Face cache. Only config, safetensors weights and tokenizer files are ever downloaded (never a pickled *.bin)."""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable

from huggingface_hub import HfApi, constants, scan_cache_dir, snapshot_download
from huggingface_hub.errors import CacheNotFound, HfHubHTTPError, LocalEntryNotFoundError, RepositoryNotFoundError

from ..checkpoint import CheckpointError

# config, weights, and every family's tokenizer files (GPT-2: vocab.json + merges.txt; BERT: vocab.txt; Marian:
# *.spm); never *.bin
HUB_FILES = ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "vocab.json",
             "merges.txt", "vocab.txt", "*.spm", "special_tokens_map.json", "generation_config.json"]
# Seconds to wait for the Hub's answer before falling back to the local cache. huggingface_hub's first request in
# a process also fetches its agent registry (3 s timeout), so a silent network fails in about 7 s.
HUB_TIMEOUT = 4.0
REPO_ID = re.compile(r"^[\w.-]+(/[\w.-]+)?$")  # "gpt2", "openai-community/gpt2"


def locate(source: str | os.PathLike) -> tuple[Path, str | None]:
    """(local directory, Hub repo id or None) of a directory in the Hugging Face layout or a Hub repo id."""
    path = Path(source).expanduser()
    if path.is_dir():
        return path, repo_id_of_snapshot(path)
    if REPO_ID.match(str(source)) and not path.exists():
        return fetch(str(source)), str(source)
    raise CheckpointError(f"{source}: neither a directory nor a Hugging Face repo id")


def fetch(repo_id: str) -> Path:
    """The local directory of a Hub repo's config, safetensors weights and tokenizer, downloaded if needed.

    Asks the Hub (HUB_TIMEOUT seconds at most) unless HF_HUB_OFFLINE is set; refuses a repo without
    model.safetensors before downloading anything; falls back to the local cache when the Hub cannot be reached.
    """
    cache = hub_cache_dir()
    if offline():
        reason = "HF_HUB_OFFLINE is set"
    else:
        try:
            repo = HfApi().model_info(repo_id, timeout=HUB_TIMEOUT)
        except RepositoryNotFoundError:
            raise CheckpointError(f"{repo_id}: no such model on the Hugging Face Hub (or it is private)") from None
        except HfHubHTTPError as e:
            reason = f"the Hub answered {e}"
        except Exception as e:  # DNS failure, refused connection, timeout: the Hub cannot be reached
            reason = f"the Hub is unreachable ({type(e).__name__}: {e})"
        else:
            files = {s.rfilename for s in repo.siblings or []}
            refuse_without_safetensors(repo_id, files)
            return Path(snapshot_download(repo_id, revision=repo.sha, allow_patterns=HUB_FILES, cache_dir=cache))
    try:
        return Path(snapshot_download(repo_id, allow_patterns=HUB_FILES, cache_dir=cache, local_files_only=True))
    except LocalEntryNotFoundError:
        raise CheckpointError(f"{repo_id} is not in the local Hugging Face cache ({cache}) and {reason}. "
                              f"Download it where the Hub is reachable: python -m transformer.pretrained "
                              f"{repo_id}") from None


def cached_models(accept: Callable[[Path], bool], cache_dir: str | os.PathLike | None = None
                  ) -> list[tuple[str, str]]:
    """(display name, local directory) of every model repo in the local Hugging Face cache whose snapshot (the one
    `main` points to, else the newest) `accept`s (it raises CheckpointError or returns False to skip one). No
    network. The name is "<repo's last part> (pretrained)"; the whole repo id when two repos share the last part.
    """
    try:
        repos = scan_cache_dir(cache_dir or hub_cache_dir()).repos
    except (CacheNotFound, ValueError):  # no cache yet, or the path is a file
        return []
    found = []
    for repo in sorted(repos, key=lambda r: r.repo_id):
        if repo.repo_type != "model" or not repo.revisions:
            continue
        revision = max(repo.revisions, key=lambda r: ("main" in r.refs, r.last_modified))
        directory = Path(revision.snapshot_path)
        try:
            if accept(directory):
                found.append((repo.repo_id, str(directory)))
        except CheckpointError:
            continue
    names = [repo_id.split("/")[-1] for repo_id, _ in found]
    return [((name if names.count(name) == 1 else repo_id) + " (pretrained)", directory)
            for name, (repo_id, directory) in zip(names, found)]


def hub_cache_dir() -> str:
    """The Hugging Face hub cache, honouring HF_HUB_CACHE / HF_HOME set after huggingface_hub was imported."""
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    if os.environ.get("HF_HOME"):
        return os.path.join(os.environ["HF_HOME"], "hub")
    return constants.HF_HUB_CACHE


def offline() -> bool:
    return constants.HF_HUB_OFFLINE or os.environ.get("HF_HUB_OFFLINE", "").upper() in {"1", "ON", "YES", "TRUE"}


def refuse_without_safetensors(where: str, files: set[str]) -> None:
    """CheckpointError unless `files` holds one model.safetensors (pickled weights are named and refused)."""
    if "model.safetensors" in files:
        return
    if "model.safetensors.index.json" in files:
        raise CheckpointError(f"{where}: sharded safetensors weights are not supported (one model.safetensors needed)")
    pickled = sorted(f for f in files if f.endswith((".bin", ".pt", ".pth", ".ckpt")))
    detail = f" It has {', '.join(pickled)}, a pickle, which can run code when loaded: refused." if pickled else ""
    raise CheckpointError(f"{where}: no model.safetensors.{detail} Only safetensors weights are read.")


def repo_id_of_snapshot(path: Path) -> str | None:
    """'owner/name' for a directory .../models--owner--name/snapshots/<revision> of the Hub cache, else None."""
    repo = path.resolve().parent.parent.name
    if path.resolve().parent.name == "snapshots" and repo.startswith("models--"):
        return repo.removeprefix("models--").replace("--", "/")
    return None
