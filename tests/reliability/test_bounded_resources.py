"""Disk and memory stay bounded while a class uses the app: attention requests write no files, downloads are written
only when asked into a bounded folder, and trained models keep no gradients or optimiser and are bounded per browser.
Regressions: every attention request (even the page load) wrote a CSV and a JSON that were never removed; every
training kept its folder and zip; each training kept ~39 MB (gradients and optimiser) for good."""
from __future__ import annotations

import gc
import resource
import tempfile
import weakref
from pathlib import Path

import pytest
import torch

from store.exports import EXPORTS
from store.user_models import UserModels
from tabs.train.request import TrainingRequest
from tabs.train.session import run_training_session


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def private_tmp(tmp_path_factory):
    """Temporary files of this module's app go to a folder of its own (the machine's /tmp is shared)."""
    saved, tempfile.tempdir = tempfile.tempdir, str(tmp_path_factory.mktemp("app-tmp"))
    saved_root, EXPORTS.root = EXPORTS.root, None  # made again inside the private folder (gradio serves only temp)
    yield Path(tempfile.tempdir)
    tempfile.tempdir, EXPORTS.root = saved, saved_root


@pytest.fixture(scope="module")
def client(private_tmp):
    from tests.app_server import api_client, serve_app

    with serve_app() as url:
        yield api_client(url)


def test_fifty_attention_requests_write_no_file_and_exports_stay_bounded(client, private_tmp):
    tmp = private_tmp
    before = files_under(tmp)
    for i in range(50):
        client.predict("reverse" if i % 2 else "sort", "abcdefghij"[: 1 + i % 10] + "xyz"[i % 3], "",
                       api_name="/attention")
        client.predict("cross", i % 2, i % 4, "entropy", api_name="/draw_attention")
    new = {p for p in files_under(tmp) - before if EXPORTS.root is None or EXPORTS.root not in p.parents}
    assert new == set(), f"attention requests wrote files: {sorted(map(str, new))[:5]}"
    for _ in range(EXPORTS.max_exports + 8):
        client.predict(api_name="/export_attention")
    folders = [p for p in EXPORTS.root.iterdir() if p.is_dir()]
    assert len(folders) <= EXPORTS.max_exports


def test_trained_models_keep_no_optimiser_and_are_bounded_per_browser():
    """Five trainings in one browser: only the last three models stay alive, none holds gradients, and no
    optimiser of theirs survives."""
    store = UserModels(per_browser=3)
    refs = []
    for _ in range(5):
        request = TrainingRequest("task", "reverse", None, None, None, 1, 4, 32, 3e-3, 30, 16)
        for update in run_training_session(request, store, "browser"):
            pass
        model = store.get("browser", update.name)[0]
        refs.append(weakref.ref(model))
        del model, update
    gc.collect()
    alive = [r() for r in refs if r() is not None]
    assert len(alive) == 3 and len(store) == 3
    params = {id(p) for m in alive for p in m.parameters()}
    assert all(p.grad is None for m in alive for p in m.parameters())
    optimisers = [o for o in gc.get_objects() if isinstance(o, torch.optim.Optimizer)
                  and any(id(p) in params for g in o.param_groups for p in g["params"])]
    assert optimisers == []


def test_resident_memory_stops_growing_after_the_store_is_full():
    """Peak RSS after 3 and after 8 trainings of the tiny preset in one browser: the store holds 3 models either
    way, so the later trainings add little (each kept ~39 MB before). The peak (getrusage) never falls, so any
    growth that was kept shows."""
    def peak_mb() -> float:
        gc.collect()
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux

    store = UserModels(per_browser=3)
    request = lambda: TrainingRequest("task", "reverse", None, None, None, 1, 4, 64, 3e-3, 40, 64)  # noqa: E731
    for _ in range(3):
        list(run_training_session(request(), store, "b"))
    after_three = peak_mb()
    for _ in range(5):
        list(run_training_session(request(), store, "b"))
    grown = peak_mb() - after_three
    print(f"peak RSS grew {grown:.1f} MB over 5 more trainings")
    assert grown < 5 * 10, f"peak RSS grew {grown:.0f} MB over 5 trainings"
