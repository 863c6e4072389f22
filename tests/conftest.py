"""Shared fixtures: tiny configs, seeded tiny models in eval mode, a character tokenizer.

Everything is small enough that the whole unit suite runs in seconds on one CPU thread.
"""
from __future__ import annotations

import os
from pathlib import Path

# No test reaches outside the machine: the Hub is "offline", gradio sends no analytics.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
# pytest.ini runs the suite in worker processes (pytest-xdist: "gw0", "gw1", ...). The apps the workers start must
# not share gradio's cache folder (each app's disk guard would count, and clean, the other's files) nor race for the
# same ports: each worker gets a folder of its own and ports of its own (gradio reads both when it is imported). The
# folder is this run's (xdist's id of the run), removed when the worker ends: two suites running at once on a shared
# machine do not clean each other's files either.
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if WORKER.startswith("gw"):
    import atexit
    import shutil
    import tempfile

    RUN = os.environ.get("PYTEST_XDIST_TESTRUNUID", "")[:8]
    os.environ["GRADIO_TEMP_DIR"] = os.path.join(tempfile.gettempdir(), f"attention-lab-{RUN}-{WORKER}")
    atexit.register(shutil.rmtree, os.environ["GRADIO_TEMP_DIR"], True)
    os.environ["GRADIO_SERVER_PORT"] = str(7860 + 100 * int(WORKER[2:]))

import pytest  # noqa: E402  (after the environment is set)
import torch
from torch import nn

from transformer.config import TransformerConfig
from transformer.interpretability.probe import example_attention
from transformer.model import Transformer
from transformer.tokenization import CharTokenizer

# Tiny models gain nothing from more threads, and the machine may be shared: one thread is faster and steadier.
torch.set_num_threads(1)

CHECKPOINTS = Path(__file__).resolve().parent.parent / "checkpoints"  # the shipped models, from any working directory


@pytest.fixture(scope="session")
def shipped():
    """shipped(name) -> (model, tokenizer, info): the shipped checkpoint checkpoints/<name> on the CPU, loaded once
    per test session and shared by every test that asks for it (issue 26, item 7): tests read it, never change it."""
    import functools

    from transformer import load_checkpoint

    return functools.lru_cache(maxsize=None)(lambda name: load_checkpoint(CHECKPOINTS / name, device="cpu"))


@pytest.fixture(scope="session")
def app_url():
    """The URL of the real app (tests.app_server.serve_app), started once per test process at the first module that
    asks for it and shared by every module of tests/app/, tests/browser/ and tests/reliability/ that runs in that
    process (each browser module opens its own pages: its own browser key and sessions; each app test its own
    gradio_client session). A new app per module gave no fresh state anyway: the models, records and lines an app
    keeps live in the store/ and server/ modules of the process, which every app the process starts shares; only
    gradio's server and page were new, at ~2 s of start-up a module. A module that needs an app started otherwise
    starts its own (tests/browser/test_pretrained_families.py: a hub cache of test models;
    tests/reliability/test_bounded_disk.py: a disk budget of its own)."""
    from tests.app_server import serve_app

    with serve_app() as url:
        yield url


def page_call(key: str, session: str = "s0page", host: str = "127.0.0.1"):
    """A request from a page of the browser whose key is `key`, as a handler sees it (gr.Request): the key in the
    cookie the page sets at its load (store.sessions.KEY_COOKIE), its session and its address."""
    from types import SimpleNamespace

    from store.sessions import KEY_COOKIE

    return SimpleNamespace(cookies={KEY_COOKIE: key}, session_hash=session, headers={},
                           client=SimpleNamespace(host=host))

TINY = dict(vocab_size=17, d_model=32, n_heads=4, n_decoder_layers=2, d_ff=64, dropout=0.0, max_len=24)


def tiny_config(arch: str = "encoder-decoder", **overrides) -> TransformerConfig:
    """A small config of either architecture; `overrides` replace any field."""
    kw = {**TINY, "arch": arch, "n_encoder_layers": 2 if arch == "encoder-decoder" else 0}
    kw.update(overrides)
    return TransformerConfig(**kw)


def seeded_model(config: TransformerConfig, seed: int = 0) -> Transformer:
    """A freshly initialised model, deterministic for `seed`, in eval mode."""
    torch.manual_seed(seed)
    return Transformer(config).eval()


def with_weights(attention, *args, **kwargs):
    """(output, weights (B, H, T, S)) of one call of an attention module: its `pattern` point read in a `points`
    block (a module outside a Transformer has its points named first), the one way to see the weights."""
    from transformer.points import name_points, points

    if not attention.pattern.name:
        name_points(attention)
    with points(read=[attention.pattern.name]) as seen:
        out = attention(*args, **kwargs)
    return out, seen[attention.pattern.name]


