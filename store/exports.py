"""A bounded folder for the files the app writes for download, each readable only by the browser that asked for it
(no gradio here).

Files are written only when someone asks to download. Each export gets a subfolder of its own, named by 16 random
bytes (nothing sequential or fixed a client could guess from its own), and the folder remembers whose it is: the
browser key (store.sessions.browser_key) of the request that made it. `readable(path, key)` says whether a request
with that key may fetch a path: server.http_gate asks it for every file gradio would serve, so another browser
gets nothing even with the exact path (issue 37: a second client fetched a victim's trained model zip and its
attention.csv in 5 of 480 guesses). An API client without the browser cookie is known by its session, which a file
request does not carry: its exports are readable by whoever has their path, which only it was given.

Bounded twice: a browser keeps its last EXPORTS_PER_BROWSER exports (its next removes its own oldest), and the
folder keeps EXPORTS_KEPT in all, room made from the client holding the most (store.fair_room; a client is the
browser, or its address when the app knows it): one browser exporting 40 large figures removes only its own. The
whole folder goes when the process exits; a folder left by a process that was killed (its pid is in the name) goes
when the next one starts. The app puts the folder inside gradio's cache (`parent`): gradio serves a file from there
as it is, where it copies a file from anywhere else into its cache at every download. `reuse` hands out the same
file again for the same thing of the same browser (one model downloaded 100 times is one file, not 100).
"""
from __future__ import annotations

import atexit
import itertools
import os
import secrets
import shutil
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from limits import EXPORTS_KEPT, EXPORTS_PER_BROWSER
from store.clients import client_address
from store.disk import remove_stale
from store.fair_room import fullest_oldest
from store.sessions import browser_key

PREFIX = "attention-lab-exports-"
SESSION_OWNER = "session:"  # the key of a client without the browser cookie (store.sessions.browser_key)


@dataclass(frozen=True)
class _Export:
    owner: str  # the browser key that made it
    client: str  # who counts for making room: its address when known, else the owner
    made: int  # its order of making


class ExportFolder:
    def __init__(self, max_exports: int = EXPORTS_KEPT, parent: Path | None = None,
                 per_browser: int = EXPORTS_PER_BROWSER):
        self.max_exports, self.parent, self.per_browser = max_exports, parent, per_browser
        self.root: Path | None = None
        self._lock = threading.Lock()
        self._counter = itertools.count()
        self._exports: OrderedDict[str, _Export] = OrderedDict()  # subfolder name -> whose, oldest first
        self._made: dict[tuple[str, str], Path] = {}  # (owner, tag) -> the file made for it (while it exists)

    def _remove(self, name: str) -> None:
        del self._exports[name]
        shutil.rmtree(self.root / name, ignore_errors=True)

    def new(self, request=None) -> Path:
        """A fresh, empty subfolder for one export of the browser behind `request` (None: of no browser)."""
        owner, client = browser_key(request), client_address(request)
        with self._lock:
            if self.root is None or not self.root.is_dir():
                parent = Path(self.parent or tempfile.gettempdir())
                parent.mkdir(parents=True, exist_ok=True)
                remove_stale(parent, PREFIX)
                self.root = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=parent))
                atexit.register(shutil.rmtree, self.root, True)
                self._exports.clear()
            own = [name for name, export in self._exports.items() if export.owner == owner]
            for name in own[: max(0, len(own) - self.per_browser + 1)]:
                self._remove(name)
            while self._exports and len(self._exports) >= self.max_exports:
                self._remove(fullest_oldest((e.client, e.made, name) for name, e in self._exports.items()))
            name = secrets.token_hex(16)
            (self.root / name).mkdir()
            self._exports[name] = _Export(owner, client or owner, next(self._counter))
            return self.root / name

    def reuse(self, tag: str, make, request=None) -> str:
        """The file made for `tag` (a string naming what is exported) for the browser behind `request` if it is
        still there, else make(folder) in a new subfolder, remembered under (its key, tag)."""
        owner = browser_key(request)
        with self._lock:
            made = self._made.get((owner, tag))
            if made is not None and made.is_file():
                return str(made)
        path = Path(make(self.new(request)))
        with self._lock:
            self._made = {t: p for t, p in self._made.items() if p.is_file()}
            self._made[(owner, tag)] = path
        return str(path)

    def owner_of(self, path) -> str | None:
        """Whose export `path` is, resolved as gradio resolves a file it serves (symlinks, `..`, /proc/self/fd
        included); None when it is not in this folder; '' for a path in the folder that is no export (the folder
        itself, one removed)."""
        if self.root is None:
            return None
        try:
            resolved = Path(os.path.abspath(str(path))).resolve()
            parts = resolved.relative_to(self.root.resolve()).parts
        except (ValueError, OSError):  # outside the folder (or a path no file can have)
            return None
        with self._lock:
            export = self._exports.get(parts[0]) if parts else None
        return export.owner if export is not None else ""

    def readable(self, path, key: str) -> bool:
        """Whether a request from the browser `key` (its cookie's; '' without one) may be served `path`: anything
        outside the folder (gradio decides), an export of its own, or one of a client without the cookie (its
        random path is its only key)."""
        try:
            owner = self.owner_of(path)
        except ValueError:  # an embedded NUL: no file has that name
            return False
        return owner is None or (owner != "" and (owner == key or owner.startswith(SESSION_OWNER)))

    def size_bytes(self) -> int:
        if self.root is None or not self.root.is_dir():
            return 0
        return sum(f.stat().st_size for f in self.root.rglob("*") if f.is_file())


EXPORTS = ExportFolder()
