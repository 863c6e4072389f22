"""The word-level corpus path: `--text wikitext-2` (a known corpus: a Hub dataset with its own train and validation
splits, BPE by default), a clear refusal when the Hub cannot be reached, and a card reporting perplexity beside nats
per character. Nothing here touches the network: the Hub loader is replaced by small local datasets."""
from __future__ import annotations

import json
import math
import re
import socket

import datasets
import pytest

from transformer.train.cli import main as cli_main
from transformer.train.cli import parse_args
from transformer.data import KNOWN_CORPORA, load_known_corpus, split_text, text_splits
from transformer.tokenization import load_tokenizer

# Rows as WikiText's raw files give them: one line each, with its newline; blank lines are empty rows.
TRAIN_ROWS = ["", " = Cats = \n", "", " The cat sat on the mat , and the dog sat on the rug .\n",
              " A cat ran to the dog .\n", "", " = = Dogs = = \n", "", " The dog ran off .\n"]
VAL_ROWS = ["", " = Dogs and cats = \n", "", " The rug sat on the cat .\n"]
TEST_ROWS = [" = Unused = \n", " This split is never read .\n"]


def wikitext_like(repeat: int = 1) -> datasets.DatasetDict:
    return datasets.DatasetDict({name: datasets.Dataset.from_dict({"text": rows * repeat}) for name, rows in
                                 (("train", TRAIN_ROWS), ("validation", VAL_ROWS), ("test", TEST_ROWS))})


@pytest.fixture
def fake_hub(monkeypatch):
    """datasets.load_dataset, for anything but its local "text" loader, replaced by a local WikiText-like
    DatasetDict; records the (name, config) asked for. The environment is offline: nothing tries to connect first."""
    calls, real = [], datasets.load_dataset

    def load_dataset(name, config=None, **kwargs):
        if name == "text":  # load_text reading a local file
            return real(name, config, **kwargs)
        calls.append((name, config, kwargs))
        return wikitext_like(repeat=30)

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    return calls


def test_wikitext_2_is_the_raw_hub_config_with_its_own_splits(fake_hub):
    """Oracle: `wikitext-2` asks `datasets` for Salesforce/wikitext, config wikitext-2-raw-v1 (the WikiText-2 raw
    corpus), and returns its train and validation splits, each joined back into the lines of its file (a blank line,
    an empty row, is a newline); the test split is never read, and no 90/10 cut is made."""
    train, val = text_splits("wikitext-2")
    assert fake_hub == [("Salesforce/wikitext", "wikitext-2-raw-v1", {})]
    one_train = "\n = Cats = \n\n The cat sat on the mat , and the dog sat on the rug .\n A cat ran to the dog .\n" \
                "\n = = Dogs = = \n\n The dog ran off .\n"
    assert (train, val) == (one_train * 30, "\n = Dogs and cats = \n\n The rug sat on the cat .\n" * 30)
    assert "Unused" not in train + val
    assert (train, val) != split_text(train + val)


def test_a_local_file_is_still_cut_90_10_and_never_asks_the_hub(fake_hub, tmp_path, monkeypatch):
    """Invariant: any other --text is a local file cut 90/10 as before, even one named like a known corpus when it
    is written as a path (./wikitext-2); the Hub loader is not called."""
    text = "".join(TRAIN_ROWS) * 20
    (tmp_path / "wikitext-2").write_text(text)
    monkeypatch.chdir(tmp_path)
    assert text_splits("./wikitext-2") == split_text(text)
    assert text_splits(tmp_path / "wikitext-2") == split_text(text)
    assert fake_hub == []


@pytest.mark.parametrize("argv, tokenizer", [(["--text", "wikitext-2"], "bpe"),
                                             (["--text", "wikitext-2", "--tokenizer", "char"], "char"),
                                             (["--text", "corpus.txt"], "char"),
                                             (["--text", "corpus.txt", "--tokenizer", "bpe"], "bpe")])
def test_the_tokenizer_defaults_to_bpe_for_a_known_corpus_only(argv, tokenizer):
    """Oracle: --text wikitext-2 trains BPE unless --tokenizer says otherwise; a file keeps the char default."""
    assert parse_args(argv + ["--out", "x"]).tokenizer == tokenizer


def test_an_unknown_corpus_name_is_a_value_error():
    with pytest.raises(ValueError, match="unknown corpus 'wikitext-3'.*wikitext-2"):
        load_known_corpus("wikitext-3")


def test_offline_without_a_cached_copy_says_how_to_pass_a_local_file(monkeypatch, tmp_path):
    """Invariant: in offline mode the real `datasets.load_dataset` runs (a cached copy would load) and, with an
    empty cache, fails; the ValueError names the corpus, says it is not cached and how to pass a local file."""
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "datasets")  # nothing cached
    with pytest.raises(ValueError) as refused:
        load_known_corpus("wikitext-2")
    message = str(refused.value)
    assert "Salesforce/wikitext, config wikitext-2-raw-v1" in message
    assert "offline mode" in message and "not in the local cache" in message
    assert re.search(r"pass a local copy instead, e\.g\. --text \S+", message)