def copy_mha_from_torch(ours, ref: nn.MultiheadAttention) -> None:
    """Copy torch's packed in_proj (rows: q, k, v) and out_proj into ours: the same layout, [W^Q; W^K; W^V] as rows
    of in_proj. Both have biases or neither has."""
    assert (ref.in_proj_bias is None) == (ours.in_proj.bias is None), "one has biases, the other not"
    with torch.no_grad():
        ours.in_proj.weight.copy_(ref.in_proj_weight)
        ours.out_proj.weight.copy_(ref.out_proj.weight)
        if ref.in_proj_bias is not None:
            ours.in_proj.bias.copy_(ref.in_proj_bias)
            ours.out_proj.bias.copy_(ref.out_proj.bias)


@pytest.fixture
def make_config():
    """Factory: make_config(arch="encoder-decoder", **overrides) -> a tiny TransformerConfig."""
    return tiny_config


@pytest.fixture
def make_model():
    """Factory: make_model(arch="encoder-decoder", seed=0, **overrides) -> a seeded tiny model in eval mode."""

    def make(arch: str = "encoder-decoder", seed: int = 0, **overrides) -> Transformer:
        return seeded_model(tiny_config(arch, **overrides), seed)

    return make


@pytest.fixture
def enc_dec_config() -> TransformerConfig:
    return tiny_config("encoder-decoder")


@pytest.fixture
def dec_only_config() -> TransformerConfig:
    return tiny_config("decoder-only")


@pytest.fixture
def enc_dec_model(enc_dec_config) -> Transformer:
    return seeded_model(enc_dec_config)


@pytest.fixture
def dec_only_model(dec_only_config) -> Transformer:
    return seeded_model(dec_only_config)


@pytest.fixture
def char_tokenizer() -> CharTokenizer:
    """Specials (ids 0-3) plus the lowercase letters a-m: 17 tokens, matching the tiny configs' vocab_size."""
    return CharTokenizer("abcdefghijklm")


@pytest.fixture
def generator() -> torch.Generator:
    return torch.Generator().manual_seed(1234)


# --- one real training run, read by the tests of one file (tests/integration/test_reverse_end_to_end.py) -------

REVERSE_STEPS = 300
REVERSE_ACCURACY = 0.85  # measured 0.888-0.967 over init/data seeds 0-5 (seed 0: 0.888) with these settings,
# no attention biases and fused AdamW (0.94-0.98 before those; the chance level is under 0.04)


@pytest.fixture(scope="session")
def reverse_run(tmp_path_factory):
    """Train a small encoder-decoder (d_model 64, 4 heads, 2+2 layers) on `reverse` for 300 steps with a checkpoint
    at the end. About 10-20 s on one CPU thread. Returns a namespace: model, tokenizer, task, trainer, events,
    out_dir."""
    from types import SimpleNamespace

    from transformer.data import TASKS, TaskData
    from transformer.train import TrainConfig, Trainer

    task = TASKS["reverse"]
    tokenizer = CharTokenizer(task.alphabet)
    config = TransformerConfig(vocab_size=tokenizer.vocab_size, d_model=64, n_heads=4, n_encoder_layers=2,
                               n_decoder_layers=2, d_ff=128, dropout=0.0, max_len=22)
    torch.manual_seed(0)
    model = Transformer(config)
    train_cfg = TrainConfig(steps=REVERSE_STEPS, batch_size=64, schedule="cosine", lr=0.008, warmup=50,
                            eval_every=150, eval_examples=200, seed=0)
    out_dir = tmp_path_factory.mktemp("reverse") / "reverse"
    data = TaskData(task, tokenizer, config, train_cfg.seed, train_cfg.eval_examples)
    trainer = Trainer(model, tokenizer, data, train_cfg, out_dir=out_dir, checkpoint_info={"task": "reverse"},
                      attention=example_attention)
    events = list(trainer.run())
    model.eval()
    return SimpleNamespace(model=model, tokenizer=tokenizer, task=task, trainer=trainer, events=events,
                           out_dir=out_dir, train_cfg=train_cfg)


# --- a small random GPT-2 in the Hugging Face layout (transformer/pretrained/; transformers is a dev dependency) ---

TINY_GPT2_TEXTS = [
    "Hello, world! The quick brown fox jumps over the lazy dog.",
    "Attention is all you need.\nA new line, and another:\n\n  indented (two spaces).",
    "Emoji 🙂🚀 and café, naïve; tabs\tand    runs of spaces... \"quotes\" & <tags>?",
    "Mary and John went to the store. John gave a drink to Mary.",
]


