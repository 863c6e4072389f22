"""transformer/dropout.py: the dropout of section 5.4 (zero with probability p, scale the rest by 1 / (1 - p),
identity at evaluation), with a keep-mask drawn from 16-bit random numbers (p rounded to a multiple of 1/65536)."""
from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from transformer import Transformer, TransformerConfig
from transformer.dropout import LEVELS, Dropout, dropout, effective_p, keep_mask

N = 1 << 22  # elements of the "large tensor" in the statistical tests
SIGMAS = 5  # statistical tolerance: a correct implementation fails one check in ~1.7 million


def binomial_tolerance(rate: float, n: int) -> float:
    return SIGMAS * math.sqrt(rate * (1 - rate) / n)


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_keep_rate_is_one_minus_p_at_every_position_of_a_random_word(p):
    """Oracle: Bernoulli(1 - p). Each kept fraction is within 5 binomial standard deviations of 1 - effective_p(p),
    overall and separately at positions 0-3 mod 4 (the four 16-bit quarters of one 64-bit draw: a quarter with a
    bit missing would keep at another rate), and pairs of neighbours are both kept at (1 - p)^2 (independence)."""
    torch.manual_seed(0)
    keep = keep_mask((N,), p)
    q = 1 - effective_p(p)
    assert abs(keep.double().mean().item() - q) < binomial_tolerance(q, N)
    for lane in range(4):
        assert abs(keep[lane::4].double().mean().item() - q) < binomial_tolerance(q, N // 4), lane
    both = (keep[0::2] & keep[1::2]).double().mean().item()
    assert abs(both - q * q) < binomial_tolerance(q * q, N // 2)


def test_p_is_rounded_to_a_multiple_of_1_over_65536():
    """Hand computation: 0.1 * 65536 = 6553.6 -> 6554; p = 0, 1 and multiples of 1/65536 are exact."""
    assert effective_p(0.1) == 6554 / 65536
    assert abs(effective_p(0.1) - 0.1) <= 0.5 / LEVELS
    assert effective_p(0.0) == 0.0 and effective_p(1.0) == 1.0 and effective_p(0.25) == 0.25


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
def test_survivors_are_scaled_exactly_by_one_over_one_minus_p_and_the_rest_are_zero(dtype):
    """Oracle: the mask keep_mask draws from the same seed; kept elements are x * 1 / (1 - effective_p) rounded
    once to x's dtype (as torch's own dropout rounds), dropped ones are exactly 0."""
    p = 0.1
    x = torch.randn(64, 8, 32, 32).to(dtype)  # (B, H, T, S), like attention weights
    torch.manual_seed(3)
    keep = keep_mask(x.shape, p)
    torch.manual_seed(3)
    out = dropout(x, p)
    scale = 1 / (1 - effective_p(p))
    assert out.dtype == dtype
    assert torch.equal(out[keep], (x[keep].double() * scale).to(dtype) if dtype == torch.float64
                       else (x[keep].float() * scale).to(dtype))
    assert torch.equal(out[~keep], torch.zeros_like(out[~keep]))
    assert 0 < (~keep).sum() < keep.sum()


@pytest.mark.parametrize("p", [0.1, 0.5])
def test_the_mean_is_preserved(p):
    """Invariant E[dropout(x)] = x. For x = 1 each output is 0 or 1/(1-p'), variance p'/(1-p'), so the mean of N
    of them is within 5 standard deviations, 5 sqrt(p'/((1-p') N)) (0.0008 at p=0.1, 0.0024 at p=0.5), of 1."""
    torch.manual_seed(1)
    out = dropout(torch.ones(N), p)
    q = effective_p(p)
    assert abs(out.double().mean().item() - 1.0) < SIGMAS * math.sqrt(q / (1 - q) / N)


def test_eval_mode_p_zero_and_tiny_p_are_the_identity():
    """Invariant: not training, p = 0, and p < 1/131072 (which rounds to 0) return x itself, and draw nothing
    from the generator."""
    x = torch.randn(4, 5)
    state = torch.get_rng_state()
    assert dropout(x, 0.3, training=False) is x
    assert dropout(x, 0.0) is x
    assert dropout(x, 1e-6) is x
    module = Dropout(0.3).eval()
    assert module(x) is x
    assert torch.equal(torch.get_rng_state(), state)
    assert not torch.equal(module.train()(x), x)


def test_p_one_drops_everything():
    """Invariant: p = 1 zeroes every element and every gradient."""
    x = torch.randn(6, 7, requires_grad=True)
    out = dropout(x, 1.0)
    out.sum().backward()
    assert torch.equal(out, torch.zeros(6, 7)) and torch.equal(x.grad, torch.zeros(6, 7))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_gradient_flows_only_through_kept_elements_with_the_same_scale(dtype):
    """Oracle: d out / d x = mask * 1/(1 - p'), so x.grad = g * mask * scale (rounded once), 0 where dropped."""
    p = 0.3
    x = torch.randn(32, 16, 64).to(dtype).requires_grad_()
    g = torch.randn(32, 16, 64).to(dtype)
    torch.manual_seed(5)
    keep = keep_mask(x.shape, p)
    torch.manual_seed(5)
    dropout(x, p).backward(g)
    scale = 1 / (1 - effective_p(p))
    assert torch.equal(x.grad[keep], (g[keep].float() * scale).to(dtype))
    assert torch.equal(x.grad[~keep], torch.zeros_like(x.grad[~keep]))


def test_the_same_seed_gives_the_same_mask_and_another_seed_another():
    """Invariant: torch.manual_seed decides every mask (reproducible runs), and the mask is not constant."""
    x = torch.ones(1000, 33)  # an odd size: the last 64-bit draw is only partly used
    torch.manual_seed(11)
    first = dropout(x, 0.2)
    torch.manual_seed(11)
    second = dropout(x, 0.2)
    torch.manual_seed(12)
    other = dropout(x, 0.2)
    assert torch.equal(first, second)
    assert not torch.equal(first, other)
    assert not torch.equal(dropout(x, 0.2), first)  # the generator moved on


def test_a_non_contiguous_input_is_masked_in_its_own_shape():
    """Invariant: dropout of a transposed view equals dropout of its contiguous copy under the same seed."""
    x = torch.randn(16, 24).t()  # (24, 16), not contiguous
    torch.manual_seed(2)
    out = dropout(x, 0.5)
    torch.manual_seed(2)
    assert torch.equal(out, dropout(x.contiguous(), 0.5))


@pytest.mark.parametrize("p", [-0.1, 1.5, float("nan")])
def test_p_outside_zero_one_is_a_clear_error(p):
    """Validation: the functional and the module both refuse p outside [0, 1], naming the value."""
    with pytest.raises(ValueError, match="between 0 and 1"):
        dropout(torch.ones(3), p)
    with pytest.raises(ValueError, match="between 0 and 1"):
        Dropout(p)


def test_the_module_is_an_nn_dropout_with_the_functional_mask():
    """Invariant: Dropout(p) in training is dropout(x, p) under the same seed; it is still an nn.Dropout (code that
    finds dropout modules by type keeps working) with p in its repr."""
    module = Dropout(0.25)
    x = torch.randn(8, 9)
    torch.manual_seed(4)
    out = module(x)
    torch.manual_seed(4)
    assert torch.equal(out, dropout(x, 0.25))
    assert isinstance(module, nn.Dropout) and "p=0.25" in repr(module)


def test_every_dropout_of_the_model_draws_the_library_mask():
    """Invariant: the embedding, sub-layer and feed-forward dropouts of a Transformer are transformer.dropout's."""
    cfg = TransformerConfig(arch="encoder-decoder", d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1,
                            d_ff=32, vocab_size=11, max_len=8, dropout=0.1)
    found = [type(m) for m in Transformer(cfg).modules() if isinstance(m, nn.Dropout)]
    assert len(found) == 1 + 2 + 3 + 2  # embeddings, encoder layer (2 sub-layers + FFN), decoder (3 + FFN)
    assert set(found) == {Dropout}


def test_a_tensor_on_another_device_gets_torch_dropout():
    """On a non-CPU device the function hands over to F.dropout and builds no CPU mask (meta: no data at all)."""
    x = torch.empty(4, 8, device="meta")
    assert dropout(x, 0.5).device.type == "meta"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_keep_rate_on_cuda():
    """Oracle: Bernoulli(1 - p) on CUDA too (F.dropout there), within 5 binomial standard deviations."""
    out = dropout(torch.ones(N, device="cuda"), 0.1)
    assert abs((out != 0).double().mean().item() - 0.9) < binomial_tolerance(0.9, N)
