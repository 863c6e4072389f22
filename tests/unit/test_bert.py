"""transformer/pretrained/bert.py: BERT (bert-base-uncased's layout) in the from-scratch encoder, against
`transformers`' BertForMaskedLM, and fill_mask.

The oracle is a small random `transformers.BertForMaskedLM` saved in the Hugging Face layout with an uncased
WordPiece tokenizer (tokenizer.json and vocab.txt; tests/hf_models.py), reloaded by `transformers` from the same
files. Offline.
"""
from __future__ import annotations

import json
import shutil

import pytest
import torch
import transformers
from safetensors.torch import load_file, save_file

from tests.hf_models import BERT_TEXTS, assert_attention_equal, build_tiny_bert
from transformer import CheckpointError, Transformer, TransformerConfig
from transformer.encoding import with_eos
from transformer.fill_mask import fill_mask
from transformer.pretrained import load_pretrained
from transformer.tokenization import WordPieceTokenizer

TEXTS = BERT_TEXTS + ["The capital of [MASK] is Paris.", "Ünïcödé ÀCCENTS, UPPER case; 日本語 and tabs\tto\nlines",
                      ""]


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory):
    return build_tiny_bert(tmp_path_factory.mktemp("bert") / "tiny-bert")


@pytest.fixture(scope="module")
def ref(bert_dir):
    return transformers.BertForMaskedLM.from_pretrained(bert_dir, attn_implementation="eager").eval()


@pytest.fixture(scope="module")
def ours(bert_dir):
    return load_pretrained(bert_dir, device="cpu")


def inputs(model, tokenizer, texts: list[str]) -> torch.Tensor:
    """[CLS] text [SEP] for each text (with_eos: the model's bos and eos), padded with [PAD] to the longest."""
    rows = [with_eos(tokenizer.encode(t), model.config) for t in texts]
    width = max(map(len, rows))
    return torch.tensor([r + [tokenizer.pad_id] * (width - len(r)) for r in rows])


def test_masked_lm_logits_equal_the_reference(ours, ref):
    """Oracle: transformers' BertForMaskedLM on the same files: fp32 masked-LM logits to 1e-5 on both attention
    paths, for a batch with [PAD] (masked as keys by ours, by attention_mask in theirs): post-norm layers, the
    embedding sum with token type 0 and its LayerNorm, erf GELU, the MLM head with its bias."""
    model, tokenizer, _ = ours
    ids = inputs(model, tokenizer, ["The capital of [MASK] is Paris.", "Attention is all you need.", "Hello, world!"])
    assert (ids == tokenizer.pad_id).any()
    real = ids != tokenizer.pad_id
    with torch.no_grad():
        expected = ref(ids, attention_mask=real.long()).logits
        for got in (model(ids).logits, model(ids, return_attention=True).logits):
            torch.testing.assert_close(got[real], expected[real], atol=1e-5, rtol=0)


def test_attention_weights_equal_the_reference_per_layer_and_head(ours, ref):
    """Oracle: transformers' output_attentions (eager): every layer's and head's bidirectional weights to 1e-5
    (query, key and value went to the right heads), under `attention.encoder_self`."""
    model, tokenizer, _ = ours
    ids = inputs(model, tokenizer, [BERT_TEXTS[0], BERT_TEXTS[3]])[:, :14]
    with torch.no_grad():
        expected = ref(ids, output_attentions=True).attentions
        attention = model(ids, return_attention=True).attention
    assert attention.decoder_self == [] and attention.cross == []
    assert_attention_equal(attention.encoder_self, expected, (2, 4, 14, 14))
    assert float(attention.encoder_self[0][0, :, 0, -1].max()) > 0  # the first token sees the last: bidirectional


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("source", ["tokenizer.json", "vocab.txt"])
def test_tokenizer_gives_the_reference_ids(ours, bert_dir, text, source):
    """Oracle: transformers' BERT tokenizer on the same directory: [CLS] pieces [SEP] with the same ids (lower case,
    accents stripped, punctuation split, [MASK] kept whole), from tokenizer.json and from vocab.txt alone."""
    tokenizer = ours[1] if source == "tokenizer.json" else WordPieceTokenizer.from_vocab(bert_dir / "vocab.txt")
    expected = transformers.AutoTokenizer.from_pretrained(bert_dir).encode(text)
    assert with_eos(tokenizer.encode(text), ours[0].config) == expected