def byte_level_bpe(special_tokens: list[str]):
    """A `tokenizers` byte-level BPE (~350 tokens, GPT-2's scheme) trained on TINY_GPT2_TEXTS, the special tokens
    first."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(TINY_GPT2_TEXTS, trainers.BpeTrainer(
        vocab_size=400, special_tokens=special_tokens, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False))
    return bpe


def build_tiny_gpt2(directory: Path, seed: int = 0, **config) -> Path:
    """Save a small random `transformers.GPT2LMHeadModel` with a real byte-level BPE into `directory`.

    2 layers, 4 heads, n_embd 64, 64 positions; the tokenizer (~350 tokens, <|endoftext|> at id 0) is trained with
    `tokenizers` on TINY_GPT2_TEXTS and wrapped as transformers' GPT-2 tokenizer. Every parameter, biases and
    LayerNorms included, is drawn with std 0.2 (LayerNorm weights around 1), so a wrong mapping rule shows in the
    outputs and attention is far from uniform. Files: config.json, model.safetensors, tokenizer.json, vocab.json,
    merges.txt (and transformers' generation_config.json, tokenizer_config.json). `config` overrides GPT2Config
    fields (activation_function, layer_norm_epsilon, n_inner, ...).
    """
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast

    directory.mkdir(parents=True, exist_ok=True)
    bpe = byte_level_bpe(["<|endoftext|>"])
    hf_tokenizer = GPT2TokenizerFast(tokenizer_object=bpe, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
                                     unk_token="<|endoftext|>")
    hf_tokenizer.save_pretrained(directory)  # tokenizer.json
    bpe.model.save(str(directory))  # vocab.json + merges.txt, GPT-2's original tokenizer files
    eot = bpe.token_to_id("<|endoftext|>")
    config = GPT2Config(vocab_size=bpe.get_vocab_size(), n_positions=64, n_embd=64, n_layer=2, n_head=4,
                        bos_token_id=eot, eos_token_id=eot, **config)
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(config)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.normal_(1.0 if ".ln_" in f".{name}" and name.endswith("weight") else 0.0, 0.2)
    model.save_pretrained(directory, safe_serialization=True)
    return directory


def add_to_hub_cache(cache: Path, repo_id: str, files: dict[str, Path | bytes], revision: str = "a" * 40) -> Path:
    """Put `files` (name -> source file or contents) into a Hugging Face hub cache as huggingface_hub lays it out:
    models--owner--name/blobs/<sha256>, snapshots/<revision>/<name> -> ../../blobs/<sha256>, refs/main = revision.
    Returns the snapshot directory."""
    import hashlib
    import shutil

    repo = cache / ("models--" + repo_id.replace("/", "--"))
    snapshot = repo / "snapshots" / revision
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    snapshot.mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(revision)
    for name, source in files.items():
        data = source if isinstance(source, bytes) else Path(source).read_bytes()
        blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
        if not blob.exists():
            if isinstance(source, bytes):
                blob.write_bytes(data)
            else:
                shutil.copyfile(source, blob)
        (snapshot / name).symlink_to(Path("..", "..", "blobs", blob.name))
    return snapshot


TINY_GPT2_REPO = "attention-lab/tiny-gpt2"  # its repo id in tiny_gpt2_hub_cache; listed as "tiny-gpt2 (pretrained)"


@pytest.fixture(scope="session")
def tiny_gpt2_dir(tmp_path_factory) -> Path:
    """A directory holding a small random GPT-2 in the Hugging Face layout (see build_tiny_gpt2)."""
    return build_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2") / "tiny-gpt2")


@pytest.fixture(scope="session")
def tiny_gpt2_hub_cache(tiny_gpt2_dir, tmp_path_factory) -> Path:
    """A Hugging Face hub cache directory (set HF_HUB_CACHE to it) holding the tiny GPT-2 as TINY_GPT2_REPO, with
    the files a download by `python -m transformer.pretrained` keeps (config, safetensors, tokenizer files)."""
    cache = tmp_path_factory.mktemp("hf-hub-cache")
    names = ("config.json", "model.safetensors", "tokenizer.json", "vocab.json", "merges.txt")
    add_to_hub_cache(cache, TINY_GPT2_REPO, {name: tiny_gpt2_dir / name for name in names})
    return cache


SLOW_FOLDERS = ("app", "integration", "reliability")  # the app server, end-to-end training, processes, fuzzing
SLOW_FIXTURES = {"reverse_run"}  # trains a model: every test that reads it waits for it
# The order in which the files are handed to the workers (pytest.ini: --dist loadfile --no-loadscope-reorder): the
# folders of the long files first (a training of 1-2 minutes, a browser session, a process), the many short files of
# tests/unit/ and tests/ last, so that no worker starts a long file while the other has nothing left to do.
# xdist's own order (the files with the most tests first) handed out the one-test trainings last: the induction phase
# change (1.5 minutes) then ran alone at the end of the run.
LONG_FILES_FIRST = ("integration", "browser", "reliability", "app")


def _folder(item) -> str:
    """The item's folder under tests/ ("unit", "browser", ...; "" for a file directly in tests/)."""
    parts = Path(str(item.fspath)).resolve().relative_to(Path(__file__).resolve().parent).parts
    return parts[0] if len(parts) > 1 else ""


def pytest_collection_modifyitems(config, items):
    """Mark by folder: tests/browser/ `browser`; tests/app/, tests/integration/ and tests/reliability/ `slow`, and
    any test using a SLOW_FIXTURES fixture (pytest.ini). Elsewhere a slow test carries @pytest.mark.slow itself.
    Then order the files LONG_FILES_FIRST (a stable sort: each folder's files, and each file's tests, keep their
    order)."""
    for item in items:
        folder = _folder(item)
        if folder == "browser":
            item.add_marker(pytest.mark.browser)
        elif folder in SLOW_FOLDERS or SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    rank = {folder: i for i, folder in enumerate(LONG_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(_folder(item), len(rank)))
