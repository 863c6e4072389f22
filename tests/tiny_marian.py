"""A small random Marian in the Hugging Face layout, built offline: the oracle of the Marian tests and the model the
app tests put into a temporary Hugging Face cache.

Two SentencePiece models are trained here on a few English and Spanish sentences (source.spm, target.spm), one
vocab.json holds both languages' pieces as Marian's does (</s> 0, <unk> 1, ..., <pad> last) minus the pieces that
contain a "q" (so "queso" has pieces vocab.json lacks: they must become <unk>), and `transformers.MarianMTModel`
with a small config and random weights is saved beside them.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import torch

ENGLISH = [
    "In the beginning God created the heaven and the earth.",
    "And the earth was without form, and void; and darkness was upon the face of the deep.",
    "My family visited us last week and we walked by the river.",
    "The cat sat on the mat while the children were playing in the garden.",
    "Please send me the quarterly report before Friday.",
    "We bought bread, cheese and fruit at the market this morning.",
    "The teacher asked the students to read the first chapter again.",
    "It rained all night, so the roads were quiet in the morning.",
    "Where is the station? I think it is near the old church.",
    "They will travel to Spain in the summer to see their grandparents.",
]
SPANISH = [
    "En el principio creó Dios los cielos y la tierra.",
    "Y la tierra estaba desordenada y vacía, y las tinieblas estaban sobre la faz del abismo.",
    "Mi familia nos visitó la semana pasada y caminamos junto al río.",
    "El gato se sentó en la alfombra mientras los niños jugaban en el jardín.",
    "Por favor, envíame el informe trimestral antes del viernes.",
    "Compramos pan, queso y fruta en el mercado esta mañana.",
    "El profesor pidió a los estudiantes que leyeran otra vez el primer capítulo.",
    "Llovió toda la noche, así que las calles estaban tranquilas por la mañana.",
    "¿Dónde está la estación? Creo que está cerca de la iglesia vieja.",
    "Viajarán a España en verano para ver a sus abuelos.",
]
LEFT_OUT = "q"  # pieces holding this letter are kept out of vocab.json: they read as <unk>


def train_spm(lines: list[str], vocab_size: int) -> bytes:
    """A unigram SentencePiece model of about `vocab_size` pieces, trained on `lines` in memory (one thread:
    the same model every run)."""
    import sentencepiece

    out = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(sentence_iterator=iter(lines * 5), model_writer=out,
                                             vocab_size=vocab_size, hard_vocab_limit=False, num_threads=1,
                                             minloglevel=2)
    return out.getvalue()


def marian_vocab(*spm_models: bytes) -> dict[str, int]:
    """Marian's vocab.json over the pieces of `spm_models`: </s> 0, <unk> 1, the pieces in order, <pad> last."""
    import sentencepiece

    vocab = {"</s>": 0, "<unk>": 1}
    for proto in spm_models:
        sp = sentencepiece.SentencePieceProcessor(model_proto=proto)
        for i in range(sp.get_piece_size()):
            piece = sp.id_to_piece(i)
            if not (sp.is_control(i) or sp.is_unknown(i)) and LEFT_OUT not in piece:
                vocab.setdefault(piece, len(vocab))
    vocab["<pad>"] = len(vocab)
    return vocab


def build_tiny_marian(directory: Path, seed: int = 0, **config) -> Path:
    """Save a small random `transformers.MarianMTModel` and its tokenizer files into `directory`.

    2 + 2 layers, 4 heads, d_model 32, d_ff 64, 64 positions, SiLU ("swish"), embeddings x sqrt(d_model), as
    opus-mt's config says; every parameter drawn with std 0.3 (LayerNorm weights around 1) and final_logits_bias
    with std 1 (2.0 for </s>), so a wrong mapping rule shows in the outputs and generation both stops at </s> and
    runs to its limit. `config` overrides MarianConfig fields.
    Files: config.json, generation_config.json, model.safetensors, source.spm, target.spm, vocab.json,
    tokenizer_config.json.
    """
    from transformers import GenerationConfig, MarianConfig, MarianMTModel, MarianTokenizer

    directory.mkdir(parents=True, exist_ok=True)
    source, target = train_spm(ENGLISH, 120), train_spm(SPANISH, 120)
    (directory / "source.spm").write_bytes(source)
    (directory / "target.spm").write_bytes(target)
    vocab = marian_vocab(source, target)
    (directory / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False, indent=2), encoding="utf-8")
    MarianTokenizer(str(directory / "source.spm"), str(directory / "target.spm"), str(directory / "vocab.json"),
                    source_lang="en", target_lang="es").save_pretrained(directory)
    pad = vocab["<pad>"]
    settings = dict(vocab_size=len(vocab), d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                    decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64,
                    activation_function="swish", scale_embedding=True, pad_token_id=pad, decoder_start_token_id=pad,
                    eos_token_id=0, forced_eos_token_id=0)
    torch.manual_seed(seed)
    model = MarianMTModel(MarianConfig(**{**settings, **config}))
    # opus-mt's generation_config.json: the pad token is never generated, 4 beams, </s> forced at max_length
    model.generation_config = GenerationConfig(bad_words_ids=[[pad]], decoder_start_token_id=pad, pad_token_id=pad,
                                               eos_token_id=0, forced_eos_token_id=0, num_beams=4, max_length=64)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.normal_(1.0 if "layer_norm" in name and name.endswith("weight") else 0.0, 0.3)
        model.final_logits_bias.normal_(0.0, 1.0)
        model.final_logits_bias[0, model.config.eos_token_id] = 2.0  # some outputs end early, others run to the limit
    model.save_pretrained(directory, safe_serialization=True)
    return directory