def test_fill_mask_gives_the_reference_top_tokens(ours, ref):
    """Oracle: softmax of transformers' logits at each [MASK]: the same top 5 ids, in order, and probabilities to
    1e-5; positions count [CLS] as 0; refused without a mask and for a model that is not encoder-only."""
    model, tokenizer, _ = ours
    text = "The capital of [MASK] is [MASK]."
    guesses = fill_mask(model, tokenizer, text, top_k=5)
    ids = torch.tensor([with_eos(tokenizer.encode(text), model.config)])
    with torch.no_grad():
        probs = ref(ids).logits[0].softmax(-1)
    assert [g.position for g in guesses] == [4, 6]
    for guess in guesses:
        top = probs[guess.position].topk(5)
        assert [i for _, i, _ in guess.candidates] == top.indices.tolist()
        torch.testing.assert_close(torch.tensor([p for _, _, p in guess.candidates]), top.values, atol=1e-5, rtol=0)
        assert [t for t, _, _ in guess.candidates] == [tokenizer.id_to_token(i) for i in top.indices.tolist()]
    with pytest.raises(ValueError, match=r"\[MASK\]"):
        fill_mask(model, tokenizer, "no mask here")
    gpt = Transformer(TransformerConfig(arch="decoder-only", vocab_size=300, d_model=16, n_heads=2, d_ff=32))
    with pytest.raises(ValueError, match="encoder-only"):
        fill_mask(gpt, tokenizer, "a [MASK]")


def test_2018_layout_with_gamma_beta_pooler_and_nsp_head_loads_the_same(bert_dir, ours, tmp_path):
    """Oracle: bert-base-uncased's own file names LayerNorm's parameters gamma/beta and also stores the pooler, the
    next-sentence head and the tied decoder: the same directory rewritten that way loads to identical logits."""
    directory = tmp_path / "old"
    shutil.copytree(bert_dir, directory)
    tensors = load_file(directory / "model.safetensors")
    old = {name.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"): t
           for name, t in tensors.items()}
    d = tensors["bert.embeddings.LayerNorm.weight"].numel()
    old.update({"bert.pooler.dense.weight": torch.zeros(d, d), "bert.pooler.dense.bias": torch.zeros(d),
                "cls.seq_relationship.weight": torch.zeros(2, d), "cls.seq_relationship.bias": torch.zeros(2),
                "cls.predictions.decoder.weight": tensors["bert.embeddings.word_embeddings.weight"].clone(),
                "cls.predictions.decoder.bias": tensors["cls.predictions.bias"].clone()})
    save_file(old, directory / "model.safetensors")
    model, tokenizer, _ = load_pretrained(directory, device="cpu")
    ids = inputs(model, tokenizer, ["The capital of [MASK] is Paris."])
    with torch.no_grad():
        assert torch.equal(model(ids).logits, ours[0](ids).logits)


def test_loaded_model_is_built_from_the_encoder_blocks(ours):
    """Invariant: BERT's structure in our config: encoder-only, post-norm, learned positions, token types with an
    embedding LayerNorm, erf GELU, biases, tied head with a bias; [CLS]/[SEP]/[PAD] as bos/eos/pad."""
    model, tokenizer, info = ours
    cfg = model.config
    assert (cfg.arch, cfg.n_decoder_layers, cfg.norm_first, cfg.pos_encoding, cfg.activation) == \
           ("encoder-only", 0, False, "learned", "gelu")
    assert (cfg.type_vocab_size, cfg.embedding_norm, cfg.scale_embeddings, cfg.layer_norm_eps) == (2, True, False, 1e-12)
    assert (cfg.bos_id, cfg.eos_id, cfg.pad_id) == (tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id)
    assert model.lm_head.weight is model.embed.weight and model.lm_head.bias is not None
    assert not [n for n, t in [*model.named_parameters(), *model.named_buffers()] if t.is_meta]
    assert info["training"]["family"] == "BERT" and info["tokenizer"] == {"kind": "wordpiece"}


@pytest.mark.parametrize("change, field", [
    ({"hidden_act": "relu"}, "hidden_act"),
    ({"position_embedding_type": "relative_key"}, "position_embedding_type"),
    ({"is_decoder": True}, "is_decoder"),
    ({"num_attention_heads": 5}, "hidden_size"),
    ({"layer_norm_eps": 0}, "layer_norm_eps"),
    ({"type_vocab_size": 0}, "type_vocab_size"),
])
def test_a_bert_this_model_cannot_run_is_refused_naming_the_field(bert_dir, tmp_path, change, field):
    """Invariant: a config.json outside what the from-scratch encoder implements raises CheckpointError naming the
    field."""
    directory = tmp_path / "bad"
    shutil.copytree(bert_dir, directory)
    hf = {**json.loads((bert_dir / "config.json").read_text()), **change}
    (directory / "config.json").write_text(json.dumps(hf))
    with pytest.raises(CheckpointError, match=rf"^{field}\b"):
        load_pretrained(directory)


