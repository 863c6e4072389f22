"""transformer/pretrained/: GPT-2's own weights in the from-scratch decoder, checked against `transformers`' GPT-2.

The oracle is a small random `transformers.GPT2LMHeadModel` saved with its byte-level BPE tokenizer (the
`tiny_gpt2_dir` fixture in tests/conftest.py), reloaded by `transformers` from the same files that `load_pretrained`
reads. No test touches the network: "unreachable" is a local socket that never answers.
"""
from __future__ import annotations

import json
import pickle
import shutil
import socket
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

import transformers

from tests.conftest import TINY_GPT2_REPO, add_to_hub_cache, build_tiny_gpt2
from tests.hf_models import assert_attention_equal
from transformer import CheckpointError, load_checkpoint, save_checkpoint
from transformer.generate import generate
from transformer.pretrained import FAMILIES, cached_pretrained_models, load_pretrained, read_config
from transformer.tokenization import GPT2BPETokenizer, load_tokenizer, unknown_characters

TEXTS = [
    "Hello, world! The quick brown fox jumps over the lazy dog.",
    "  leading spaces, trailing ones   ",
    "Emoji 🙂🚀 and a family 👩‍👩‍👧, café, naïve, Ærøskøbing.",
    "Line one\nLine two\n\n\tTabbed\r\nWindows line\n",
    "Punctuation: (a), [b]; {c}! ... ?? — “smart quotes”, it's, don't, I'm.",
    "Unseen scripts: 日本語, Ελληνικά, עברית, हिन्दी",
    "<|endoftext|>A new document.<|endoftext|>",
    "",
]


def reference(directory: Path):
    """transformers' GPT-2 from `directory`, eval mode, eager attention (so it returns attention weights)."""
    return transformers.GPT2LMHeadModel.from_pretrained(directory, attn_implementation="eager").eval()


def copy_dir(src: Path, dst: Path, skip: tuple[str, ...] = (), config: dict | None = None) -> Path:
    """A copy of a Hugging Face model directory without the files in `skip`, with `config` merged into config.json."""
    dst.mkdir(parents=True)
    for f in src.iterdir():
        if f.name not in skip:
            shutil.copy(f, dst / f.name)
    if config:
        data = json.loads((src / "config.json").read_text())
        (dst / "config.json").write_text(json.dumps({**data, **config}))
    return dst


@pytest.fixture(scope="module")
def ref(tiny_gpt2_dir):
    return reference(tiny_gpt2_dir)


@pytest.fixture
def ours(tiny_gpt2_dir):
    """A fresh load for each test (some tests change its config)."""
    return load_pretrained(tiny_gpt2_dir, device="cpu")


@pytest.fixture
def eot(tiny_gpt2_dir) -> int:
    return json.loads((tiny_gpt2_dir / "config.json").read_text())["eos_token_id"]


