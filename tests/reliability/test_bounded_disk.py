"""Bounded disk: downloading the same model again writes no new copy, the exports of a killed process go when the
next one starts, and the app's folder stays under its byte budget whatever is uploaded.

Regressions (issue 18, item 5): uploads had no size limit; each download of a model left a new copy in gradio's
cache (100 downloads of a 26 MB model: +1.95 GB); the exports folder of an interrupted process stayed forever."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest


def usage(root: Path) -> int:
    return sum(f.stat().st_size for f in Path(root).rglob("*") if f.is_file())


@pytest.fixture(scope="module")
def app(tmp_path_factory, monkeypatch_module):
    """The app with gradio's cache in a folder of this module's own and a disk budget of 24 MB."""
    cache = tmp_path_factory.mktemp("gradio-cache")
    monkeypatch_module.setenv("GRADIO_TEMP_DIR", str(cache))
    monkeypatch_module.setenv("ATTENTION_LAB_DISK_BYTES", str(24 << 20))
    from store.exports import EXPORTS

    monkeypatch_module.setattr(EXPORTS, "root", None)
    from tests.app_server import serve_app

    with serve_app() as url:
        yield url, cache


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_a_hundred_downloads_of_one_model_make_one_file(app):
    from tests.app_server import api_client

    url, cache = app
    client = api_client(url)
    client.predict("task", "reverse", "", None, "", 1, 4, 32, 3e-3, 10, 8, api_name="/train")
    first = client.predict("my reverse model #1", api_name="/download_model")
    before = usage(cache)
    for _ in range(100):
        client.predict("my reverse model #1", api_name="/download_model")
    grown = usage(cache) - before
    print(f"zip {Path(first).stat().st_size} bytes; cache grew {grown} bytes over 100 downloads")
    assert grown <= Path(first).stat().st_size  # no new copy: at most the client's own download dir


def test_uploads_past_the_budget_are_swept(app):
    """Eight 8 MB uploads (64 MB) into an app whose budget is 24 MB: its folder ends under the budget."""
    from tests.app_server import wait_for

    url, cache = app
    blob = os.urandom(8 << 20)
    for i in range(8):
        r = httpx.post(url + "gradio_api/upload", files={"files": (f"up{i}.txt", blob, "text/plain")}, timeout=60)
        assert r.status_code == 200, r.text[:200]
    wait_for(lambda: usage(cache) <= 24 << 20)  # the sweep runs at once past an eighth, else every few seconds
    assert usage(cache) <= 24 << 20, f"{usage(cache) / 2**20:.0f} MB in the app's folder"


def test_the_exports_of_a_killed_process_go_when_the_next_starts(tmp_path):
    """A folder named with the pid of a process that is gone is removed when the export folder is made; one of a
    live process stays."""
    from store.exports import PREFIX, ExportFolder

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f"{PREFIX}{dead.stdout.strip()}-abc"
    (stale / "00000000-checkpoint").mkdir(parents=True)
    (stale / "00000000-checkpoint" / "model.zip").write_bytes(b"x" * 1000)
    live = tmp_path / f"{PREFIX}1-def"  # pid 1 is always alive
    live.mkdir()
    ExportFolder(parent=tmp_path).new()
    assert not stale.exists() and live.exists()


def test_disk_budget_removes_the_oldest_files_first(tmp_path):
    """Invariant: after a sweep the folder holds at most the budget, and every file kept is newer than every file
    removed."""
    from store.disk import DiskBudget

    for i in range(20):
        f = tmp_path / f"d{i % 4}" / f"f{i}.bin"
        f.parent.mkdir(exist_ok=True)
        f.write_bytes(b"x" * 100_000)
        os.utime(f, (1_000_000 + i, 1_000_000 + i))
    budget = DiskBudget(tmp_path, 1_000_000)
    budget.sweep()
    kept = sorted(int(f.stem[1:]) for f in tmp_path.rglob("*.bin"))
    assert usage(tmp_path) <= 1_000_000 and kept == list(range(20 - len(kept), 20))
