"""A bounded folder for the files the app writes for download (no gradio here).

Files are written only when someone asks to download. Each export gets a subfolder; past `max_exports` the oldest
subfolders are removed, and the whole folder goes when the process exits. (Gradio copies a returned file into its
own cache, which `gr.Blocks(delete_cache=...)` cleans, so removing ours later never breaks a download.)
"""
from __future__ import annotations

import atexit
import itertools
import shutil
import tempfile
import threading
from pathlib import Path


class ExportFolder:
    def __init__(self, max_exports: int = 32):
        self.max_exports = max_exports
        self.root: Path | None = None
        self._lock = threading.Lock()
        self._counter = itertools.count()

    def new(self, prefix: str) -> Path:
        """A fresh, empty subfolder for one export."""
        with self._lock:
            if self.root is None or not self.root.is_dir():
                self.root = Path(tempfile.mkdtemp(prefix="attention-lab-exports-"))
                atexit.register(shutil.rmtree, self.root, True)
            folder = self.root / f"{next(self._counter):08d}-{prefix}"
            folder.mkdir()
            old = sorted(p for p in self.root.iterdir() if p.is_dir())
            for stale in old[: max(0, len(old) - self.max_exports)]:
                shutil.rmtree(stale, ignore_errors=True)
            return folder

    def size_bytes(self) -> int:
        if self.root is None or not self.root.is_dir():
            return 0
        return sum(f.stat().st_size for f in self.root.rglob("*") if f.is_file())


EXPORTS = ExportFolder()
