"""The app's disk, bounded: one folder for everything it writes (gradio's cache of uploads and served files, and
the exports inside it), a byte budget for that folder, and no folder left behind by a process that died.

`DiskBudget.sweep()` removes the oldest files until the folder is back under its budget; it runs every few seconds
on a daemon thread and as soon as the bytes written since the last sweep pass an eighth of the budget, so a burst
of uploads cannot outrun it. No gradio here: app.py hands it gradio's cache folder.
"""
from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def remove_stale(parent: Path, prefix: str) -> list[Path]:
    """Remove the folders `<prefix><pid>-...` in `parent` whose process is gone (killed before its exit handler
    could clean up); returns them."""
    removed = []
    for folder in Path(parent).glob(f"{prefix}*"):
        pid = folder.name[len(prefix):].split("-", 1)[0]
        if folder.is_dir() and pid.isdigit() and int(pid) != os.getpid() and not pid_alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def folder_files(root: Path) -> list[tuple[float, int, Path]]:
    """(modification time, size, path) of every file under root (files that vanish meanwhile are skipped)."""
    files = []
    for dirpath, _, names in os.walk(root):
        for name in names:
            path = Path(dirpath) / name
            try:
                st = path.stat()
            except OSError:
                continue
            files.append((st.st_mtime, st.st_size, path))
    return files


class DiskBudget:
    def __init__(self, root: Path, max_bytes: int):
        self.root, self.max_bytes = Path(root), max_bytes
        self._lock = threading.Lock()
        self._written = 0
        self._thread: threading.Thread | None = None

    def usage(self) -> int:
        return sum(size for _, size, _ in folder_files(self.root))

    def sweep(self) -> int:
        """When the folder is over its budget, remove the oldest files until it holds at most 90% of it; returns the
        bytes freed."""
        with self._lock:
            self._written = 0
            files = sorted(folder_files(self.root))
            total, freed = sum(size for _, size, _ in files), 0
            if total <= self.max_bytes:
                return 0
            for _, size, path in files:
                if total - freed <= 0.9 * self.max_bytes:
                    break
                try:
                    path.unlink()
                    freed += size
                except OSError:
                    pass
            if freed:
                self._remove_empty_folders()
            return freed

    def _remove_empty_folders(self) -> None:
        for dirpath, dirnames, filenames in os.walk(self.root, topdown=False):
            if Path(dirpath) != self.root and not dirnames and not filenames:
                try:
                    os.rmdir(dirpath)
                except OSError:
                    pass

    def wrote(self, n_bytes: int) -> None:
        """Count bytes just written (an upload); sweep at once when they pass an eighth of the budget."""
        with self._lock:
            self._written += max(0, int(n_bytes))
            due = self._written > self.max_bytes // 8
        if due:
            self.sweep()

    def start(self, every: float, also=None) -> None:
        """Sweep every `every` seconds on a daemon thread (once per budget object), and call `also()` after each."""
        if self._thread is not None:
            return

        def loop():
            while True:
                self.sweep()
                if also is not None:
                    also()
                threading.Event().wait(every)

        self._thread = threading.Thread(target=loop, name="disk-budget", daemon=True)
        self._thread.start()