def test_an_unreachable_hub_is_refused_before_datasets_is_asked(monkeypatch):
    """Invariant: not in offline mode, on a machine that cannot reach huggingface.co (the connection is faked to
    fail), the refusal comes after one connection attempt, without calling `datasets.load_dataset`."""
    attempts, loads = [], []

    def refuse(address, timeout=None):
        attempts.append(address)
        raise OSError("unreachable")

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(datasets, "load_dataset", lambda *a, **k: loads.append(a))
    with pytest.raises(ValueError, match="Hub cannot be reached.*pass a local copy instead"):
        load_known_corpus("wikitext-2")
    assert attempts == [("huggingface.co", 443)] and loads == []


TINY_RUN = ["--d-model", "16", "--n-heads", "2", "--n-decoder-layers", "1", "--d-ff", "32", "--steps", "3",
            "--batch-size", "4", "--block-size", "16", "--eval-every", "100", "--eval-examples", "4", "--bpe-vocab",
            "60", "--threads", "1"]


def trained_card(out):
    info = json.loads((out / "config.json").read_text())
    return info["metrics"], (out / "README.md").read_text()


def scored_chars(out, val_text: str, block_size: int = 16) -> tuple[int, int]:
    """Oracle for the validation pass: (tokens scored, characters they decode to) with the run's own tokenizer,
    for consecutive windows of block_size tokens covering every whole window after the first token."""
    tok = load_tokenizer(out / "tokenizer.json")
    ids = tok.encode(val_text)
    n = (len(ids) - 1) // block_size * block_size
    return n, len(tok.decode(ids[1: 1 + n]))


def assert_text_metrics_agree(metrics: dict, vocab_size: int):
    """Invariant: perplexity = exp(loss per token) and nats per char = loss per token * tokens / chars, all measured
    in one pass; a few steps from a random start leave the perplexity near the vocabulary size, far below it never."""
    assert metrics["tokenizer"] == "bpe"
    assert metrics["val_perplexity"] == pytest.approx(math.exp(metrics["val_loss_per_token"]), rel=1e-3)
    per_char = metrics["val_loss_per_token"] * metrics["val_tokens"] / metrics["val_chars"]
    assert metrics["val_nats_per_char"] == pytest.approx(per_char, rel=1e-3)
    assert metrics["val_bpc"] == pytest.approx(metrics["val_nats_per_char"] / math.log(2), rel=1e-3)
    assert metrics["val_chars"] > metrics["val_tokens"]  # BPE tokens stand for several characters
    assert vocab_size / 4 < metrics["val_perplexity"] < 4 * vocab_size


def test_cli_on_a_local_file_with_bpe_writes_perplexity_and_nats_per_char(tmp_path):
    """End to end on a local text file with --tokenizer bpe: the card states the data (90/10 cut), the
    perplexity per BPE token with its vocabulary, and nats per character; the numbers agree with each other."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(TRAIN_ROWS) * 40)
    out = tmp_path / "lm"
    cli_main(["--text", str(corpus), "--tokenizer", "bpe", "--out", str(out)] + TINY_RUN)
    metrics, card = trained_card(out)
    vocab = json.loads((out / "config.json").read_text())["model"]["vocab_size"]
    assert_text_metrics_agree(metrics, vocab)
    _, val = split_text(corpus.read_text())
    assert (metrics["val_tokens"], metrics["val_chars"]) == scored_chars(out, val)
    assert f"`{corpus}`, first 90% of the characters" in card
    assert f"- val_perplexity: {metrics['val_perplexity']}" in card
    assert f"- val_nats_per_char: {metrics['val_nats_per_char']}" in card
    assert f"per bpe token (vocabulary {vocab})" in card and "subword (BPE)-level model" in card


def test_cli_text_wikitext_2_trains_bpe_on_the_train_split_and_measures_the_validation_split(fake_hub, tmp_path):
    """End to end with the Hub loader faked: --text wikitext-2 trains a BPE model (no --tokenizer given), measures
    the validation split (its characters, not a 90/10 cut's) and says so on the card."""
    out = tmp_path / "wt2"
    cli_main(["--text", "wikitext-2", "--out", str(out)] + TINY_RUN)
    metrics, card = trained_card(out)
    assert_text_metrics_agree(metrics, json.loads((out / "config.json").read_text())["model"]["vocab_size"])
    _, val = load_known_corpus("wikitext-2")
    assert (metrics["val_tokens"], metrics["val_chars"]) == scored_chars(out, val)
    corpus = KNOWN_CORPORA["wikitext-2"]
    assert f"Data: {corpus.title}: Hugging Face Hub dataset `Salesforce/wikitext`, config `wikitext-2-raw-v1`" in card
    assert json.loads((out / "tokenizer.json").read_text())["model"]["type"] == "BPE"
