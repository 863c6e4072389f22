"""store.exports: each export is readable only by the browser that made it, under a name nothing else tells, and
one browser's flood of exports removes only its own (issue 37, item 2).

Regressions: the subfolders were numbered in sequence with fixed file names (a second client fetched a victim's
model zip and attention.csv in 5 of 480 guesses), every path was served to anyone, and 40 exports from one client
pushed everyone else's out. Invariants: the owner reads its files by any spelling of their path; another browser and
a client without the cookie read none, by the exact path, `..`, a symlink or /proc/self/fd; the folder's count
stays bounded."""
from __future__ import annotations

import os
import re
from types import SimpleNamespace

from store.exports import ExportFolder

from tests.conftest import page_call

A, B = "a" * 32, "b" * 32


def _export(folder: ExportFolder, key: str, text: str = "weights"):
    path = folder.new(page_call(key)) / "attention.csv"
    path.write_text(text)
    return path


def test_names_are_random_and_say_nothing_of_each_other(tmp_path):
    """Invariant: each export's folder is 32 random hex digits (16 bytes), different every time: nothing in one
    export's path gives another's."""
    folder = ExportFolder(parent=tmp_path)
    names = [folder.new(page_call(A)).name for _ in range(3)] + [folder.new(page_call(B)).name]
    assert all(re.fullmatch(r"[0-9a-f]{32}", n) for n in names) and len(set(names)) == 4


def test_only_the_browser_that_made_an_export_may_read_it_by_any_spelling_of_its_path(tmp_path):
    """Invariant: the owner may read its file; another browser's key, no key at all and an API session may not, by
    the path itself, a path with `..` and `.`, a relative path, a symlink to it or an open descriptor of it in
    /proc/self/fd. A path outside the folder is not the folder's to decide (gradio's rules apply)."""
    folder = ExportFolder(parent=tmp_path)
    path = _export(folder, A)
    link = tmp_path / "link.csv"
    link.symlink_to(path)
    spellings = [str(path), f"{path.parent}/../{path.parent.name}/./{path.name}", os.path.relpath(path), str(link),
                 str(path).replace("/", "//")]
    with open(path) as opened:
        spellings.append(f"/proc/self/fd/{opened.fileno()}")
        assert all(folder.readable(p, A) for p in spellings)
        for other in (B, "", "session:s0page"):
            assert not any(folder.readable(p, other) for p in spellings), other
    assert not folder.readable(str(folder.root), A) and not folder.readable(str(path.parent), B)
    assert folder.readable(str(tmp_path / "elsewhere.txt"), B)


def test_an_api_session_export_is_readable_by_its_path_alone(tmp_path):
    """A client without the browser cookie (its key is its session) sends no session with a file request: its
    export is served to whoever has its random path, which only it was given."""
    folder = ExportFolder(parent=tmp_path)
    path = folder.new(SimpleNamespace(cookies={}, session_hash="s1api", headers={}, client=None)) / "x.csv"
    assert folder.owner_of(path) == "session:s1api" and folder.readable(str(path), "")


def test_a_flood_of_exports_from_one_browser_leaves_another_browsers_in_place(tmp_path):
    """Bound and fairness: after B exports 100 times, A's one export is still there and readable by A; B holds its
    last `per_browser`; the folder holds at most `max_exports`. And when the folder is full of other browsers'
    exports, room is made from the browser holding the most, not from A."""
    folder = ExportFolder(max_exports=8, parent=tmp_path, per_browser=3)
    mine = _export(folder, A, "mine")
    flood = [_export(folder, B) for _ in range(100)]
    assert mine.read_text() == "mine" and folder.readable(str(mine), A)
    assert sum(p.exists() for p in flood) == 3 and all(p.exists() for p in flood[-3:])
    others = [_export(folder, f"{i:032x}") for i in range(2, 6) for _ in range(2)]  # 4 browsers x 2: full
    assert mine.exists() and len([p for p in folder.root.iterdir()]) <= 8
    assert sum(p.exists() for p in flood) < 3 and all(p.exists() for p in others[-2:])


def test_reuse_hands_a_file_only_to_the_browser_it_was_made_for(tmp_path):
    """Invariant: the same thing asked again by the same browser is the same file; asked by another browser it is a
    file of its own (before, B was handed A's path for the same figure)."""
    folder = ExportFolder(parent=tmp_path)

    def write(sub):
        (sub / "f.html").write_text("x")
        return sub / "f.html"
    first, again = folder.reuse("fig", write, page_call(A)), folder.reuse("fig", write, page_call(A))
    theirs = folder.reuse("fig", write, page_call(B))
    assert first == again != theirs and folder.readable(theirs, B) and not folder.readable(first, B)
