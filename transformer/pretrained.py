"""Real pretrained weights in the from-scratch decoder: GPT-2 (Radford et al., 2019) from the Hugging Face layout.

GPT-2 is this package's decoder-only stack with four choices of its own, all plain config fields: pre-norm
layers with a final LayerNorm (`norm_first`), learned positions, token embeddings not multiplied by sqrt(d_model)
(`scale_embeddings=False`) and GELU's tanh approximation (`activation="gelu_tanh"`). `load_gpt2` reads
config.json + model.safetensors + the tokenizer from a local directory or a Hub repo, checks that the config is
GPT-2's, renames and reshapes the tensors (`convert_gpt2`) and returns (model, tokenizer, info) as
`load_checkpoint` does. Only safetensors are read: a pickled pytorch_model.bin is refused, never opened.

    python -m transformer.pretrained gpt2        # download GPT-2 small into the Hugging Face cache
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
from pathlib import Path

import torch
from huggingface_hub import HfApi, constants, scan_cache_dir, snapshot_download
from huggingface_hub.errors import CacheNotFound, HfHubHTTPError, LocalEntryNotFoundError, RepositoryNotFoundError
from safetensors import SafetensorError
from safetensors.torch import load_file
from torch import Tensor

from .checkpoint import FORMAT_VERSION, CheckpointError, resolve_device
from .config import TransformerConfig
from .model import Transformer
from .tokenization import GPT2BPETokenizer

HUB_FILES = ["config.json", "model.safetensors", "tokenizer.json", "vocab.json", "merges.txt"]  # never *.bin
# Seconds to wait for the Hub's answer before falling back to the local cache. huggingface_hub's first request in
# a process also fetches its agent registry (3 s timeout), so a silent network fails in about 7 s.
HUB_TIMEOUT = 4.0
REPO_ID = re.compile(r"^[\w.-]+(/[\w.-]+)?$")  # "gpt2", "openai-community/gpt2"
GPT2_ACTIVATIONS = {"gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu": "gelu", "relu": "relu"}
BUFFERS = re.compile(r"^h\.\d+\.attn\.(bias|masked_bias)$")  # GPT-2's stored causal-mask buffers: not weights


def check_gpt2_config(hf: dict) -> None:
    """Raise CheckpointError naming the field when a Hugging Face config.json is not a GPT-2 this model can run."""
    if hf.get("model_type", "gpt2") != "gpt2":
        raise CheckpointError(f"model_type: expected 'gpt2', got {hf.get('model_type')!r}")
    for name in ("n_embd", "n_head", "n_layer", "n_positions", "vocab_size"):
        value = hf.get(name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise CheckpointError(f"{name}: must be a positive integer, got {value!r}")
    if hf["n_embd"] % hf["n_head"]:
        raise CheckpointError(f"n_embd: {hf['n_embd']} is not divisible by n_head={hf['n_head']}")
    n_inner = hf.get("n_inner")
    if n_inner is not None and (not isinstance(n_inner, int) or isinstance(n_inner, bool) or n_inner < 1):
        raise CheckpointError(f"n_inner: must be null or a positive integer, got {n_inner!r}")
    activation = hf.get("activation_function", "gelu_new")
    if activation not in GPT2_ACTIVATIONS:
        raise CheckpointError(f"activation_function: must be one of {sorted(GPT2_ACTIVATIONS)}, got {activation!r}")
    eps = hf.get("layer_norm_epsilon", 1e-5)
    if not isinstance(eps, (int, float)) or isinstance(eps, bool) or not math.isfinite(eps) or eps <= 0:
        raise CheckpointError(f"layer_norm_epsilon: must be a finite number > 0, got {eps!r}")
    for name, supported in (("scale_attn_weights", True), ("scale_attn_by_inverse_layer_idx", False),
                            ("add_cross_attention", False), ("tie_word_embeddings", True)):
        if hf.get(name, supported) != supported:
            raise CheckpointError(f"{name}: only {str(supported).lower()} is supported, got {hf[name]!r}")
    for name in ("bos_token_id", "eos_token_id"):
        value = hf.get(name, 50256)
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < hf["vocab_size"]:
            raise CheckpointError(f"{name}: must be a token id below vocab_size={hf['vocab_size']}, got {value!r}")


def convert_gpt2(hf: dict, tensors: dict[str, Tensor]) -> tuple[TransformerConfig, dict[str, Tensor]]:
    """GPT-2's config.json and tensors -> our TransformerConfig and state dict, one rule per comment.

    `hf` must have passed check_gpt2_config. Raises CheckpointError on a missing or unexpected tensor.
    """
    config = TransformerConfig(
        arch="decoder-only", vocab_size=hf["vocab_size"], d_model=hf["n_embd"], n_heads=hf["n_head"],
        n_decoder_layers=hf["n_layer"], max_len=hf["n_positions"],
        d_ff=hf.get("n_inner") or 4 * hf["n_embd"],  # n_inner null: the MLP is 4 x wider than the residual stream
        dropout=hf.get("resid_pdrop", 0.1),  # GPT-2 uses one rate (0.1) for embeddings, residuals and attention
        norm_first=True,  # pre-norm: x + attn(ln_1(x)), x + mlp(ln_2(x)), then ln_f (our decoder_norm)
        pos_encoding="learned",  # wpe: one trained vector per position
        scale_embeddings=False,  # wte(ids) + wpe(pos), no sqrt(d_model) factor
        activation=GPT2_ACTIVATIONS[hf.get("activation_function", "gelu_new")],  # "gelu_new" = tanh-approximate GELU
        layer_norm_eps=float(hf.get("layer_norm_epsilon", 1e-5)),  # every LayerNorm's eps, from the config
        tie_embeddings=True,  # the output layer is wte itself
        attention_bias=True,  # c_attn and c_proj have biases
        # <|endoftext|> is GPT-2's only special token: BOS and EOS; pad_id = eos_id means "no padding token"
        bos_id=hf.get("bos_token_id", 50256), eos_id=hf.get("eos_token_id", 50256),
        pad_id=hf.get("eos_token_id", 50256),
    )
    # save_pretrained names tensors "transformer.h.0..."; the original OpenAI files have no "transformer." prefix
    g = {name.removeprefix("transformer."): t.float() for name, t in tensors.items()}
    g.pop("lm_head.weight", None)  # the tied head, when a file stores it: the same matrix as wte
    for name in [n for n in g if BUFFERS.match(n)]:
        del g[name]

    def take(name: str) -> Tensor:
        if name not in g:
            raise CheckpointError(f"model.safetensors: missing tensor {name!r}")
        return g.pop(name)

    def conv1d(name: str) -> Tensor:
        return take(name).t().contiguous()  # Conv1D stores (in, out); nn.Linear wants (out, in): transpose

    sd = {"embed.weight": take("wte.weight"),  # token embedding (wte)
          "pos_encoding.table": take("wpe.weight")}  # learned positions (wpe)
    sd["lm_head.weight"] = sd["embed.weight"]  # tied head: logits = x wte^T
    for i in range(config.n_decoder_layers):
        h, ours = f"h.{i}.", f"decoder.{i}."
        # c_attn: one (d, 3d) Conv1D whose output columns are [q | k | v]: exactly our in_proj rows [W^Q; W^K; W^V]
        sd[ours + "self_attn.in_proj.weight"] = conv1d(h + "attn.c_attn.weight")
        sd[ours + "self_attn.in_proj.bias"] = take(h + "attn.c_attn.bias")
        sd[ours + "self_attn.out_proj.weight"] = conv1d(h + "attn.c_proj.weight")  # attention output projection
        sd[ours + "self_attn.out_proj.bias"] = take(h + "attn.c_proj.bias")
        sd[ours + "ffn.w_1.weight"] = conv1d(h + "mlp.c_fc.weight")  # MLP: c_fc = W_1, c_proj = W_2
        sd[ours + "ffn.w_1.bias"] = take(h + "mlp.c_fc.bias")
        sd[ours + "ffn.w_2.weight"] = conv1d(h + "mlp.c_proj.weight")
        sd[ours + "ffn.w_2.bias"] = take(h + "mlp.c_proj.bias")
        for n, ln in enumerate(("ln_1", "ln_2")):  # ln_1 before attention, ln_2 before the MLP: our pre-norm sub-layers
            sd[f"{ours}sublayers.{n}.norm.weight"] = take(f"{h}{ln}.weight")
            sd[f"{ours}sublayers.{n}.norm.bias"] = take(f"{h}{ln}.bias")
    sd["decoder_norm.weight"], sd["decoder_norm.bias"] = take("ln_f.weight"), take("ln_f.bias")  # final ln_f
    if g:
        raise CheckpointError(f"model.safetensors: unexpected tensors for a {config.n_decoder_layers}-layer GPT-2: "
                              f"{sorted(g)[:5]}")
    return config, sd


def gpt2_model(hf: dict, tensors: dict[str, Tensor]) -> Transformer:
    """Our Transformer holding GPT-2's weights (CPU, train mode), from its config and tensors (convert_gpt2)."""
    config, state = convert_gpt2(hf, tensors)
    with torch.device("meta"):  # no memory and no random init for weights that are replaced at once
        model = Transformer(config)
    model.load_state_dict(state, strict=True, assign=True)
    model.lm_head.weight = model.embed.weight  # assign=True gave the tied pair two Parameters: one again
    return model


