"""Memory the app freed, handed back to the operating system.

glibc keeps freed memory for reuse (app.py's keep_freed_memory asks it to keep up to 1 GiB at the top of the heap,
which makes attention captures faster). After a training or a comparison, which free hundreds of MB at once,
`return_freed_memory` trims it, so the resident size falls back near where it was (bench/hostile_load.py measures
it). Not glibc (macOS, musl): nothing to do.
"""
from __future__ import annotations

import ctypes
import functools


@functools.lru_cache(maxsize=1)
def _malloc_trim():
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


def return_freed_memory() -> bool:
    """Give the heap's free memory back to the system (glibc's malloc_trim(0)); whether anything was returned."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False


def arrow_on_malloc() -> None:
    """Put pyarrow's allocations on the system allocator (glibc's malloc), so `return_freed_memory` returns them too.

    pandas 3 keeps strings in Arrow arrays (every table the app shows), and pyarrow allocates them from its own
    mimalloc pool, which keeps what was freed in a 1 GiB reservation of its own: 181 MB resident after a
    classroom's 11,000 attention requests, not given back (bench/RESULTS.md, issue 18)."""
    try:
        import pyarrow
    except ImportError:  # pandas without pyarrow: its strings are Python objects
        return
    pyarrow.set_memory_pool(pyarrow.system_memory_pool())
