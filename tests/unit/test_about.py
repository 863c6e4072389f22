"""What each shipped checkpoint says it was trained on and expects (store.about, via store.catalogue.description):
read from its own config.json, so the oracle is the config's `task` and `training` fields."""
from __future__ import annotations

import json

import pytest

from store.catalogue import CHECKPOINTS, SHIPPED, description
from transformer.data import TASKS


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_checkpoint_says_what_it_learned_from(name):
    config = json.loads((CHECKPOINTS / name / "config.json").read_text())
    text = description(name, "")
    assert text.startswith("**Trained on")
    if config["task"] in TASKS:  # a synthetic task: its name, its description and an example input
        assert f"`{config['task']}`" in text and TASKS[config["task"]].description in text


def test_the_translation_model_says_bible_and_english_verses():
    """Regression (issue 29, item 5): modern sentences came back as Bible Spanish with no word why. The count of
    verse pairs is the card's own (config.json training.train_pairs)."""
    config = json.loads((CHECKPOINTS / "translate-en-es" / "config.json").read_text())
    text = description("translate-en-es", "")
    assert "Bible" in text and "English Bible verse" in text
    assert f"{int(config['training']['train_pairs']):,}" in text


def test_an_unknown_name_has_no_description():
    assert description("no such model", "") == "" and description(None, "") == ""