def random_ids(vocab_size: int, eot: int, shape=(3, 48), seed: int = 0) -> torch.Tensor:
    """Random ids with <|endoftext|> at the start of every row and in the middle of one: a real token, not padding."""
    ids = torch.randint(0, vocab_size, shape, generator=torch.Generator().manual_seed(seed))
    ids[:, 0] = eot
    ids[0, shape[1] // 2] = eot
    return ids


# --- the model ----------------------------------------------------------------------------------------------------

def test_logits_equal_the_reference(ours, ref, eot):
    """Oracle: transformers' GPT-2 on the same files. fp32 logits agree to 1e-5 on random ids (the fused attention
    path and the explicit one), including rows where <|endoftext|> starts the text and sits in its middle, which GPT-2
    attends to like any token (our pad_id equals it, and must not mask it)."""
    model, _, _ = ours
    ids = random_ids(model.config.vocab_size, eot)
    with torch.no_grad():
        expected = ref(ids).logits
        torch.testing.assert_close(model(ids).logits, expected, atol=1e-5, rtol=0)
        torch.testing.assert_close(model(ids, return_attention=True).logits, expected, atol=1e-5, rtol=0)


@pytest.mark.parametrize("hf_config", [
    {"activation_function": "gelu", "layer_norm_epsilon": 1e-2},
    {"activation_function": "gelu_pytorch_tanh", "n_inner": 96},
    {"activation_function": "relu", "layer_norm_epsilon": 0.5},
])
def test_config_variants_equal_the_reference(tiny_gpt2_dir, tmp_path, eot, hf_config):
    """Oracle: transformers' GPT-2 with other activation functions, LayerNorm epsilons and MLP widths, read from the
    same config.json. Guards the rules "activation from the config" and "every LayerNorm's eps from the config":
    a variant with the default model's weights must also differ from it by far more than the tolerance."""
    directory = build_tiny_gpt2(tmp_path / "variant", **hf_config)
    model, _, info = load_pretrained(directory, device="cpu")
    ids = random_ids(model.config.vocab_size, eot, seed=1)
    with torch.no_grad():
        expected = reference(directory)(ids).logits
        torch.testing.assert_close(model(ids).logits, expected, atol=1e-5, rtol=0)
        if "n_inner" not in hf_config:  # same seed and shapes: the default model's weights
            assert (expected - reference(tiny_gpt2_dir)(ids).logits).abs().max() > 1e-3
    assert info["model"]["layer_norm_eps"] == hf_config.get("layer_norm_epsilon", 1e-5)
    assert info["model"]["d_ff"] == hf_config.get("n_inner", 256)


def test_attention_weights_equal_the_reference_per_layer_and_head(ours, ref, eot):
    """Oracle: transformers' `output_attentions=True` (eager attention): every layer's and head's weights agree to
    1e-5, so the fused c_attn was split into the right query, key and value heads."""
    model, _, _ = ours
    ids = random_ids(model.config.vocab_size, eot, shape=(2, 40), seed=2)
    with torch.no_grad():
        expected = ref(ids, output_attentions=True).attentions
        got = model(ids, return_attention=True).attention.decoder_self
    assert len(got) == 2
    assert_attention_equal(got, expected, (2, 4, 40, 40))


def greedy_reference(ref, prompt: list[int], n: int, eos: int) -> list[int]:
    out = ref.generate(torch.tensor([prompt]), attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
                       max_new_tokens=n, do_sample=False, num_beams=1, eos_token_id=eos, pad_token_id=eos)
    new = out[0, len(prompt):].tolist()
    return new[: new.index(eos)] if eos in new else new  # ours does not yield the EOS it stops at


@pytest.mark.parametrize("prompt", [[5, 17, 33], "eot-first"])
def test_cached_greedy_generation_gives_the_reference_tokens(ours, ref, eot, prompt):
    """Oracle: transformers' greedy `generate()`. Our KV-cached greedy decoding produces the same tokens, with and
    without <|endoftext|> at the start of the prompt."""
    model, _, _ = ours
    prompt = [eot, 40, 41, 42] if prompt == "eot-first" else prompt
    expected = greedy_reference(ref, prompt, 30, eot)
    assert len(expected) >= 10  # long enough to compare
    assert [s.token_id for s in generate(model, prompt, 30, use_cache=True)] == expected


def test_generation_stops_where_the_reference_stops_at_eos(ours, ref):
    """Oracle: transformers' greedy `generate()` with an EOS id that it produces mid-way. GPT-2 style ids (pad = bos =
    eos, one special token) make generation stop there, as the reference does, instead of never emitting it."""
    model, _, _ = ours
    prompt = [5, 17, 33]
    free = greedy_reference(ref, prompt, 30, eos=-1)
    eos = next(t for i, t in enumerate(free) if i >= 3 and t not in free[:i])  # first appears at step i >= 3
    model.config = replace(model.config, pad_id=eos, bos_id=eos, eos_id=eos)
    expected = greedy_reference(ref, prompt, 30, eos)
    assert expected == free[: free.index(eos)]
    assert [s.token_id for s in generate(model, prompt, 30, use_cache=True)] == expected


def test_loaded_model_has_the_gpt2_config_and_checkpoint_shaped_info(ours, tiny_gpt2_dir):
    """Invariant: GPT-2's structure expressed in our config (pre-norm with a final LayerNorm, learned positions,
    unscaled embeddings, tanh GELU, tied head, one special token) and an info dict shaped like a checkpoint's."""
    model, tokenizer, info = ours
    cfg = model.config
    assert (cfg.arch, cfg.norm_first, cfg.pos_encoding, cfg.scale_embeddings, cfg.activation) == \
           ("decoder-only", True, "learned", False, "gelu_tanh")
    assert cfg.pad_id == cfg.bos_id == cfg.eos_id and not cfg.has_padding
    assert model.lm_head.weight is model.embed.weight
    assert isinstance(model.decoder_norm, torch.nn.LayerNorm)
    assert not model.training
    assert not [n for n, t in [*model.named_parameters(), *model.named_buffers()] if t.is_meta]  # all loaded
    assert set(info) == {"format_version", "model", "tokenizer", "task", "training", "metrics"}
    assert info["tokenizer"] == {"kind": "gpt2-bpe"} and info["task"] is None
    assert info["model"] == cfg.to_dict() and info["training"]["source"] == str(tiny_gpt2_dir)


def test_saved_as_our_checkpoint_it_loads_back_with_the_same_logits(ours, tmp_path, eot):
    """Round trip: a loaded GPT-2 saved with save_checkpoint and read by load_checkpoint gives identical logits and
    tokenizer ids (the new config fields and the byte-level tokenizer survive config.json / tokenizer.json)."""
    model, tokenizer, _ = ours
    save_checkpoint(tmp_path / "gpt2", model, tokenizer)
    model2, tokenizer2, info = load_checkpoint(tmp_path / "gpt2", device="cpu")
    ids = random_ids(model.config.vocab_size, eot, seed=3)
    with torch.no_grad():
        assert torch.equal(model(ids).logits, model2(ids).logits)
    assert model2.config == model.config and info["tokenizer"]["kind"] == "gpt2-bpe"
    assert [tokenizer2.encode(t) for t in TEXTS] == [tokenizer.encode(t) for t in TEXTS]


# --- the tokenizer ------------------------------------------------------------------------------------------------

@pytest.fixture(params=["tokenizer.json", "vocab.json + merges.txt"])
def tokenizer_pair(request, tiny_gpt2_dir, tmp_path):
    """(ours via load_pretrained, transformers' GPT-2 tokenizer) read from one tokenizer layout."""
    if request.param == "tokenizer.json":
        directory = tiny_gpt2_dir
    else:
        directory = copy_dir(tiny_gpt2_dir, tmp_path / "vm", skip=("tokenizer.json", "tokenizer_config.json"))
    _, ours, _ = load_pretrained(directory, device="cpu")
    return ours, transformers.GPT2TokenizerFast.from_pretrained(directory)


@pytest.mark.parametrize("text", TEXTS)
def test_tokenizer_gives_the_reference_ids(tokenizer_pair, text):
    """Oracle: transformers' GPT-2 tokenizer on the same files, from tokenizer.json and from vocab.json +
    merges.txt: the same ids on spaces, punctuation, emoji, newlines, unseen scripts and a literal <|endoftext|>,
    and decoding gives the text back."""
    ours, ref = tokenizer_pair
    ids = ours.encode(text)
    assert ids == ref.encode(text, add_special_tokens=False)
    assert ours.decode(ids) == text
    assert ours.vocab_size == len(ref)


def test_tokens_are_readable_and_nothing_is_unknown(tiny_gpt2_dir):
    """Invariant: id_to_token shows a token's text (a leading 'Ġ' as a space, 'Ċ' as a newline), so for text whose
    tokens end on character boundaries the tokens concatenate to the text; a byte-level BPE has no unknown
    characters; the tokenizer survives save + load_tokenizer."""
    tok = GPT2BPETokenizer.from_file(tiny_gpt2_dir / "tokenizer.json")
    text = "Hello, world!\nThe fox, and the dog.\n\n  Two spaces."
    pieces = [tok.id_to_token(i) for i in tok.encode(text)]
    assert "".join(pieces) == text
    assert " world" in pieces and "\n" in "".join(p for p in pieces if p.strip() == "")
    assert not any("Ġ" in p or "Ċ" in p for p in pieces)
    assert unknown_characters(tok, "".join(TEXTS)) == ""
    assert tok.kind == "gpt2-bpe"


def test_tokenizer_save_and_load_round_trip(tiny_gpt2_dir, tmp_path):
    """Round trip: save() then load_tokenizer() (what load_checkpoint uses) gives a GPT2BPETokenizer with the same
    ids."""
    tok = GPT2BPETokenizer.from_file(tiny_gpt2_dir / "tokenizer.json")
    tok.save(tmp_path / "tokenizer.json")
    again = load_tokenizer(tmp_path / "tokenizer.json")
    assert isinstance(again, GPT2BPETokenizer)
    assert [again.encode(t) for t in TEXTS] == [tok.encode(t) for t in TEXTS]


# --- refusals -----------------------------------------------------------------------------------------------------

class _Trap:
    """Unpickling this creates a file: proof that something was unpickled."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return open, (str(self.marker), "w")


def test_directory_with_only_pickled_weights_is_refused_unopened(tiny_gpt2_dir, tmp_path, monkeypatch):
    """Invariant: safetensors only. A directory with pytorch_model.bin (a pickle that would create a file when
    loaded) and no model.safetensors raises CheckpointError naming both, and nothing is unpickled."""
    directory = copy_dir(tiny_gpt2_dir, tmp_path / "bin", skip=("model.safetensors",))
    marker = tmp_path / "unpickled"
    (directory / "pytorch_model.bin").write_bytes(pickle.dumps(_Trap(marker)))
    monkeypatch.setattr(torch, "load", lambda *a, **k: pytest.fail("torch.load called"))
    with pytest.raises(CheckpointError, match=r"no model\.safetensors.*pytorch_model\.bin.*pickle"):
        load_pretrained(directory)
    assert not marker.exists()


def test_hub_repo_without_safetensors_is_refused_before_any_download(monkeypatch, tmp_path):
    """Invariant: a Hub repo listing only pytorch_model.bin is refused from its file list; snapshot_download is never
    called. (The Hub's answer is simulated: no network in tests.)"""
    import huggingface_hub

    from transformer import pretrained

    listing = SimpleNamespace(sha="b" * 40, siblings=[SimpleNamespace(rfilename=n)
                                                      for n in ("config.json", "pytorch_model.bin", "vocab.json")])
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setattr(huggingface_hub.HfApi, "model_info", lambda self, repo_id, **kw: listing)
    monkeypatch.setattr(pretrained.hub, "snapshot_download", lambda *a, **k: pytest.fail("snapshot_download called"))
    with pytest.raises(CheckpointError, match=r"someone/old-gpt2: no model\.safetensors.*pytorch_model\.bin"):
        load_pretrained("someone/old-gpt2")


@pytest.mark.slow
def test_unreachable_hub_fails_with_a_clear_error_within_seconds(monkeypatch, tmp_path):
    """Invariant: when the Hub accepts the connection but never answers (the worst case: no quick refusal), a repo
    that is not cached fails in < 10 s with a CheckpointError that says so and gives the download command."""
    import huggingface_hub

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # connections complete in the kernel; nobody ever reads or answers
    try:
        monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", f"http://127.0.0.1:{silent.getsockname()[1]}")
        monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
        start = time.perf_counter()
        with pytest.raises(CheckpointError, match=r"not in the local Hugging Face cache.*unreachable.*"
                                                  r"python -m transformer\.pretrained openai-community/gpt2"):
            load_pretrained("openai-community/gpt2")
        assert time.perf_counter() - start < 10
    finally:
        silent.close()


def test_offline_mode_fails_at_once_for_a_model_not_in_the_cache(monkeypatch, tmp_path):
    """Invariant: HF_HUB_OFFLINE is honoured: no connection is tried, and the error names it, in well under a
    second."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    start = time.perf_counter()
    with pytest.raises(CheckpointError, match="HF_HUB_OFFLINE"):
        load_pretrained("gpt2")
    assert time.perf_counter() - start < 1


@pytest.mark.parametrize("change, field", [
    ({"model_type": "bert"}, "model_type"),
    ({"n_embd": 0}, "n_embd"),
    ({"n_head": 5}, "n_embd"),  # 64 is not divisible by 5
    ({"n_layer": "12"}, "n_layer"),
    ({"n_positions": None}, "n_positions"),
    ({"vocab_size": -1}, "vocab_size"),
    ({"activation_function": "swish"}, "activation_function"),
    ({"activation_function": ["gelu"]}, "activation_function"),  # not a name at all (unhashable)
    ({"layer_norm_epsilon": float("nan")}, "layer_norm_epsilon"),
    ({"layer_norm_epsilon": 0}, "layer_norm_epsilon"),
    ({"n_inner": 0}, "n_inner"),
    ({"scale_attn_by_inverse_layer_idx": True}, "scale_attn_by_inverse_layer_idx"),
    ({"scale_attn_weights": False}, "scale_attn_weights"),
    ({"tie_word_embeddings": False}, "tie_word_embeddings"),
    ({"eos_token_id": 10 ** 6}, "eos_token_id"),
])
def test_bad_gpt2_config_is_refused_naming_the_field(tiny_gpt2_dir, change, field):
    """Invariant: a config.json that is not a GPT-2 this model can run raises CheckpointError starting with the
    Hugging Face field's name."""
    hf = {**json.loads((tiny_gpt2_dir / "config.json").read_text()), **change}
    with pytest.raises(CheckpointError, match=rf"^{field}\b"):
        read_config(FAMILIES["gpt2"], hf)


def test_bad_config_is_refused_through_load_pretrained(tiny_gpt2_dir, tmp_path):
    """Invariant: load_pretrained checks the config before building anything (the check is wired in, not only
    defined)."""
    directory = copy_dir(tiny_gpt2_dir, tmp_path / "bad", config={"activation_function": "swish"})
    with pytest.raises(CheckpointError, match="activation_function"):
        load_pretrained(directory)


# --- the Hugging Face cache ---------------------------------------------------------------------------------------

FILES = ("config.json", "model.safetensors", "tokenizer.json", "vocab.json", "merges.txt")


def test_cached_pretrained_models_lists_loadable_repos_only(tiny_gpt2_dir, tmp_path, eot):
    """Oracle: a hand-built hub cache with one loadable GPT-2 and three repos that are not (a model_type no family
    registered, a GPT-2 with only pytorch_model.bin, a GPT-2 without tokenizer files): exactly the GPT-2 is listed,
    by its short name, and its source loads to the same logits as the original directory, recording the repo id."""
    files = {n: tiny_gpt2_dir / n for n in FILES}
    snapshot = add_to_hub_cache(tmp_path, TINY_GPT2_REPO, files)
    t5 = {**json.loads((tiny_gpt2_dir / "config.json").read_text()), "model_type": "t5"}
    add_to_hub_cache(tmp_path, "someone/t5", {**files, "config.json": json.dumps(t5).encode()})
    add_to_hub_cache(tmp_path, "someone/pickled-gpt2", {"config.json": files["config.json"],
                                                        "pytorch_model.bin": b"not read",
                                                        "tokenizer.json": files["tokenizer.json"]})
    add_to_hub_cache(tmp_path, "someone/no-tokenizer", {n: files[n] for n in ("config.json", "model.safetensors")})
    listed = cached_pretrained_models(tmp_path)
    assert listed == [("tiny-gpt2 (pretrained)", str(snapshot))]
    model, _, info = load_pretrained(listed[0][1], device="cpu")
    reference_model, _, _ = load_pretrained(tiny_gpt2_dir, device="cpu")
    ids = random_ids(model.config.vocab_size, eot, seed=4)
    with torch.no_grad():
        assert torch.equal(model(ids).logits, reference_model(ids).logits)
    assert info["training"]["source"] == TINY_GPT2_REPO


def test_cached_pretrained_models_names_repos_that_share_a_name_in_full(tiny_gpt2_dir, tmp_path):
    """Invariant: display names are unique: two repos named tiny-gpt2 are shown by their whole repo ids."""
    files = {n: tiny_gpt2_dir / n for n in FILES}
    add_to_hub_cache(tmp_path, TINY_GPT2_REPO, files)
    add_to_hub_cache(tmp_path, "someone/tiny-gpt2", files)
    assert [name for name, _ in cached_pretrained_models(tmp_path)] == [
        f"{TINY_GPT2_REPO} (pretrained)", "someone/tiny-gpt2 (pretrained)"]


def test_hub_cache_fixture_is_found_through_hf_hub_cache_and_loads_by_repo_id(tiny_gpt2_hub_cache, monkeypatch):
    """Invariant: with HF_HUB_CACHE pointing at the fixture's cache (as the app tests run it),
    cached_pretrained_models() finds the model without arguments, and load_pretrained(repo id) reads it from the cache in offline mode, through
    huggingface_hub's own snapshot lookup; an empty cache lists nothing."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tiny_gpt2_hub_cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    [(name, source)] = cached_pretrained_models()
    assert name == "tiny-gpt2 (pretrained)"
    model, tokenizer, info = load_pretrained(TINY_GPT2_REPO, device="cpu")
    assert Path(info["training"]["directory"]) == Path(source)
    assert tokenizer.kind == "gpt2-bpe" and model.config.n_decoder_layers == 2
    monkeypatch.setenv("HF_HUB_CACHE", str(tiny_gpt2_hub_cache / "missing"))
    assert cached_pretrained_models() == []


def test_cli_prints_where_a_cached_model_is_and_fails_clearly_otherwise(tiny_gpt2_hub_cache, monkeypatch, capsys):
    """Invariant: `python -m transformer.pretrained REPO` prints the local directory of the repo's files (here read
    from the cache, offline), and exits with the library's clear message when it cannot get them."""
    from transformer.pretrained import main

    monkeypatch.setenv("HF_HUB_CACHE", str(tiny_gpt2_hub_cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    main([TINY_GPT2_REPO])
    printed = capsys.readouterr().out.strip()
    assert printed == f"{TINY_GPT2_REPO}: {cached_pretrained_models()[0][1]}"
    with pytest.raises(SystemExit, match="error: openai-community/gpt2 is not in the local Hugging Face cache"):
        main(["openai-community/gpt2"])


# --- the one loader -----------------------------------------------------------------------------------------------

def test_load_pretrained_dispatches_on_model_type(tiny_gpt2_dir, tmp_path, ours, eot):
    """Invariant: load_pretrained reads a GPT-2 directory as load_pretrained does (the same logits, bit for bit), and a
    model_type no family registered is refused naming the supported ones."""
    from transformer.pretrained import load_pretrained

    model, tokenizer, info = load_pretrained(tiny_gpt2_dir, device="cpu")
    ids = random_ids(model.config.vocab_size, eot, seed=5)
    with torch.no_grad():
        assert torch.equal(model(ids).logits, ours[0](ids).logits)
    assert tokenizer.kind == "gpt2-bpe" and info["training"]["family"] == "GPT-2"
    directory = copy_dir(tiny_gpt2_dir, tmp_path / "t5", config={"model_type": "t5"})
    with pytest.raises(CheckpointError, match=r"model_type 't5' is not supported \(supported: .*gpt2"):
        load_pretrained(directory)


def test_weights_of_the_wrong_shape_are_refused_before_they_are_read(tiny_gpt2_dir, tmp_path, monkeypatch):
    """Invariant: model.safetensors is checked against config.json from its header: a file whose wte does not have
    the shape config.json implies is refused naming the tensor, and no tensor data is read."""
    from transformer.pretrained import weights

    directory = copy_dir(tiny_gpt2_dir, tmp_path / "wide", config={"n_positions": 128})  # the file has 64 rows
    monkeypatch.setattr(weights, "read_tensors", lambda *a, **k: pytest.fail("tensor data read"))
    with pytest.raises(CheckpointError, match=r"does not match config\.json: wpe\.weight is \[64, 64\], config\.json "
                                              r"implies \[128, 64\]"):
        load_pretrained(directory)