def load_gpt2(source: str | os.PathLike, device: str | torch.device | None = None):
    """Load GPT-2 as (our Transformer in eval mode, GPT2BPETokenizer, info); raises CheckpointError.

    `source` is a directory in the Hugging Face layout or a Hub repo id ("openai-community/gpt2",
    "distilbert/distilgpt2", "gpt2-medium"), fetched into the Hugging Face cache when the Hub is reachable and
    read from that cache when it is not (or when HF_HUB_OFFLINE is set). `device` None takes CUDA when present.
    `info` has the shape of a checkpoint's config.json, so callers treat both alike.
    """
    path = Path(source).expanduser()
    if path.is_dir():
        directory, repo_id = path, _repo_id_of_snapshot(path)
    elif REPO_ID.match(str(source)) and not path.exists():
        directory, repo_id = fetch_gpt2(str(source)), str(source)
    else:
        raise CheckpointError(f"{source}: neither a directory nor a Hugging Face repo id")
    weights = _weights_file(directory)
    hf = _read_json(directory / "config.json")
    check_gpt2_config(hf)
    try:
        tensors = load_file(str(weights))
    except (SafetensorError, OSError) as e:
        raise CheckpointError(f"{weights}: not a valid safetensors file: {e}") from None
    model = gpt2_model(hf, tensors)
    config = model.config
    tokenizer = _tokenizer(directory)
    if tokenizer.vocab_size != config.vocab_size:
        raise CheckpointError(f"{directory}: tokenizer has {tokenizer.vocab_size} tokens, config.json says "
                              f"vocab_size={config.vocab_size}")
    info = {"format_version": FORMAT_VERSION, "model": config.to_dict(), "tokenizer": {"kind": tokenizer.kind},
            "task": None, "metrics": {},
            "training": {"source": repo_id or str(directory), "directory": str(directory),
                         "pretrained": "GPT-2 weights in the Hugging Face layout, loaded by transformer.pretrained; "
                                       "not trained here"}}
    device = resolve_device("auto" if device is None else device)
    return model.to(device).eval(), tokenizer, info


