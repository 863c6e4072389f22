"""The download command, `python -m transformer.pretrained REPO_ID`: a supported model into the Hugging Face cache."""
from __future__ import annotations

import argparse

from ..checkpoint import CheckpointError
from .convert import read_config
from .family import family_of
from .hub import fetch
from .weights import read_json, weights_file


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m transformer.pretrained",
                                     description="Download a pretrained model (config, safetensors weights, "
                                                 "tokenizer) into the Hugging Face cache, where Attention Lab finds "
                                                 "it.")
    parser.add_argument("repo_id", nargs="?", default="openai-community/gpt2",
                        help="Hub repo id, e.g. gpt2, HuggingFaceTB/SmolLM2-135M, bert-base-uncased")
    args = parser.parse_args(argv)
    try:
        directory = fetch(args.repo_id)
        weights_file(directory)
        hf = read_json(directory / "config.json")
        read_config(family_of(directory, hf), hf)
    except CheckpointError as e:
        raise SystemExit(f"error: {e}")
    print(f"{args.repo_id}: {directory}")
