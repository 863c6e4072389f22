"""A second browser cannot read a first browser's exports or trained-model zip, by any path it can learn or guess
(server.http_gate asks store.exports for every file gradio would serve; issue 37, item 2).

Regression: every export was served to anyone with its path, and the paths were guessable (subfolders numbered in
sequence, fixed file names, the folder's name in every exporter's own path): a second client fetched the victim's
model zip (its training text in the vocabulary) and attention.csv in 5 of 480 guesses. The oracle is the owner: the
same URL with its cookie answers the file's bytes, so a refusal to the others is not a bad URL. Loopback only."""
from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from store.exports import EXPORTS
from store.sessions import KEY_COOKIE

from tests.app_server import api_client

VICTIM, OTHER = "1" * 32, "2" * 32
TINY_RUN = dict(source="task", task="reverse", text="", upload=None, hub="", layers=1, heads=2, d_model=16, lr=3e-3,
                steps=10, batch=4)


def _exports_of(key: str) -> list[Path]:
    return [p for p in EXPORTS.root.rglob("*") if p.is_file() and EXPORTS.owner_of(p) == key]


def _spellings(path: Path) -> list[str]:
    """URL paths a client could try for the file at `path`: gradio's two file routes, with `..`, `.`, doubled
    slashes, relative to the server's folder, through /proc/self/cwd and /proc/self/root, percent-encoded."""
    names = [str(path), f"{path.parent}/../{path.parent.name}/./{path.name}", f"{path.parent}//{path.name}",
             f"/proc/self/root{path}"]
    relative = os.path.relpath(path)
    names += [relative, f"/proc/self/cwd/{relative}"] if not relative.startswith("..") else []  # a URL resolves '..'

    return ([f"gradio_api/file={n}" for n in names] + [f"gradio_api/file/{n}" for n in names[:1]]
            + [f"gradio_api/file={quote(str(path), safe='')}"])


@pytest.fixture(scope="module")
def victims_files(app_url):
    """The victim's attention export (CSV, JSON) and its trained model's zip, made through the API with its cookie;
    the client downloads each (its cookie: the owner reads its own)."""
    victim = api_client(app_url, cookies={KEY_COOKIE: VICTIM})
    victim.predict("reverse", "secret", "", api_name="/attention")
    victim.predict(api_name="/export_attention")
    updates = list(victim.submit(*TINY_RUN.values(), api_name="/train"))
    mine = [c[0] for c in updates[-1][4]["choices"] if c[0].startswith("my reverse")]
    assert Path(victim.predict(mine[-1], api_name="/download_model")).suffix == ".zip"
    files = _exports_of(VICTIM)
    assert {p.suffix for p in files} == {".csv", ".json", ".zip"}, files
    return files


def test_the_owner_reads_its_files_and_no_other_browser_by_any_spelling(app_url, victims_files):
    """Invariant: each spelling of each of the victim's files answers its bytes to the victim's cookie (so the URL
    is right) and nothing of it to another browser's cookie or to a client without one. Failed before: every
    spelling answered the file to everyone."""
    clients = [httpx.Client(base_url=app_url, timeout=60, cookies=c) for c in ({KEY_COOKIE: VICTIM},
                                                                               {KEY_COOKIE: OTHER}, {})]
    with clients[0] as mine_, clients[1] as other, clients[2] as anonymous:
        for path in victims_files:
            content = path.read_bytes()
            for url in _spellings(path):
                mine = mine_.get(url)
                assert mine.status_code == 200 and mine.content == content, (url, mine.status_code)
                for http in (other, anonymous):
                    theirs = http.get(url)
                    assert theirs.status_code == 404 and theirs.content != content, (url, theirs.status_code)
                    assert "no such file" in theirs.json()["detail"]


def test_guessed_paths_give_nothing_of_the_victims(app_url, victims_files):
    """Invariant: what a second client can guess (the old sequential names under the folder it sees in its own
    export's path, every open descriptor in /proc/self/fd) never answers a byte of the victim's files."""
    other = api_client(app_url, cookies={KEY_COOKIE: OTHER})
    other.predict("reverse", "mine", "", api_name="/attention")
    other.predict(api_name="/export_attention")
    seen = _exports_of(OTHER)[0].parent.parent  # the folder a second client learns from its own export
    contents = {p.read_bytes() for p in victims_files}
    guesses = [f"{seen}/{i:08d}-{kind}/{name}" for i in range(12) for kind, name in
               (("attention", "attention.csv"), ("reused", "model.zip"))] + [f"/proc/self/fd/{n}" for n in range(64)]
    with httpx.Client(base_url=app_url, timeout=60, cookies={KEY_COOKIE: OTHER}) as http:
        for guess in guesses:
            answer = http.get(f"gradio_api/file={guess}")
            assert answer.content not in contents, guess