def fetch_gpt2(repo_id: str) -> Path:
    """The local directory of a Hub repo's config, safetensors weights and tokenizer, downloaded if needed.

    Asks the Hub (HUB_TIMEOUT seconds at most) unless HF_HUB_OFFLINE is set; refuses a repo without
    model.safetensors before downloading anything; falls back to the local cache when the Hub cannot be reached.
    """
    cache = hub_cache_dir()
    if _offline():
        reason = "HF_HUB_OFFLINE is set"
    else:
        try:
            repo = HfApi().model_info(repo_id, timeout=HUB_TIMEOUT)
        except RepositoryNotFoundError:
            raise CheckpointError(f"{repo_id}: no such model on the Hugging Face Hub (or it is private)") from None
        except HfHubHTTPError as e:
            reason = f"the Hub answered {e}"
        except Exception as e:  # DNS failure, refused connection, timeout: the Hub cannot be reached
            reason = f"the Hub is unreachable ({type(e).__name__}: {e})"
        else:
            files = {s.rfilename for s in repo.siblings or []}
            _refuse_without_safetensors(repo_id, files)
            return Path(snapshot_download(repo_id, revision=repo.sha, allow_patterns=HUB_FILES, cache_dir=cache))
    try:
        return Path(snapshot_download(repo_id, allow_patterns=HUB_FILES, cache_dir=cache, local_files_only=True))
    except LocalEntryNotFoundError:
        raise CheckpointError(f"{repo_id} is not in the local Hugging Face cache ({cache}) and {reason}. "
                              f"Download it where the Hub is reachable: python -m transformer.pretrained "
                              f"{repo_id}") from None


