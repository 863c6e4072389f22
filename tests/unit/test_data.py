"""Data: text corpora through `datasets`, the 90/10 split, the tokenizer seeing only the training split, the
synthetic tasks' correctness, and padded batches."""
from __future__ import annotations

import datetime as dt
import random
import re

import pytest
import torch

from transformer.train.cli import build, parse_args
from transformer.config import TransformerConfig
from transformer.data import DATE_FORMATS, TASKS, load_text, split_text, task_batch, text_batch
from transformer.encoding import pad
from transformer.tokenization import UNK_ID, CharTokenizer

TEXT = "First line of the corpus.\n\n  second line, caf\u00e9 \u4e2d\u6587\ttabbed\nlast line without a newline"


def test_load_text_reads_a_local_file_through_datasets_unchanged(tmp_path):
    """Oracle: the file's own contents (read as text): load_text returns the whole corpus as one string, with
    blank lines, leading spaces, tabs, non-ASCII characters and a missing final newline kept."""
    path = tmp_path / "corpus.txt"
    path.write_text(TEXT, encoding="utf-8")
    assert load_text(path) == TEXT
    assert load_text(str(path)) == TEXT


def test_load_text_of_an_unreachable_name_is_a_value_error(tmp_path):
    """Invariant: a name that is neither a local file nor a loadable Hub dataset is a ValueError saying so."""
    with pytest.raises(ValueError, match="not a local file.*cannot be reached"):
        load_text(tmp_path / "no-such-corpus.txt")


def test_an_unreachable_hub_fails_fast_with_a_clear_message(monkeypatch):
    """Invariant: without HF_HUB_OFFLINE, a Hub name on a machine that cannot reach the Hub is refused after one
    failed connection (no minute of retries); the connection attempt is faked, nothing leaves the machine."""
    import socket

    attempts = []

    def refuse(address, timeout=None):
        attempts.append(address)
        raise OSError("unreachable")

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)  # CI sets it (.ci/run); it would skip the attempt
    monkeypatch.setattr(socket, "create_connection", refuse)
    with pytest.raises(ValueError, match="Hugging Face Hub cannot be reached"):
        load_text("someone/some-dataset")
    assert attempts == [("huggingface.co", 443)]


@pytest.mark.parametrize("n", [10, 100, 1001, 12345])
def test_split_is_90_10_by_characters(n):
    """Oracle: the first int(0.9 n) characters train, the rest (the last ~10%) validate; nothing is lost."""
    text = "".join(chr(97 + i % 26) for i in range(n))
    train, val = split_text(text)
    assert train + val == text
    assert len(train) == int(n * 0.9)
    assert abs(len(val) - n / 10) <= 1


