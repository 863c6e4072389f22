"""pyarrow's memory (pandas 3 keeps every table's strings in Arrow arrays) is allocated by glibc's malloc once the
app has set itself up, so the memory the app returns (store.memory.return_freed_memory) includes it; pyarrow's own
mimalloc pool kept 181 MB of a classroom's tables resident (issue 18)."""
from __future__ import annotations

import pandas as pd
import pyarrow as pa

from store.memory import arrow_on_malloc


def test_arrow_strings_are_allocated_by_the_system_allocator():
    previous = pa.default_memory_pool()
    try:
        arrow_on_malloc()
        system = pa.system_memory_pool()
        before = system.bytes_allocated()
        # Arrow-backed strings, as pandas 3 makes them for any text column (pandas 2 on request)
        strings = pd.Series([f"token {i} " * 20 for i in range(20_000)], dtype="string[pyarrow]")
        assert system.bytes_allocated() - before > 2_000_000, f"the {len(strings):,} strings went to another pool"
    finally:
        pa.set_memory_pool(previous)
