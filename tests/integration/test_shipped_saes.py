"""The shipped SAEs' cards are recomputable (issue 42, item 3): `python -m transformer.interpretability.features
<checkpoint> --check` recomputes every metric of the card and agrees; a card that says otherwise, or a corrupt SAE
file, makes it fail in words."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from tests.conftest import CHECKPOINTS
from transformer.interpretability.feature_cli import main

ROOT = CHECKPOINTS.parent


def test_check_recomputes_the_induction_card():
    """The command itself, in a process, as CI and a reader run it: every metric as the card says, exit 0."""
    done = subprocess.run([sys.executable, "-m", "transformer.interpretability.features", "checkpoints/induction",
                           "--check"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "18 of 18 metrics as the card says" in done.stdout
    assert "decoder self layer 1 loss_spliced" in done.stdout


def test_check_fails_on_a_wrong_card_and_a_corrupt_file(tmp_path, capsys):
    copy = tmp_path / "induction"
    shutil.copytree(CHECKPOINTS / "induction", copy)
    info = json.loads((copy / "config.json").read_text())
    info["features"][1]["metrics"]["explained_variance"] += 0.05
    (copy / "config.json").write_text(json.dumps(info))
    assert main([str(copy), "--check"]) == 1
    assert "DIFFERS" in capsys.readouterr().out
    del info["features"][0]["data"]
    (copy / "config.json").write_text(json.dumps(info))
    assert main([str(copy), "--check"]) == 2
    assert "data record must have the fields of FeatureData" in capsys.readouterr().err
    file = copy / "sae-decoder-self-0.safetensors"
    file.write_bytes(file.read_bytes()[:-4])
    assert main([str(copy), "--check"]) == 2
    assert "sae-decoder-self-0.safetensors is not a valid SAE" in capsys.readouterr().err


def test_the_induction_sae_is_its_recipe_trained_again(shipped):
    """Retraining the layer-1 SAE from its recipe (feature_cli.RECIPES, seeded, one thread) gives the shipped file's
    weights (bit for bit on the machine that trained it; within 1e-3 leaves room for another CPU's float order)."""
    import torch

    from transformer.interpretability.feature_cli import RECIPES
    from transformer.interpretability.feature_data import feature_batches
    from transformer.interpretability.features import AttentionLayer, layer_activations, width
    from transformer.interpretability.sae_files import load_sae
    from transformer.interpretability.sae_training import train_sae

    model, tokenizer, info = shipped("induction")
    recipe, layer = RECIPES["induction"], AttentionLayer("decoder self", 1)
    x = layer_activations(model, layer, feature_batches(recipe.data, model, tokenizer, "train")).x
    assert x.size(0) == info["features"][1]["activations"]
    again = train_sae(x, recipe.sae, recipe.training).state_dict()
    for name, tensor in load_sae(CHECKPOINTS / "induction", info, layer, width(model)).state_dict().items():
        assert torch.allclose(again[name], tensor, atol=1e-3), name


def test_page_prints_what_a_fresh_computation_gives(capsys):
    """`--page F --layer 1` on induction: the heads' shares, the contexts and the logit effect printed are
    feature_page's on the recorded held-out batches; for a feature of the induction head, the character after each
    context's position is the token the feature pushes up most (the copy)."""
    from transformer import load_checkpoint
    from transformer.interpretability.feature_cli import RECIPES
    from transformer.interpretability.feature_data import feature_batches
    from transformer.interpretability.feature_page import feature_page
    from transformer.interpretability.features import AttentionLayer, layer_activations, width
    from transformer.interpretability.sae_files import load_sae
    from tests.unit.test_induction_features import induction_features

    model, tokenizer, info = load_checkpoint(CHECKPOINTS / "induction", device="cpu")
    layer = AttentionLayer("decoder self", 1)
    sae = load_sae(CHECKPOINTS / "induction", info, layer, width(model))
    held_out = layer_activations(model, layer, feature_batches(RECIPES["induction"].data, model, tokenizer,
                                                               "held-out"))
    feature = induction_features(model, sae, held_out, 0)[0]
    assert main([str(CHECKPOINTS / "induction"), "--page", str(feature), "--layer", "1"]) == 0
    printed = capsys.readouterr().out.splitlines()
    page = feature_page(model, sae, layer, feature, held_out)
    assert printed[-len(page.describe(tokenizer)):] == page.describe(tokenizer)
    copy = tokenizer.id_to_token(page.logit_effect.top[0][0])
    assert all(line.split("]")[1].startswith(copy) for line in page.describe(tokenizer)[1:-2])
    assert main([str(CHECKPOINTS / "induction"), "--page", "999", "--layer", "1"]) == 2
    assert "features 0 to 255, got 999" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["induction", "shakespeare-char", "translate-en-es"])
def test_each_card_shows_what_its_config_json_records(name):
    """The SAE section of a card is written from config.json's "features" alone, so a card writer that rebuilds the
    whole card (the translation model's: transformer/translation/card.py) keeps it, figures and all."""
    from transformer.interpretability.feature_card import card_section
    from transformer.translation.card import model_card

    info = json.loads((CHECKPOINTS / name / "config.json").read_text())
    card = (CHECKPOINTS / name / "README.md").read_text()
    assert card.endswith(card_section(name, info["features"]))
    for e in info["features"]:
        m = e["metrics"]
        assert (f"| {e['kind']} {e['layer']} | `{e['file']}` | {m['explained_variance']:.3f} | {m['l0']:.1f} | "
                f"{m['dead_fraction']:.3f} |") in card
        assert (CHECKPOINTS / name / e["file"]).is_file()
    if name == "translate-en-es":
        assert model_card(name, info) == card
