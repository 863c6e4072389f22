"""server.http_gate.served_paths: every path a request might have gradio serve, found at every place a file route's
marker starts (overlapping places too), in the order of the markers and then of the places; oracle: the definition
read character by character (what the front door ran before it used str.find)."""
from __future__ import annotations

from hypothesis import given, strategies as st

from server.http_gate import FILE_ROUTES, served_paths


def by_each_character(path: str) -> list[str]:
    return [path[i + len(marker):] for marker in FILE_ROUTES for i in range(len(path)) if path.startswith(marker, i)]


def test_every_place_a_marker_starts_is_found():
    """Examples: none, one, a marker inside what follows another, markers that overlap."""
    assert served_paths("/gradio_api/queue/join") == []
    assert served_paths("/gradio_api/file=/tmp/x.csv") == ["/tmp/x.csv"]
    assert served_paths("/file=/file/a") == ["/file/a", "a"]
    assert served_paths("/file==/file=") == ["=/file=", ""]
    assert served_paths("/file/file/x") == ["file/x", "x"]


@given(st.lists(st.sampled_from(["/file=", "/file/", "/file", "=", "/", "f", "ile", "x"]), max_size=12).map("".join))
def test_the_same_as_reading_each_character(path):
    """Invariant: the same list as the definition read character by character, for paths made of markers' pieces."""
    assert served_paths(path) == by_each_character(path)
