"""Which cached Marian translates English -> Spanish (transformer.pretrained.marian.marian_languages and
store.catalogue.pretrained_translator): the translation demo shows it beside our model."""
from __future__ import annotations

import json

from transformer.pretrained.marian import marian_languages


def test_languages_come_from_tokenizer_config_then_the_opus_mt_name(tmp_path):
    """transformers writes source_lang and target_lang into tokenizer_config.json; without them the repo's name
    says (Helsinki-NLP/opus-mt-{source}-{target}); a multilingual target (ROMANCE) or another name says nothing."""
    assert marian_languages(tmp_path, "opus-mt-en-es (pretrained)") == ("en", "es")
    assert marian_languages(tmp_path, "Helsinki-NLP/opus-mt-en-de") == ("en", "de")
    assert marian_languages(tmp_path, "opus-mt-en-ROMANCE (pretrained)") is None
    assert marian_languages(tmp_path, "opus-mt-en-es-extra (pretrained)") is None
    assert marian_languages(tmp_path, "my-marian (pretrained)") is None
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"source_lang": "de", "target_lang": "es"}))
    assert marian_languages(tmp_path, "opus-mt-en-es (pretrained)") == ("de", "es")


def test_the_translator_is_an_en_es_marian_opus_mt_first(monkeypatch, tmp_path):
    from store import catalogue

    cached = {"a-marian (pretrained)": tmp_path / "a", "opus-mt-en-es (pretrained)": tmp_path / "b",
              "opus-mt-en-de (pretrained)": tmp_path / "c", "gpt2 (pretrained)": tmp_path / "d"}
    for directory in cached.values():
        directory.mkdir()
    (tmp_path / "a" / "tokenizer_config.json").write_text(json.dumps({"source_lang": "en", "target_lang": "es"}))
    monkeypatch.setattr(catalogue, "pretrained", lambda: cached)
    monkeypatch.setattr(catalogue, "pretrained_of_arch", lambda arch: [n for n in cached if "gpt2" not in n])
    assert catalogue.pretrained_translator("en", "es") == "opus-mt-en-es (pretrained)"
    assert catalogue.pretrained_translator("en", "de") == "opus-mt-en-de (pretrained)"
    assert catalogue.pretrained_translator("es", "en") is None
    cached.pop("opus-mt-en-es (pretrained)")
    assert catalogue.pretrained_translator("en", "es") == "a-marian (pretrained)"
