"""A bounded folder for the files the app writes for download (no gradio here).

Files are written only when someone asks to download. Each export gets a subfolder; past `max_exports` the oldest
subfolders are removed, and the whole folder goes when the process exits; a folder left by a process that was
killed (its pid is in the name) goes when the next one starts. The app puts the folder inside gradio's cache
(`parent`): gradio serves a file from there as it is, where it copies a file from anywhere else into its cache
at every download. `reuse` hands out the same file again for the same thing (one model downloaded 100 times is one
file, not 100).
"""
from __future__ import annotations

import atexit
import itertools
import os
import shutil
import tempfile
import threading
from pathlib import Path

from limits import EXPORTS_KEPT
from store.disk import remove_stale

PREFIX = "attention-lab-exports-"


class ExportFolder:
    def __init__(self, max_exports: int = EXPORTS_KEPT, parent: Path | None = None):
        self.max_exports, self.parent = max_exports, parent
        self.root: Path | None = None
        self._lock = threading.Lock()
        self._counter = itertools.count()
        self._made: dict[str, Path] = {}  # tag -> the file made for it (while it still exists)

    def new(self, prefix: str) -> Path:
        """A fresh, empty subfolder for one export."""
        with self._lock:
            if self.root is None or not self.root.is_dir():
                parent = Path(self.parent or tempfile.gettempdir())
                parent.mkdir(parents=True, exist_ok=True)
                remove_stale(parent, PREFIX)
                self.root = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=parent))
                atexit.register(shutil.rmtree, self.root, True)
            folder = self.root / f"{next(self._counter):08d}-{prefix}"
            folder.mkdir()
            old = sorted(p for p in self.root.iterdir() if p.is_dir())
            for stale in old[: max(0, len(old) - self.max_exports)]:
                shutil.rmtree(stale, ignore_errors=True)
            return folder

    def reuse(self, tag: str, make) -> str:
        """The file made for `tag` (a string naming what is exported) if it is still there, else make(folder) in a
        new subfolder, remembered under tag."""
        with self._lock:
            made = self._made.get(tag)
            if made is not None and made.is_file():
                return str(made)
        path = Path(make(self.new("reused")))
        with self._lock:
            self._made = {t: p for t, p in self._made.items() if p.is_file()}
            self._made[tag] = path
        return str(path)

    def size_bytes(self) -> int:
        if self.root is None or not self.root.is_dir():
            return 0
        return sum(f.stat().st_size for f in self.root.rglob("*") if f.is_file())


EXPORTS = ExportFolder()