def test_saved_as_our_checkpoint_it_loads_back_with_the_same_logits(ours, tmp_path):
    """Round trip: a loaded BERT saved with save_checkpoint and read by load_checkpoint (which checks every tensor
    against config.json first) gives identical logits and WordPiece ids."""
    from transformer import load_checkpoint, save_checkpoint

    model, tokenizer, _ = ours
    save_checkpoint(tmp_path / "bert", model, tokenizer)
    model2, tokenizer2, info = load_checkpoint(tmp_path / "bert", device="cpu")
    ids = inputs(model, tokenizer, ["The capital of [MASK] is Paris.", "Hello!"])
    with torch.no_grad():
        assert torch.equal(model(ids).logits, model2(ids).logits)
    assert model2.config == model.config and info["tokenizer"]["kind"] == "wordpiece"
    assert [tokenizer2.encode(t) for t in TEXTS] == [tokenizer.encode(t) for t in TEXTS]


def test_the_library_reads_an_encoder_only_model_as_one_text_and_refuses_to_decode_it(ours):
    """Invariant: encode_input gives [CLS] text [SEP] and keeps room for both when it cuts; the attention record has
    one kind, "encoder self", equal to the model's own maps; generate and the logit lens refuse with a reason."""
    from transformer.encoding import encode_input
    from transformer.generate import generate
    from transformer.interpretability.logit_lens import logit_lens
    from transformer.interpretability.probe import record_attention

    model, tokenizer, _ = ours
    text = "the capital of france is paris ."
    encoded = encode_input(model, tokenizer, text)
    assert encoded.ids == [tokenizer.cls_id, *tokenizer.encode(text), tokenizer.sep_id]
    long = encode_input(model, tokenizer, "hello " * 200)
    assert len(long.ids) == model.config.max_len and long.ids[-1] == tokenizer.sep_id and long.cut_message()
    record = record_attention(model, tokenizer, text)
    assert list(record.patterns) == ["encoder self"]
    with torch.no_grad():
        maps = model(torch.tensor([encoded.ids]), return_attention=True).attention.encoder_self
    torch.testing.assert_close(record.patterns["encoder self"].weights, torch.stack(maps)[:, 0])
    with pytest.raises(ValueError, match="encoder-only.*fill the mask"):
        list(generate(model, encoded.ids, 3))
    with pytest.raises(ValueError, match="no decoder"):
        logit_lens(model, tokenizer, encoded.ids)


def test_head_ablation_judges_a_bert_by_each_token_hidden_in_turn(ours, ref):
    """Oracle: transformers' BertForMaskedLM with each text token replaced by [MASK] in turn: our evaluate() of an
    encoder-only model is the mean -log P(hidden token | the rest), to 1e-5, and the guesses are its argmaxes;
    switching every head of the last layer off changes that loss (the mask reaches the model)."""
    from transformer.fill_mask import masked_one_at_a_time
    from transformer.heads import AttentionKind
    from transformer.interpretability.ablation import default_eval_set, evaluate, heads_off

    model, tokenizer, _ = ours
    ids = with_eos(tokenizer.encode("The capital of France is Paris."), model.config)
    eval_set = default_eval_set(model, tokenizer, None, ids)
    nlls, guesses = [], []
    with torch.no_grad():
        for i in range(1, len(ids) - 1):
            hidden = list(ids)
            hidden[i] = tokenizer.mask_id
            probs = ref(torch.tensor([hidden])).logits[0, i].log_softmax(-1)
            nlls.append(-float(probs[ids[i]]))
            guesses.append(int(probs.argmax()))
    assert evaluate(model, tokenizer, eval_set) == pytest.approx(sum(nlls) / len(nlls), abs=1e-5)
    assert masked_one_at_a_time(model, tokenizer, ids)[0] == guesses
    last = model.config.n_encoder_layers - 1
    off = heads_off(model, [(AttentionKind.ENCODER_SELF, last, h) for h in range(model.config.n_heads)])
    assert abs(evaluate(model, tokenizer, eval_set, off) - sum(nlls) / len(nlls)) > 1e-3
