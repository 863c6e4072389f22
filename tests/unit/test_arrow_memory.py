"""pandas' strings (Arrow arrays in pandas 3) are allocated by glibc's malloc once the app has set itself up, so the
memory the app returns (tabs.memory.return_freed_memory) includes them; pyarrow's own mimalloc pool kept 181 MB
of a classroom's tables resident (issue 18)."""
from __future__ import annotations

import pandas as pd
import pytest

from tabs.memory import arrow_on_malloc

pa = pytest.importorskip("pyarrow")


def test_a_table_of_strings_is_allocated_by_the_system_allocator():
    previous = pa.default_memory_pool()
    try:
        arrow_on_malloc()
        system = pa.system_memory_pool()
        before = system.bytes_allocated()
        table = pd.DataFrame({"token": [f"token {i} " * 20 for i in range(20_000)]})
        if table["token"].dtype == object:
            pytest.skip("this pandas keeps strings as Python objects: nothing in Arrow")
        assert system.bytes_allocated() - before > 2_000_000, "the strings went to another pool"
    finally:
        pa.set_memory_pool(previous)
