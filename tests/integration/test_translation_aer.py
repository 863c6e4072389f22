"""transformer/translation/aer.py: the command that scores any encoder-decoder's cross-attention against the Strong's
gold. On the shipped translate-en-es checkpoint it must give its card's alignment table (the oracle: the figures
transformer.translation.evaluate recorded); on a Marian in the Hugging Face layout it reads both sides with
Marian's own tokenizers and still scores exactly the verses' words."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.tiny_marian import build_tiny_marian
from transformer.checkpoint import read_info
from transformer.translation.card import MEASURE_MARIAN, model_card
from transformer.translation.aer import cross_attention_aer, load_translator, main, summary
from transformer.translation.corpus import held_out
from transformer.translation.evaluate import word_cross_attention

CHECKPOINT = Path(__file__).resolve().parents[2] / "checkpoints" / "translate-en-es"


@pytest.mark.slow
def test_shipped_model_gives_its_cards_alignment_table():
    """Oracle: the card's AER, precision and recall of every head and layer mean, best head and diagonal; and the
    best head aligns words better than the diagonal (by more than 0.05 AER)."""
    model, tokenizer, info = load_translator(CHECKPOINT, device="cpu")
    table, card = cross_attention_aer(model, tokenizer), info["metrics"]["alignment"]
    for key in ("best_head", "verses", "gold_links"):
        assert table[key] == card[key], key
    for key in ("aer", "precision", "recall"):
        for row, card_row in zip(table[key], card[key]):
            assert row == pytest.approx(card_row, abs=1e-3), key
    assert summary(table)["aer"] == pytest.approx(card["best_head_aer"], abs=1e-3)
    assert table["diagonal"]["aer"] == pytest.approx(card["diagonal"]["aer"], abs=1e-3)
    assert table["best_head_aer"] == pytest.approx(card["best_head_aer"], abs=1e-3)
    assert table["best_head_aer"] < table["diagonal"]["aer"] - 0.05


def test_marian_is_scored_word_for_word_through_its_tokenizers(tmp_path, capsys):
    """Invariant: a Marian's word attention covers exactly the verse's whitespace words on both sides (its target
    cut by target.spm), and the command prints AER, precision and recall in [0, 1] for the verses asked. (Verses
    without a "q": the tiny vocab.json leaves those pieces out, and an <unk> carries no word start; 256 positions:
    its few pieces cut a verse into many tokens.)"""
    directory = build_tiny_marian(tmp_path / "tiny-marian", max_position_embeddings=256)
    model, tokenizer, _ = load_translator(directory, device="cpu")
    for pair in [p for p in held_out()[0] if "q" not in (p.en + p.es).lower()][:3]:
        words = word_cross_attention(model, tokenizer, pair.en, pair.es)
        assert words.weights.shape[-2:] == (len(pair.es.split()), len(pair.en.split()))
    card = card_copy(tmp_path / "translate-en-es")
    assert main([str(directory), "--verses", "4", "--device", "cpu", "--card", str(card)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verses"] == 4 and all(0 <= out[k] <= 1 for k in ("aer", "precision", "recall"))
    # --card: the printed figures become a row of the card's aligner table, beside eflomal's, in both files
    layer, head = out["best_head"]
    readme = (card / "README.md").read_text(encoding="utf-8")
    assert (f"| {directory} cross-attention, best head (layer {layer}, head {head}) | {out['precision']:.3f} | "
            f"{out['recall']:.3f} | {out['aer']:.3f} |") in readme
    assert readme.index("| eflomal |") < readme.index(f"| {directory} cross-attention") and "not measured" not in readme
    assert read_info(card)["metrics"]["pretrained_alignment"] == {"source": str(directory), **out}


def card_copy(directory: Path) -> Path:
    """A copy of the shipped translation checkpoint: a card to write."""
    return Path(shutil.copytree(CHECKPOINT, directory))


def test_the_card_says_marians_figure_is_not_measured_and_which_command_measures_it():
    """The shipped card is the one transformer.translation.card writes from its config.json (no hand edits), has no
    Marian figure, and names the command that adds it (the one the test above runs on a tiny Marian)."""
    readme = (CHECKPOINT / "README.md").read_text(encoding="utf-8")
    assert readme == model_card(CHECKPOINT.name, read_info(CHECKPOINT))
    assert "pretrained_alignment" not in read_info(CHECKPOINT)["metrics"]
    assert "**not measured yet**" in readme and f"`{MEASURE_MARIAN}`" in readme
    assert MEASURE_MARIAN.split()[:3] == ["python", "-m", "transformer.translation.aer"] and "--card" in MEASURE_MARIAN


def test_a_decoder_only_model_is_refused_in_words(tmp_path):
    from tests.conftest import build_tiny_gpt2

    with pytest.raises(SystemExit, match="no cross-attention"):
        main([str(build_tiny_gpt2(tmp_path / "gpt2")), "--device", "cpu"])