@pytest.mark.parametrize("tokenizer", ["char", "bpe"])
def test_cli_builds_the_tokenizer_on_the_training_split_only(tmp_path, tokenizer):
    """Invariant: no validation text leaks into the tokenizer: a character that only occurs in the last 10% of
    the corpus maps to <unk>, while the characters of the first 90% are known."""
    corpus = "the cat sat on the mat. " * 40
    corpus = corpus + "Z" * (len(corpus) // 20)  # 'Z' only in the last ~5%: inside the validation split
    train, val = split_text(corpus)
    assert "Z" not in train and "Z" in val
    path = tmp_path / "corpus.txt"
    path.write_text(corpus)
    args = parse_args(["--text", str(path), "--out", str(tmp_path / "lm"), "--tokenizer", tokenizer, "--bpe-vocab",
                       "40", "--block-size", "8", "--eval-examples", "4", "--d-model", "16", "--n-heads", "2",
                       "--n-decoder-layers", "1", "--d-ff", "32"])
    model, tok, data, _, info, val_text = build(args)
    assert val_text == val and info["task"] is None
    assert tok.encode("Z") == [UNK_ID]
    assert UNK_ID not in tok.encode(train)
    assert model.config.vocab_size == tok.vocab_size
    assert int((data.val_ids == UNK_ID).sum()) > 0 and int((data.train_ids == UNK_ID).sum()) == 0


# --- synthetic tasks ----------------------------------------------------------------------------------------


def samples(name, n=300, seed=0):
    rng = random.Random(seed)
    return [TASKS[name].sample(rng) for _ in range(n)]


@pytest.mark.parametrize("name, rule", [("copy", lambda s: s), ("reverse", lambda s: s[::-1]),
                                        ("sort", lambda s: "".join(sorted(s)))])
def test_letter_tasks_produce_correct_pairs(name, rule):
    """Oracle: copy's target is the source, reverse's the source reversed, sort's the letters sorted; sources are
    1-20 lowercase letters, within the task's declared lengths and alphabet."""
    task = TASKS[name]
    pairs = samples(name)
    for source, target in pairs:
        assert target == rule(source)
        assert re.fullmatch("[a-z]{1,20}", source)
        assert len(source) <= task.max_source_len and len(target) <= task.max_target_len
    assert len({len(s) for s, _ in pairs}) > 10  # lengths vary


def test_every_task_uses_only_its_alphabet():
    """Invariant: each task's sources and targets use only task.alphabet, so CharTokenizer(task.alphabet) (what the
    trainer uses) never produces <unk> on task data."""
    for name, task in TASKS.items():
        tok = CharTokenizer(task.alphabet)
        for source, target in samples(name, 500, seed=1):
            assert UNK_ID not in tok.encode(source) + tok.encode(target), (name, source, target)
            assert len(source) <= task.max_source_len and len(target) <= task.max_target_len


def test_date_formats_by_hand():
    """Oracle: hand-written renderings of 3 March 1998 (a Tuesday) and 22 November 2049 (a Monday)."""
    assert [f(dt.date(1998, 3, 3)) for f in DATE_FORMATS] == [
        "March 3, 1998", "3 Mar 98", "Tuesday 3rd of March 1998", "03/03/1998", "03.03.1998", "3 March 1998",
        "Mar 3 1998", "the 3rd of March, 1998", "Tue, 3 Mar 1998", "MARCH 3 1998", "1998/3/3"]
    assert [f(dt.date(2049, 11, 22)) for f in DATE_FORMATS] == [
        "November 22, 2049", "22 Nov 49", "Monday 22nd of November 2049", "11/22/2049", "22.11.2049",
        "22 November 2049", "Nov 22 2049", "the 22nd of November, 2049", "Mon, 22 Nov 2049", "NOVEMBER 22 2049",
        "2049/11/22"]
    ordinals = {1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 23: "23rd",
                31: "31st"}
    for day, text in ordinals.items():
        assert DATE_FORMATS[7](dt.date(2001, 1, day)).startswith(f"the {text} of")


MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december"]


def parse_by_hand(source: str) -> dt.date:
    """An independent reader of the dates task's formats: US order for a/b/c, year first for a/b/c with a
    four-digit first field, day first for a.b.c; two-digit years 50-99 are 19xx and 00-49 are 20xx."""
    s = source.lower().replace(",", " ")
    if re.fullmatch(r"\d{4}/\d{1,2}/\d{1,2}", s):
        y, m, d = map(int, s.split("/"))
        return dt.date(y, m, d)
    if re.fullmatch(r"\d{2}/\d{2}/\d{4}", s):
        m, d, y = map(int, s.split("/"))
        return dt.date(y, m, d)
    if re.fullmatch(r"\d{2}\.\d{2}\.\d{4}", s):
        d, m, y = map(int, s.split("."))
        return dt.date(y, m, d)
    words = [w for w in s.split() if w not in ("the", "of")]
    month = next(i + 1 for i, name in enumerate(MONTHS) if any(name.startswith(w) and len(w) >= 3 for w in words))
    numbers = [int(re.match(r"\d+", w).group()) for w in words if w[0].isdigit()]
    day, year = numbers
    if year < 100:
        year += 1900 if year >= 50 else 2000
    return dt.date(year, month, day)


def test_dates_target_is_iso_and_means_the_day_in_the_source():
    """Oracle: an independent hand-written parser reads the source; the target is ISO 8601, parses with
    date.fromisoformat, equals the parsed source date, lies in 1950-2049, and any weekday named is that day's."""
    weekdays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    seen_formats = set()
    for source, target in samples("dates", 600):
        date = dt.date.fromisoformat(target)
        assert target == date.isoformat() and re.fullmatch(r"\d{4}-\d{2}-\d{2}", target)
        assert parse_by_hand(source) == date, source
        assert dt.date(1950, 1, 1) <= date <= dt.date(2049, 12, 31)
        named = [d for d in weekdays if d[:3] in source.lower().replace(",", "").split()[0]]
        if named:
            assert weekdays[date.weekday()] == named[0], source
        seen_formats |= {i for i, f in enumerate(DATE_FORMATS) if f(date) == source}
    assert seen_formats == set(range(len(DATE_FORMATS)))  # every format occurs


@pytest.mark.parametrize("name", sorted(TASKS))
def test_seeds_decide_the_examples(name):
    """Invariant: the same seed gives the same examples; different seeds give different ones."""
    assert samples(name, 20, seed=1) == samples(name, 20, seed=1)
    assert samples(name, 20, seed=1) != samples(name, 20, seed=2)


def test_task_batch_pads_and_shifts_the_target_right():
    """Oracle: built by hand from the pairs: src = source + eos; tgt_in = bos + target (the target shifted right)
    and tgt_out = target + eos, each right-padded with pad_id to the longest row."""
    task = TASKS["reverse"]
    tok = CharTokenizer(task.alphabet)
    pad_id, bos, eos = 0, 1, 2
    cfg = TransformerConfig(vocab_size=tok.vocab_size, d_model=8, n_heads=2, d_ff=8, pad_id=pad_id, bos_id=bos,
                            eos_id=eos)
    src, tgt_in, tgt_out, pairs = task_batch(task, tok, random.Random(3), 8, cfg)
    S = max(len(s) for s, _ in pairs) + 1
    T = max(len(t) for _, t in pairs) + 1
    assert len({len(t) for _, t in pairs}) > 1, "precondition: rows of different lengths"
    for i, (s, t) in enumerate(pairs):
        assert src[i].tolist() == tok.encode(s) + [eos] + [pad_id] * (S - len(s) - 1)
        assert tgt_in[i].tolist() == [bos] + tok.encode(t) + [pad_id] * (T - len(t) - 1)
        assert tgt_out[i].tolist() == tok.encode(t) + [eos] + [pad_id] * (T - len(t) - 1)
    assert torch.all(tgt_in[:, 0] == bos)


def test_pad_by_hand():
    """Oracle: [[5, 6, 7], [8]] padded with 0 is [[5, 6, 7], [8, 0, 0]], a LongTensor."""
    out = pad([[5, 6, 7], [8]], 0)
    assert out.dtype == torch.long and out.tolist() == [[5, 6, 7], [8, 0, 0]]


def test_text_batch_windows_are_slices_and_targets_are_shifted():
    """Oracle: on the stream 0, 1, 2, ... each window is a run of consecutive ids and y = x + 1 (the next token);
    the same generator seed gives the same batch."""
    data = torch.arange(100)
    x, y = text_batch(data, 8, 16, torch.Generator().manual_seed(0))
    assert torch.equal(y, x + 1)
    assert torch.equal(x[:, 1:] - x[:, :-1], torch.ones(16, 7, dtype=torch.long))
    assert int(y.max()) <= 99
    x2, _ = text_batch(data, 8, 16, torch.Generator().manual_seed(0))
    assert torch.equal(x, x2)


# --- the induction task: random distinct tokens, then the same again ------------------------------------------

from transformer.data import INDUCTION_ALPHABET, InductionData, repeated_random_tokens  # noqa: E402


def test_repeated_random_tokens_are_two_copies_of_distinct_allowed_ids():
    """Invariant: each row is a prefix of p ids, then n more, then those n again, all p + n distinct and allowed;
    the seed decides the rows; more distinct tokens than there are ids is a ValueError."""
    ids = torch.arange(10, 30)
    for prefix in (0, 5):
        seqs = repeated_random_tokens(ids, 40, 7, torch.Generator().manual_seed(0), prefix=prefix)
        assert seqs.shape == (40, prefix + 14) and torch.equal(seqs[:, prefix: prefix + 7], seqs[:, prefix + 7:])
        assert all(len(set(row[: prefix + 7].tolist())) == prefix + 7 for row in seqs)
        assert set(seqs.flatten().tolist()) <= set(range(10, 30))
        assert torch.equal(seqs, repeated_random_tokens(ids, 40, 7, torch.Generator().manual_seed(0), prefix=prefix))
    with pytest.raises(ValueError, match="seq_len"):
        repeated_random_tokens(ids, 1, 21, torch.Generator())
    with pytest.raises(ValueError, match="seq_len"):
        repeated_random_tokens(ids, 1, 16, torch.Generator(), prefix=5)


def split_induction_sequence(x: torch.Tensor, y: torch.Tensor) -> tuple[int, int]:
    """(p, n) of a batch of whole sequences prefix + r + r, found by hand: the first token seen before is r[0]."""
    whole = torch.cat([x, y[:, -1:]], dim=1)
    row = whole[0].tolist()
    start = next(i for i, tok in enumerate(row) if tok in row[:i])  # the repeat's first token
    n = start - row.index(row[start])
    return len(row) - 2 * n, n


def test_induction_data_batches_are_shifted_repeats_of_varying_length_and_prefix():
    """Invariant: y is x shifted one token left; every whole sequence is p distinct tokens, n more, then those n
    again, within max_len; n and p vary between batches; the validation batch is fixed, n = max_len / 2, p = 0."""
    data = InductionData(torch.arange(4, 66), 4, 64, seed=0, n_val=8)
    shapes = set()
    for _ in range(40):
        (x,), y = data.train_batch(16)
        assert torch.equal(x[:, 1:], y[:, :-1])
        p, n = split_induction_sequence(x, y)
        whole = torch.cat([x, y[:, -1:]], dim=1)
        assert torch.equal(whole[:, p: p + n], whole[:, p + n:]) and 4 <= n <= 32 and p + 2 * n <= 64
        assert all(len(set(row[: p + n].tolist())) == p + n for row in whole)
        shapes.add((p, n))
    assert len({n for _, n in shapes}) > 5 and len({p for p, _ in shapes}) > 5
    vx, vy = data.val_batch
    assert vx.shape == (8, 63) and split_induction_sequence(vx, vy) == (0, 32)
    assert torch.equal(vx, InductionData(torch.arange(4, 66), 4, 64, 0, 8).val_batch[0])


def test_induction_data_resumes_where_it_stopped():
    """Invariant: load_state(state()) continues with the same batches as an uninterrupted run."""
    a = InductionData(torch.arange(4, 66), 4, 64, seed=1, n_val=4)
    a.train_batch(8)
    state = a.state()
    expected = a.train_batch(8)
    b = InductionData(torch.arange(4, 66), 4, 64, seed=99, n_val=4)
    b.load_state(state)
    got = b.train_batch(8)
    assert torch.equal(got[0][0], expected[0][0]) and torch.equal(got[1], expected[1])


def test_cli_builds_a_decoder_only_induction_model_on_the_alphabet(tmp_path):
    """Invariant: --induction gives a decoder-only model over the specials + INDUCTION_ALPHABET, max_len =
    block_size, task "induction", and InductionData whose sequences fill at most the context."""
    args = parse_args(["--induction", "--out", str(tmp_path / "ind"), "--attention-only", "--n-decoder-layers", "2",
                       "--d-model", "32", "--n-heads", "4", "--block-size", "40"])
    model, tok, data, _, info, val_text = build(args)
    cfg = model.config
    assert (cfg.arch, cfg.attention_only, cfg.max_len, info["task"], val_text) == ("decoder-only", True, 40,
                                                                                   "induction", None)
    assert tok.vocab_size == cfg.vocab_size == 4 + len(INDUCTION_ALPHABET) and UNK_ID not in tok.encode("kqwzjxtb")
    assert isinstance(data, InductionData) and data.max_half == 20 and data.val_batch[0].size(1) == 39


def test_the_trainer_trains_and_evaluates_on_induction_data(tmp_path):
    """Invariant: InductionData serves the Trainer like TextData: steps run on batches of varying length, the
    evaluation reports a finite validation loss on the fixed batch, and the checkpoint written records the task."""
    from transformer.checkpoint import load_checkpoint
    from transformer.interpretability.probe import example_attention
    from transformer.train import Trainer, TrainConfig

    args = parse_args(["--induction", "--out", str(tmp_path / "ind"), "--attention-only", "--n-decoder-layers", "2",
                       "--d-model", "16", "--n-heads", "4", "--block-size", "24", "--steps", "3", "--eval-every", "3",
                       "--batch-size", "4"])
    model, tok, data, train_cfg, info, _ = build(args)
    events = list(Trainer(model, tok, data, train_cfg, out_dir=tmp_path / "ind", checkpoint_info=info,
                          attention=example_attention).run())
    evals = [e for e in events if e.kind == "eval"]
    assert [e.step for e in events if e.kind == "step"] == [1, 2, 3] and len(evals) == 1
    assert torch.isfinite(torch.tensor(evals[0].val_loss)) and evals[0].attention.shape == (2, 4)  # (layers, heads)
    assert load_checkpoint(tmp_path / "ind", device="cpu")[2]["task"] == "induction"
