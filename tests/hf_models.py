"""Small random `transformers` models of the Llama and BERT families saved in the Hugging Face layout (config.json,
model.safetensors, tokenizer.json), the oracles of transformer/pretrained/. transformers is a dev dependency."""
from __future__ import annotations

from pathlib import Path

import torch

from tests.conftest import TINY_GPT2_TEXTS, byte_level_bpe

NORM_NAMES = ("norm", "LayerNorm")


def randomize(model: torch.nn.Module, seed: int) -> None:
    """Every parameter drawn with std 0.2 (norm gains around 1): a wrong mapping rule shows in the outputs and
    attention is far from uniform."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            gain = any(n in name for n in NORM_NAMES) and name.endswith("weight")
            p.copy_(torch.randn(p.shape, generator=generator) * 0.2 + (1.0 if gain else 0.0))


def build_tiny_llama(directory: Path, seed: int = 0, **config) -> Path:
    """A small random `transformers.LlamaForCausalLM` (2 layers, hidden 64, 4 heads sharing 2 key/value heads: GQA,
    SwiGLU width 96, rope_theta 100000, tied embeddings as SmolLM2) with a byte-level BPE tokenizer.json whose
    <|endoftext|> is id 0 (BOS and EOS, as SmolLM2's). `config` overrides LlamaConfig fields."""
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    directory.mkdir(parents=True, exist_ok=True)
    bpe = byte_level_bpe(["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
    PreTrainedTokenizerFast(tokenizer_object=bpe, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
                            unk_token="<|endoftext|>").save_pretrained(directory)
    hf = LlamaConfig(**{"vocab_size": bpe.get_vocab_size(), "hidden_size": 64, "intermediate_size": 96,
                        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                        "max_position_embeddings": 128, "rope_theta": 100000.0, "rms_norm_eps": 1e-5,
                        "tie_word_embeddings": True, "bos_token_id": 0, "eos_token_id": 0, **config})
    model = LlamaForCausalLM(hf)
    randomize(model, seed)
    model.save_pretrained(directory, safe_serialization=True)
    return directory


TEXTS = TINY_GPT2_TEXTS + ["Emoji 🙂 and café; <|im_start|>user\nHi<|im_end|>", "", "  two  spaces  "]


def assert_attention_equal(got: list[torch.Tensor], expected, shape: tuple[int, ...]) -> None:
    """Every layer's and head's attention weights of ours (`got`) equal transformers' (`expected`) to 1e-5, each of
    `shape` (B, H, T, S), with some weight above 0.5 (peaked: a permuted head would not pass by chance)."""
    assert len(got) == len(expected)
    for layer, (a, b) in enumerate(zip(got, expected)):
        assert a.shape == b.shape == shape
        for head in range(shape[1]):
            torch.testing.assert_close(a[:, head], b[:, head], atol=1e-5, rtol=0, msg=f"layer {layer} head {head}")
    assert max(float(w.max()) for w in got) > 0.5


BERT_TEXTS = TINY_GPT2_TEXTS + ["The capital of France is Paris.", "She said that he would come back tomorrow."]


def build_tiny_bert(directory: Path, seed: int = 0, **config) -> Path:
    """A small random `transformers.BertForMaskedLM` (2 layers, hidden 64, 4 heads, 64 positions, 2 token types)
    with an uncased WordPiece tokenizer trained on BERT_TEXTS (~300 pieces, [PAD] at id 0), saved as tokenizer.json
    and as BERT's original vocab.txt. `config` overrides BertConfig fields."""
    from tokenizers.implementations import BertWordPieceTokenizer
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    directory.mkdir(parents=True, exist_ok=True)
    wordpiece = BertWordPieceTokenizer(lowercase=True)
    wordpiece.train_from_iterator(BERT_TEXTS, vocab_size=300, min_frequency=1, special_tokens=[
        "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], show_progress=False)
    BertTokenizerFast(tokenizer_object=wordpiece._tokenizer, do_lower_case=True).save_pretrained(directory)
    wordpiece.save_model(str(directory))  # vocab.txt, BERT's original tokenizer file
    hf = BertConfig(**{"vocab_size": wordpiece.get_vocab_size(), "hidden_size": 64, "num_hidden_layers": 2,
                       "num_attention_heads": 4, "intermediate_size": 128, "max_position_embeddings": 64,
                       "type_vocab_size": 2, **config})
    model = BertForMaskedLM(hf)
    randomize(model, seed)
    model.save_pretrained(directory, safe_serialization=True)
    return directory


HUB_FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "vocab.txt",
             "generation_config.json", "source.spm", "target.spm", "vocab.json")  # what `python -m transformer.pretrained` fetches


def families_hub_cache(root: Path) -> Path:
    """A Hugging Face hub cache under `root` holding a tiny Llama (someone/tiny-llama), a tiny BERT
    (someone/tiny-bert) and a tiny Marian English -> Spanish (someone/tiny-marian), laid out as
    `python -m transformer.pretrained` leaves them; returns the cache directory."""
    from tests.conftest import add_to_hub_cache
    from tests.tiny_marian import build_tiny_marian

    cache = root / "hub"
    for repo, build in (("someone/tiny-llama", build_tiny_llama), ("someone/tiny-bert", build_tiny_bert),
                        ("someone/tiny-marian", build_tiny_marian)):
        directory = build(root / repo.split("/")[1])
        add_to_hub_cache(cache, repo, {n: directory / n for n in HUB_FILES if (directory / n).exists()})
    return cache
