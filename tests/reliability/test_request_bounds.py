"""Bounded by construction: what one request may make the server allocate, read or download.

Regressions (issue 18, items 1, 3 and 7): a text model's vocabulary was every distinct character of the text, so
20,000 distinct code points took 1.75 GB and 1.11 million asked for 72.9 GB; the text limit was not checked on
the server (a 315M-character body was accepted and queued); uploads had no size limit; a Hub dataset was
downloaded whole before being cut to 2M characters."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import httpx
import pytest

from limits import BODY_BYTES, CHAR_VOCAB, TRAINING, TRAINING_BYTES, UPLOAD_BYTES
from tabs.train.request import TrainingRequest, build_run
from transformer import TransformerConfig
from transformer.data import TASKS
from transformer.memory import check_training_memory, training_bytes
from transformer.tokenization import UNK_ID, CharTokenizer

ROOT = Path(__file__).resolve().parents[2]


def many_code_points(n: int, seed_text: str = "the quick brown fox ") -> str:
    """A text with n distinct rare code points (each once) after a common English part (each of its letters often)."""
    rare = "".join(chr(0x4E00 + i) for i in range(n))
    return seed_text * 200 + rare


def test_char_vocabulary_is_capped_and_keeps_the_most_frequent_characters():
    """Oracle: Counter. The cap holds, every kept character is at least as frequent as every dropped one, and a
    dropped character encodes as <unk> (never an error)."""
    text = many_code_points(20_000)
    tok = CharTokenizer.from_text(text, max_size=CHAR_VOCAB)
    counts = Counter(text)
    kept = set(tok.itos[4:])
    assert tok.vocab_size == CHAR_VOCAB
    assert min(counts[c] for c in kept) >= max(counts[c] for c in set(counts) - kept)
    assert set("the quick brown fox ") <= kept
    dropped = next(c for c in counts if c not in kept)
    assert tok.encode(dropped) == [UNK_ID]


def test_a_text_run_of_20000_distinct_characters_builds_a_capped_model():
    """The app's text run: the model's vocabulary is the cap, not the 20,004 the text would give uncapped."""
    request = TrainingRequest("text", "reverse", many_code_points(20_000), None, None, 1, 4, 32, 3e-3, 10, 8)
    run = build_run(request.validated())
    assert run.tokenizer.vocab_size <= CHAR_VOCAB and run.model.config.vocab_size == run.tokenizer.vocab_size


PEAK = r'''
import json, sys
import torch
torch.set_num_threads(1)
from transformer import Transformer, TransformerConfig

def kb(field):
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith(field + ":"))

def train(cfg, batch, steps=2):
    model = Transformer(cfg)
    opt = torch.optim.AdamW(model.parameters())
    x = torch.randint(4, cfg.vocab_size, (batch, cfg.max_len))
    for _ in range(steps):
        logits = model(x).logits if cfg.n_encoder_layers == 0 else model(x, x).logits
        torch.nn.functional.cross_entropy(logits.reshape(-1, cfg.vocab_size), x.reshape(-1)).backward()
        opt.step(); opt.zero_grad(set_to_none=True)

cfg = TransformerConfig.from_dict(json.loads(sys.argv[1]))
batch = int(sys.argv[2])
train(TransformerConfig(arch=cfg.arch, vocab_size=8, d_model=16, n_heads=2, d_ff=16, max_len=8,
                        n_encoder_layers=min(cfg.n_encoder_layers, 1), n_decoder_layers=1), 2)  # as app.warm_up
open("/proc/self/clear_refs", "w").write("5")  # the peak (VmHWM) starts again from here: start-up does not count
base = kb("VmRSS") * 1024
train(cfg, batch)
print(kb("VmHWM") * 1024 - base)
'''


@pytest.mark.parametrize("layers, d_model, batch, vocab, arch", [
    (1, 64, 64, 512, "decoder-only"), (2, 128, 128, 100, "decoder-only"), (2, 64, 64, 40, "encoder-decoder")])
def test_training_memory_estimate_is_an_upper_bound_of_the_measured_peak(layers, d_model, batch, vocab, arch):
    """Invariant: the estimate (transformer.memory) is above the peak RSS growth of two real training steps (after a
    warm-up, as the app does at start), and not so loose that it would refuse runs that fit (within 4x + 200 MB)."""
    enc = layers if arch == "encoder-decoder" else 0
    cfg = TransformerConfig(arch=arch, vocab_size=vocab, d_model=d_model, n_heads=4, d_ff=4 * d_model, dropout=0.0,
                            n_encoder_layers=enc, n_decoder_layers=layers, max_len=64)
    out = subprocess.run([sys.executable, "-c", PEAK, json.dumps(cfg.to_dict()), str(batch)], cwd=ROOT,
                         capture_output=True, text=True, timeout=600, env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert out.returncode == 0, out.stderr[-2000:]
    measured, estimate = int(out.stdout.split()[-1]), training_bytes(cfg, batch)
    print(f"measured {measured / 2**20:.0f} MB, estimate {estimate / 2**20:.0f} MB")
    assert measured <= estimate + (64 << 20) and estimate <= 4 * measured + (200 << 20)


def test_a_run_over_the_memory_budget_is_refused_before_anything_is_allocated():
    """A config whose estimate is over TRAINING_BYTES gets a clear error naming what to lower; the largest run the
    Train tab allows fits (so the budget refuses only what TRAINING would let through by mistake)."""
    huge = TransformerConfig(arch="decoder-only", vocab_size=50_000, d_model=1024, n_heads=8, d_ff=4096,
                             n_decoder_layers=8, max_len=512)
    with pytest.raises(ValueError, match="lower the batch size"):
        check_training_memory(huge, 64, TRAINING_BYTES)
    text = "".join(chr(0x4E00 + i % 2000) for i in range(20_000))  # more distinct characters than the cap
    largest = TrainingRequest("text", "reverse", text, None, None, TRAINING["layers"][1], 8, TRAINING["d_model"][1],
                              1e-3, 100, TRAINING["batch_size"][1]).validated()
    run = build_run(largest)  # builds the model (3.4M parameters), not the activations the estimate counts
    assert run.model.config.vocab_size == CHAR_VOCAB
    assert training_bytes(run.model.config, largest.batch_size) <= TRAINING_BYTES


def largest_run_bytes(source: str, task: str) -> int:
    """The estimated peak of the largest run the Train tab's limits allow for a task or a text (the text has more
    distinct characters than the vocabulary cap), built as the app builds it (a refusal would raise here)."""
    text = "".join(chr(0x4E00 + i % 2000) for i in range(20_000)) if source == "text" else ""
    largest = TrainingRequest(source, task, text, None, None, TRAINING["layers"][1], TRAINING["heads"][1],
                              TRAINING["d_model"][1], 1e-3, 100, TRAINING["batch_size"][1]).validated()
    return training_bytes(build_run(largest).model.config, largest.batch_size)


def test_the_largest_run_of_every_task_and_text_is_within_the_budget_and_the_readme_says_its_size():
    """Regression (issue 30, item 9): the README said the largest allowed run is estimated at 2.0 GiB, and a
    4-layer, 8-head, batch-256 `dates` run inside the Train tab's limits was refused at 2.8 GiB. Invariant: the
    largest run of every task and of a text builds (within TRAINING_BYTES), and the README's figure is the largest
    of them, to the tenth of a GiB."""
    sizes = {task: largest_run_bytes("task", task) for task in TASKS} | {"text": largest_run_bytes("text", "reverse")}
    assert max(sizes.values()) <= TRAINING_BYTES, sizes
    readme = (ROOT / "docs" / "safety.md").read_text(encoding="utf-8")  # the README's "Safe in public" links it
    claimed = re.search(r"the largest run the limits allow\s+is estimated at ([0-9.]+) GiB", readme)
    assert claimed and float(claimed.group(1)) == round(max(sizes.values()) / 2**30, 1), sizes
    budget = re.search(r"a run over ([0-9.]+) GiB is refused", readme)
    assert budget and float(budget.group(1)) == TRAINING_BYTES / 2**30


def test_limits_hold_the_text_limit():
    """An upload may hold the whole text limit in UTF-8 (4 bytes a character at most), and a request body too."""
    assert UPLOAD_BYTES >= 4 * TRAINING["text_chars"] and BODY_BYTES >= 6 * TRAINING["text_chars"]


def test_hub_dataset_is_streamed_and_read_only_up_to_the_limit(monkeypatch):
    """A Hub dataset is opened with streaming=True and read only until the limit: of a dataset of 10,000 rows of
    1,000 characters, the app reads about 2M characters' worth of rows (not the whole train split)."""
    import datasets

    import transformer.corpora as data

    read, calls = [], []

    def rows():
        for i in range(10_000):
            read.append(i)
            yield {"text": "abcdefghij" * 100}

    def fake_load_dataset(name, split=None, streaming=False, **kwargs):
        calls.append(dict(name=name, split=split, streaming=streaming))
        if not streaming:
            raise AssertionError("the whole split would be downloaded")
        return rows()

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    monkeypatch.setattr(data, "hub_reachable", lambda timeout=3.0: True)
    text = data.load_hub_text("someone/big-dataset", max_chars=TRAINING["text_chars"])
    assert calls == [dict(name="someone/big-dataset", split="train", streaming=True)]
    assert len(text) == TRAINING["text_chars"] and len(read) <= TRAINING["text_chars"] // 1001 + 2