def cached_gpt2_models(cache_dir: str | os.PathLike | None = None) -> list[tuple[str, str]]:
    """(display name, local directory for load_gpt2) of every GPT-2 in the local Hugging Face cache.

    A repo counts when one of its snapshots (the one `main` points to, else the newest) holds a config.json with
    model_type "gpt2", model.safetensors and tokenizer files. No network. The name is "gpt2 (pretrained)" (the
    repo id's last part; the whole id when two repos share it).
    """
    try:
        repos = scan_cache_dir(cache_dir or hub_cache_dir()).repos
    except (CacheNotFound, ValueError):  # no cache yet, or the path is a file
        return []
    found = []
    for repo in sorted(repos, key=lambda r: r.repo_id):
        if repo.repo_type != "model" or not repo.revisions:
            continue
        revision = max(repo.revisions, key=lambda r: ("main" in r.refs, r.last_modified))
        directory = Path(revision.snapshot_path)
        try:
            _weights_file(directory)
            _tokenizer_files(directory)
            if _read_json(directory / "config.json").get("model_type") == "gpt2":
                found.append((repo.repo_id, str(directory)))
        except CheckpointError:
            continue
    names = [repo_id.split("/")[-1] for repo_id, _ in found]
    return [((name if names.count(name) == 1 else repo_id) + " (pretrained)", directory)
            for name, (repo_id, directory) in zip(names, found)]


def hub_cache_dir() -> str:
    """The Hugging Face hub cache, honouring HF_HUB_CACHE / HF_HOME set after huggingface_hub was imported."""
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    if os.environ.get("HF_HOME"):
        return os.path.join(os.environ["HF_HOME"], "hub")
    return constants.HF_HUB_CACHE


def _offline() -> bool:
    return constants.HF_HUB_OFFLINE or os.environ.get("HF_HUB_OFFLINE", "").upper() in {"1", "ON", "YES", "TRUE"}


def _refuse_without_safetensors(where: str, files: set[str]) -> None:
    if "model.safetensors" in files:
        return
    if "model.safetensors.index.json" in files:
        raise CheckpointError(f"{where}: sharded safetensors weights are not supported (one model.safetensors needed)")
    pickled = sorted(f for f in files if f.endswith((".bin", ".pt", ".pth", ".ckpt")))
    detail = f" It has {', '.join(pickled)}, a pickle, which can run code when loaded: refused." if pickled else ""
    raise CheckpointError(f"{where}: no model.safetensors.{detail} Only safetensors weights are read.")


def _weights_file(directory: Path) -> Path:
    """directory/model.safetensors, or CheckpointError (a directory with pickled weights only is refused)."""
    if not (directory / "config.json").is_file():
        raise CheckpointError(f"{directory}: missing config.json")
    _refuse_without_safetensors(str(directory), {p.name for p in directory.iterdir() if p.is_file()})
    return directory / "model.safetensors"


def _tokenizer_files(directory: Path) -> list[Path]:
    if (directory / "tokenizer.json").is_file():
        return [directory / "tokenizer.json"]
    if (directory / "vocab.json").is_file() and (directory / "merges.txt").is_file():
        return [directory / "vocab.json", directory / "merges.txt"]
    raise CheckpointError(f"{directory}: no tokenizer (tokenizer.json, or vocab.json and merges.txt)")


def _tokenizer(directory: Path) -> GPT2BPETokenizer:
    files = _tokenizer_files(directory)
    try:
        return GPT2BPETokenizer.from_file(files[0]) if len(files) == 1 else GPT2BPETokenizer.from_vocab_merges(*files)
    except Exception as e:  # tokenizers' parse errors and our own ValueError: the files are bad
        raise CheckpointError(f"{directory}: bad tokenizer files: {e}") from None


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{path}: not valid JSON: {e}") from None
    if not isinstance(data, dict):
        raise CheckpointError(f"{path}: expected a JSON object")
    return data


def _repo_id_of_snapshot(path: Path) -> str | None:
    """'owner/name' for a directory .../models--owner--name/snapshots/<revision> of the Hub cache, else None."""
    repo = path.resolve().parent.parent.name
    if path.resolve().parent.name == "snapshots" and repo.startswith("models--"):
        return repo.removeprefix("models--").replace("--", "/")
    return None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Download a GPT-2 (config, safetensors weights, tokenizer) into the "
                                                 "Hugging Face cache, where Attention Lab finds it.")
    parser.add_argument("repo_id", nargs="?", default="openai-community/gpt2",
                        help="Hub repo id, e.g. gpt2, openai-community/gpt2, distilbert/distilgpt2, gpt2-medium")
    args = parser.parse_args(argv)
    try:
        directory = fetch_gpt2(args.repo_id)
        _weights_file(directory)
        check_gpt2_config(_read_json(directory / "config.json"))
    except CheckpointError as e:
        raise SystemExit(f"error: {e}")
    print(f"{args.repo_id}: {directory}")


if __name__ == "__main__":
    main()
