"""The Train tab's Stop button, as a signal a run can see in this process or in a ZeroGPU worker's fork of it."""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
import uuid
from pathlib import Path


class StopSignal:
    """The Train tab's Stop, seen by a run in this process or in a fork of it (a ZeroGPU worker): `set()` sets an
    event here and creates a flag file; `is_set()` reads either. It pickles as the file's path (an Event does not
    pickle). `discard()` ends it when the run is over: the file goes, the signal stays set, and `ended` turns True."""

    _folder: Path | None = None
    _lock = threading.Lock()

    def __init__(self):
        with StopSignal._lock:
            if StopSignal._folder is None or not StopSignal._folder.is_dir():
                StopSignal._folder = Path(tempfile.mkdtemp(prefix="attention-lab-stop-"))
                atexit.register(shutil.rmtree, StopSignal._folder, True)
        self.path = str(StopSignal._folder / uuid.uuid4().hex)
        self._event = threading.Event()
        self.ended = False  # the run is over (discard): Stop finds nothing to stop

    def set(self) -> None:
        if not self._event.is_set():
            self._event.set()
            Path(self.path).touch()

    def is_set(self) -> bool:
        return self._event.is_set() or os.path.exists(self.path)

    def discard(self) -> None:
        self._event.set()
        self.ended = True
        Path(self.path).unlink(missing_ok=True)

    def __getstate__(self) -> dict:
        return {"path": self.path}

    def __setstate__(self, state: dict) -> None:
        self.path, self._event, self.ended = state["path"], threading.Event(), False
