"""Run a function in a forked child that may kill itself with SIGKILL, as a crash or an out-of-memory kill would.

A fork starts in milliseconds with torch already imported, so a test can kill a save at each of its many steps.
The child never returns into pytest: it leaves with os._exit.
"""
from __future__ import annotations

import builtins
import io
import os
import shutil
import signal
import tempfile
import time
import traceback
from typing import Callable

FILE_SYSTEM_CALLS = [(os, "open"), (os, "fsync"), (os, "rename"), (os, "replace"), (os, "unlink"), (os, "rmdir"),
                     (os, "mkdir"), (io, "open"), (builtins, "open"), (shutil, "rmtree"), (tempfile, "mkdtemp")]


def run_forked(fn: Callable[[], object], timeout: float = 60.0) -> str:
    """Run fn() in a forked child; "killed" if SIGKILL ended it, "finished" if it returned, else "failed"."""
    pid = os.fork()
    if pid == 0:  # the child
        code = 1
        try:
            fn()
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise TimeoutError(f"the forked child ran longer than {timeout} s")
        time.sleep(0.005)
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
        return "killed"
    return "finished" if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else "failed"


def kill_at_call(k: int, fn: Callable[[], object], calls=FILE_SYSTEM_CALLS) -> None:
    """Run fn() with every function in `calls` wrapped so that the k-th call to any of them (from 1) SIGKILLs the
    process before it runs. Meant for a forked child: it never undoes the patches."""
    count = 0

    def wrap(real):
        def wrapped(*args, **kwargs):
            nonlocal count
            count += 1
            if count == k:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(*args, **kwargs)
        return wrapped

    for module, name in calls:
        setattr(module, name, wrap(getattr(module, name)))
    fn()