def test_the_server_refuses_a_text_over_the_limit_before_queueing_it(app_url):
    """2,000,001 characters pasted through the API: refused with the limit named (it was cut and trained on)."""
    from tests.app_server import api_client

    client = api_client(app_url)
    with pytest.raises(ValueError, match="2,000,000"):
        client.predict("text", "reverse", "ab" * 1_000_000 + "c", None, "", 1, 4, 32, 3e-3, 10, 8, api_name="/train")


def test_a_body_over_the_limit_is_refused_before_it_is_read(app_url):
    """A 17 MiB call body: 413 with a message, and the server still answers."""
    r = httpx.post(app_url + "gradio_api/queue/join", content=b"x" * (BODY_BYTES + 1),
                   headers={"content-type": "application/json"}, timeout=60)
    assert r.status_code == 413 and "larger than" in r.text
    assert httpx.get(app_url + "gradio_api/info", timeout=30).status_code == 200


def test_an_upload_over_the_limit_is_refused(app_url, tmp_path):
    """An upload one byte over UPLOAD_BYTES is refused by gradio's max_file_size (it accepted 1 GiB)."""
    big = tmp_path / "big.txt"
    big.write_bytes(b"a" * (UPLOAD_BYTES + 1))
    with big.open("rb") as f:
        r = httpx.post(app_url + "gradio_api/upload", files={"files": ("big.txt", f, "text/plain")}, timeout=60)
    assert r.status_code == 413, r.text[:200]
