"""The logit lens: its last row is the model's own prediction, and a middle row matches a hand computation."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from transformer import Transformer, TransformerConfig
from transformer.embeddings import sinusoidal_table
from transformer.interpretability.logit_lens import decoder_residuals, lens_logits, logit_lens
from transformer.pretrained import load_pretrained
from transformer.tokenization import CharTokenizer

TOK = CharTokenizer.from_text("abcdefgh ")


def tiny(norm_first: bool, arch: str = "decoder-only", seed: int = 0) -> Transformer:
    torch.manual_seed(seed)
    cfg = TransformerConfig(arch=arch, vocab_size=TOK.vocab_size, d_model=16, n_heads=2, d_ff=32, dropout=0.0,
                            max_len=32, norm_first=norm_first, n_decoder_layers=3,
                            n_encoder_layers=2 if arch == "encoder-decoder" else 0)
    return Transformer(cfg).eval()


@pytest.mark.parametrize("norm_first", [True, False])
def test_last_row_is_the_models_own_prediction(norm_first):
    """Oracle: the model's forward pass. The lens of the last layer equals its logits to 1e-5, so its top token
    and probability are the model's; pre-norm reads through the final LayerNorm, post-norm has none to read."""
    model = tiny(norm_first)
    ids = TOK.encode("abcab fedh")
    logits = model(torch.tensor([ids])).logits[0]
    _, residuals = decoder_residuals(model, ids)
    assert len(residuals) == 1 + model.config.n_decoder_layers
    assert (lens_logits(model, residuals[-1]) - logits).abs().max() < 1e-5
    lens = logit_lens(model, TOK, ids)
    probs = torch.softmax(logits, -1)
    assert torch.equal(lens.final_ids, probs.argmax(-1)) and torch.equal(lens.top_ids[-1], lens.final_ids)
    assert torch.allclose(lens.top_probs[-1], probs.max(-1).values, atol=1e-6)
    assert torch.allclose(lens.final_probs[-1], lens.top_probs[-1])  # invariant: the last row's top is the final
    assert lens.through_final_norm is norm_first
    assert lens.rows == ["embedding", "layer 0", "layer 1", "layer 2"]


def test_middle_layer_matches_a_hand_computation():
    """Oracle: by hand, for the row after layer 0 of a pre-norm model: x = E[ids] sqrt(d_model) + PE, then layer 0
    called on it, then LayerNorm with the final norm's weights, then x E^T (tied unembedding), then softmax."""
    model = tiny(True)
    ids = TOK.encode("hgfe dcba")
    d = model.config.d_model
    with torch.no_grad():
        x = model.embed.weight[ids] * math.sqrt(d) + sinusoidal_table(32, d)[: len(ids)]  # (T, d_model)
        x = model.decoder[0](x[None], None)
        h = F.layer_norm(x[0], (d,), model.decoder_norm.weight, model.decoder_norm.bias, model.decoder_norm.eps)
        probs = torch.softmax(h @ model.embed.weight.T, -1)  # (T, vocab)
    lens = logit_lens(model, TOK, ids)
    assert torch.equal(lens.top_ids[1], probs.argmax(-1))
    assert torch.allclose(lens.top_probs[1], probs.max(-1).values, atol=1e-5)
    final = lens.final_ids
    assert torch.allclose(lens.final_probs[1], probs.gather(-1, final[:, None])[:, 0], atol=1e-5)


def test_encoder_decoder_lens_reads_the_decoder():
    """Oracle: for an encoder-decoder model the last row equals model(src, <s> + target) to 1e-5, and the columns
    are the decoder's inputs, <s> first."""
    model = tiny(False, "encoder-decoder")
    src, tgt = TOK.encode("abc") + [2], TOK.encode("cba")
    logits = model(torch.tensor([src]), torch.tensor([[1] + tgt])).logits[0]
    lens = logit_lens(model, TOK, src, tgt)
    assert lens.position_tokens == ["<s>", "c", "b", "a"]
    _, residuals = decoder_residuals(model, src, tgt)
    assert (lens_logits(model, residuals[-1]) - logits).abs().max() < 1e-5
    assert torch.equal(lens.final_ids, logits.argmax(-1))


def test_gpt2_shaped_model_last_row_is_its_logits(tiny_gpt2_dir):
    """Oracle: on a small random GPT-2 (the real weights are not on this machine; same code path), the lens' last
    row through ln_f and the tied unembedding equals the model's logits to 1e-5."""
    model, tok, _ = load_pretrained(tiny_gpt2_dir, device="cpu")
    ids = tok.encode("Mary and John went to the store. John gave a drink to")
    logits = model(torch.tensor([ids])).logits[0]
    _, residuals = decoder_residuals(model, ids)
    assert (lens_logits(model, residuals[-1]) - logits).abs().max() < 1e-5
    lens = logit_lens(model, tok, ids)
    assert lens.through_final_norm and torch.equal(lens.final_ids, logits.argmax(-1))
