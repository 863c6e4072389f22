"""Direct logit attribution on an RMSNorm model (the Llama family: SmolLM2) against TransformerLens.

The oracle is TransformerLens 4's `direct_logit_attribution(unit="head")` on its `TransformerBridge` over
`transformers`' LlamaForCausalLM loaded from a small random Llama saved in the Hugging Face layout
(tests/hf_models.py: GQA, SwiGLU, RoPE, tied embeddings, norm gains around 1 with std 0.2), with the norms folded
(compatibility mode); ours loads the same files through `load_pretrained`. RMSNorm neither centres nor shifts: a
LayerNorm formula (subtracting the mean, adding a bias) gives other numbers here. No network.
"""
from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers")
pytest.importorskip("transformer_lens")

from tests.hf_models import build_tiny_llama  # noqa: E402
from transformer.interpretability.logit_attribution import direct_logit_attribution  # noqa: E402
from transformer.interpretability.patching_metric import logit_difference  # noqa: E402
from transformer.interpretability.patching_runs import minimal_pair  # noqa: E402
from transformer.norms import RMSNorm  # noqa: E402
from transformer.pretrained import load_pretrained  # noqa: E402

TOL = 1e-4


@pytest.fixture(scope="module")
def tiny_llama_dir(tmp_path_factory):
    return build_tiny_llama(tmp_path_factory.mktemp("tiny-llama"))


def test_direct_logit_attribution_on_a_llama_equals_transformer_lens(tiny_llama_dir):
    """Oracle: each head's direct contribution to a logit difference on a random Llama equals TransformerLens's to
    1e-4, and our terms sum to the model's own logit difference (the final RMSNorm's scale frozen)."""
    from transformer_lens.model_bridge import TransformerBridge
    from transformer_lens.tools.analysis.direct_logit_attribution import direct_logit_attribution as tl_dla

    ours, _, _ = load_pretrained(tiny_llama_dir, device="cpu")
    assert isinstance(ours.decoder_norm, RMSNorm) and ours.config.norm_first
    hf = transformers.LlamaForCausalLM.from_pretrained(tiny_llama_dir, attn_implementation="eager").eval()
    tl = TransformerBridge.boot_transformers(str(tiny_llama_dir), hf_model=hf, device="cpu")
    tl.enable_compatibility_mode()  # folds the norms, as its direct_logit_attribution requires
    tl.eval()

    g = torch.Generator().manual_seed(0)
    clean = torch.randint(1, ours.config.vocab_size, (1, 10), generator=g)
    corrupted = clean.clone()
    corrupted[0, 2:5] = torch.randint(1, ours.config.vocab_size, (3,), generator=g)
    pair = minimal_pair(ours, clean[0].tolist(), corrupted[0].tolist())
    with torch.no_grad():
        top2 = ours(clean).logits[0, -1].topk(2).indices.tolist()  # the clean run's two likeliest next tokens
    metric = logit_difference(ours, pair, answer=top2[0], other=top2[1])
    ours_dla = direct_logit_attribution(ours, pair, metric)
    assert ours_dla.total() == pytest.approx(ours_dla.logit_difference, abs=1e-4)

    theirs = tl_dla(tl, clean, answer_tokens=metric.answer, incorrect_tokens=metric.other, unit="head")
    L, H = ours.config.n_decoder_layers, ours.config.n_heads
    assert theirs.labels[:L * H] == [f"L{i}H{h}" for i in range(L) for h in range(H)]
    heads = ours_dla.heads["decoder self"]
    assert float(heads.abs().max()) > 0.05  # heads that write something: a zero grid would not pass by chance
    torch.testing.assert_close(heads.float(), theirs.attribution.flatten()[:L * H].view(L, H).float(),
                               atol=TOL, rtol=0)
