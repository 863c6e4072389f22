"""The README's front matter preloads, on a Space, every file the app needs for each pretrained model it lists: a
line that missed a tokenizer file (Marian's target.spm) would leave that model out of the checkpoint list
(transformer.pretrained.cached_pretrained_models skips a directory its family cannot read)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from transformer.pretrained import cached_arch
from transformer.pretrained.family import FAMILIES

README = Path(__file__).resolve().parents[2] / "README.md"
# the family each preloaded repo belongs to (its config.json's model_type on the Hub)
EXPECTED = {"openai-community/gpt2": "gpt2", "HuggingFaceTB/SmolLM2-135M": "llama",
            "google-bert/bert-base-uncased": "bert", "Helsinki-NLP/opus-mt-en-es": "marian"}


def preloaded() -> dict[str, list[str]]:
    """{repo id: files} of the front matter's preload_from_hub."""
    front = README.read_text(encoding="utf-8").split("---\n")[1]
    lines = front.split("preload_from_hub:\n")[1].splitlines()
    entries = [line.strip()[2:].split() for line in lines if line.startswith("  - ")]
    return {repo: files.split(",") for repo, files in entries}


def test_the_three_families_and_marian_are_preloaded():
    assert set(preloaded()) == set(EXPECTED)


@pytest.mark.parametrize("repo", sorted(EXPECTED))
def test_each_preload_lists_what_its_family_reads(repo, tmp_path):
    """Invariant: a directory holding exactly the listed files (empty, with config.json's model_type) has the
    weights and every tokenizer file its family reads (Family.tokenizer.paths raises CheckpointError otherwise)."""
    files = preloaded()[repo]
    assert "config.json" in files and "model.safetensors" in files
    for name in files:
        (tmp_path / name).write_text("{}" if name.endswith(".json") else "", encoding="utf-8")
    (tmp_path / "config.json").write_text(json.dumps({"model_type": EXPECTED[repo]}), encoding="utf-8")
    FAMILIES[EXPECTED[repo]].tokenizer.paths(tmp_path)
    assert cached_arch(tmp_path) == FAMILIES[EXPECTED[repo]].arch
