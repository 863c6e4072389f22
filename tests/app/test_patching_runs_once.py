"""One patching click runs each input of the pair once (issue 41, item 2): the grids click (the residual stream and
the heads grid) and the head click (direct logit attribution, path patching both ways) each run the clean and the
corrupted input once, unpatched, plus only the patched forwards their methods need (a batch of patched copies per
`rows_per_batch` cells; path patching's step 1 per sender). Counted on the shipped induction model (decoder-only)
and the translation model (encoder-decoder: its position is where the runs' top tokens first differ)."""
from __future__ import annotations

import math

import pytest

from tabs.attention.patching import grids_on_gpu, head_on_gpu
from store.catalogue import ModelRef
from tests.call_counts import forwards
from transformer.heads import AttentionKind
from transformer.interpretability.activation_patching import rows_per_batch
from transformer.interpretability.patching_demos import induction_texts
from transformer.interpretability.patching_runs import minimal_pair
from transformer.interpretability.path_patching import receivers


def _inputs(name: str, clean: str, corrupted: str, target: str | None = None):
    model, tok, _ = ModelRef(name).load()
    from transformer.encoding import source_ids, target_tokens

    if model.config.is_encoder_decoder:
        a, b = source_ids(tok, clean, model.config), source_ids(tok, corrupted, model.config)
        return model, (tuple(a), tuple(b), tuple(target_tokens(tok, target)))
    return model, (tuple(tok.encode(clean)), tuple(tok.encode(corrupted)), None)


def batches(cells: int, size: int) -> int:
    return math.ceil(cells / size)


def test_the_grids_click_runs_the_pair_once():
    """induction: 2 unpatched forwards (the pair) + the residual grid's and the heads grid's patched batches; it
    was 6 unpatched (the metric's default answers ran the pair, and each grid ran it again)."""
    clean, corrupted = induction_texts()
    model, (a, b, target) = _inputs("induction", clean, corrupted)
    pair = minimal_pair(model, list(a), list(b))
    size, T, L, H = rows_per_batch(model, pair), len(a), model.config.n_decoder_layers, model.config.n_heads
    with forwards() as calls:
        out = grids_on_gpu(ModelRef("induction"), a, b, target, "", "", -1, "decoder self")
    assert "refused" not in out, out
    assert calls.count("unpatched") == 2, calls
    assert 0 < calls.count("patched") <= batches(L * T, size) + batches(L * H, size), calls


@pytest.mark.parametrize("name, kind, layer", [("induction", "decoder self", 1), ("translate-en-es", "cross", 2)])
def test_the_head_click_runs_the_pair_once(name, kind, layer):
    """Direct logit attribution and path patching both ways of one head: 2 unpatched forwards of the pair; every
    other forward is path patching's own, patched (a step-1 run per sender, the patched receivers' batches). It was
    7 or 8 unpatched: the metric's default answers, the attribution and each direction ran the pair again."""
    if name == "induction":
        clean, corrupted = induction_texts()
        model, (a, b, target) = _inputs(name, clean, corrupted)
    else:
        from tabs.demo_list import VERSE, VERSE_CHANGED
        from transformer.generate import generate_text

        model, tok, _ = ModelRef(name).load()
        model, (a, b, target) = _inputs(name, VERSE, VERSE_CHANGED, generate_text(model, tok, VERSE, 40))
    cfg, kind_ = model.config, AttentionKind.parse(kind)
    senders = sum(cfg.n_heads for k in AttentionKind.of(cfg) for i in range(k.n_layers(cfg))
                  if (kind_, layer) in {(rk, ri) for rk, ri, _ in receivers(model, k, i)})
    as_sender = 1 if receivers(model, kind_, layer) else 0  # the head's own step 1, when any head reads it
    with forwards() as calls:
        out = head_on_gpu(ModelRef(name), a, b, target, "", "", -1, kind, layer, 0)
    assert "refused" not in out, out
    assert calls.count("unpatched") == 2, calls
    assert calls.count("patched") >= senders + as_sender, (calls, senders)  # path patching's own step-1 runs
    assert not isinstance(out["dla"], str) or "pre-norm" in out["dla"], out["dla"]
