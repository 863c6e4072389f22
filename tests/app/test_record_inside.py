"""A record's q, k and v are kept beside it, not in it (issue 41 item 2's follow-up; issue 37 item 4: memory held
per session bounded in total). Every session's gr.State holds its last record and the shipped records are kept by
count, so a record holds its patterns only; the value-weighted norms and the Q.K steps read the q, k and v of one
more pass (tabs.attention.record.inside_of), made for the first of those views and kept by model and input in a
byte-bounded cache (INSIDES): every later view of the same input, in any session, runs no forward pass.

Regression: on 47e006b a 64-token record held its q, k and v (translate-en-es 2.8 MB against 0.67 MB of patterns;
PYTHONPATH=. python bench/record_bytes.py prints both), and its first view ran no pass. Oracle: the library's own
fresh computation (record_inside, value_weighted_norms, qk_step) on the same record."""
from __future__ import annotations

import pytest
import torch

from limits import RECORD_CACHE_BYTES, VIEWS_KEPT
from store.catalogue import ModelRef
from store.record_cache import RecordCache, SharedValues, held_bytes
from tabs.attention import inside as inside_tab, record as record_tab, views
from tests.call_counts import forwards
from transformer import Transformer, TransformerConfig
from transformer.heads import AttentionKind
from transformer.interpretability.probe import qk_step, record_ids, record_inside
from transformer.interpretability.value_norms import value_weighted_norms
from transformer.tokenization import CharTokenizer

CASES = [("shakespeare-char", "To be, or not to be, that is the question: whether 'tis nobler in the mind", ""),
         ("translate-en-es", "In the beginning God created the heaven and the earth.",
          "En el principio creó Dios los cielos y la tierra.")]


@pytest.fixture
def empty_caches(monkeypatch):
    """Fresh caches for the records, their views and their insides (other tests of the process fill them)."""
    monkeypatch.setattr(record_tab, "SHARED_RECORDS", SharedValues(4))
    monkeypatch.setattr(record_tab, "INSIDES", SharedValues(VIEWS_KEPT, RECORD_CACHE_BYTES))
    monkeypatch.setattr(views, "VIEWS", RecordCache(VIEWS_KEPT))


@pytest.mark.parametrize("name, text, target", CASES, ids=[name for name, _, _ in CASES])
def test_a_records_views_run_one_pass_between_them(name, text, target, empty_caches):
    """Show attention: 1 forward; the first view (one kind's norms): +1; every later view: 0 (the other kinds'
    norms, Q.K steps of the first and last layer's heads, and the norms of another record of the same input, as a
    pretrained model's or another session's would be). The record holds its patterns and labels only, the inside
    more than twice that; the norms and steps equal the library's fresh computation exactly."""
    with forwards() as made:
        record = record_tab.attention_record(name, text, target, "")
    other = record_tab.record_on_gpu(ModelRef(name), text, target)  # the same input, another record object
    kinds = record.kinds
    with forwards() as first:
        norms = views.kind_norms(record, kinds[-1], name)
    with forwards() as later:
        by_kind = {kind: views.kind_norms(record, kind, name) for kind in kinds}
        shown = [inside_tab.draw_qk(name, record, kind, layer, head, query)
                 for kind in kinds for layer in (0, record.patterns[kind].shape[0] - 1) for head in (0, 1)
                 for query in (0, len(record.patterns[kind].query_tokens) - 1)]
        again = views.kind_norms(other, kinds[0], name)
    assert (made, first, later) == (["unpatched"], ["unpatched"], []) and len(shown) == 8 * len(kinds)

    model, _, _ = ModelRef(name).load()
    inside = record_inside(model, record)
    kept = record_tab.inside_of(record, ModelRef(name))
    assert held_bytes(record) - held_bytes(record.patterns) < 16 << 10  # ids, notices: no q, k, v
    assert held_bytes(kept) > 2 * held_bytes(record) and record_tab.INSIDES.bytes == held_bytes(kept)
    assert kept.keys() == inside.keys() and all(torch.equal(kept[n], inside[n]) for n in inside)
    assert torch.equal(norms.norms, value_weighted_norms(model, record, inside, kinds[-1]).norms)
    assert torch.equal(again.norms, by_kind[kinds[0]].norms)
    last = record.patterns[kinds[-1]].shape[0] - 1
    step = qk_step(model, record, inside, kinds[-1], last, 1, 0)
    assert torch.equal(qk_step(model, record, kept, kinds[-1], last, 1, 0).weights, step.weights)


def test_two_models_of_one_name_and_input_each_get_their_own(empty_caches):
    """Browsers' own models share names ("my reverse model #1"): the cache keys a browser's model by the model
    itself, so two models given the same ids each get the q, k and v of their own pass, one pass each."""
    tok = CharTokenizer.from_text("abcdefgh ")
    cfg = TransformerConfig(arch="decoder-only", vocab_size=tok.vocab_size, d_model=16, n_heads=2, d_ff=32,
                            dropout=0.0, max_len=16, n_decoder_layers=1, n_encoder_layers=0)
    torch.manual_seed(0)
    a, b = Transformer(cfg).eval(), Transformer(cfg).eval()
    record = record_ids(a, tok, tok.encode("abc abc"))
    refs = [ModelRef("my model", (m, tok, {})) for m in (a, b)]
    with forwards() as calls:
        kept = [record_tab.inside_of(record, ref) for ref in refs + refs]
    assert calls == ["unpatched"] * 2 and kept[2] is kept[0] and kept[3] is kept[1]
    for model, inside in zip((a, b), kept):
        fresh = record_inside(model, record)
        assert all(torch.equal(inside[n], fresh[n]) for n in fresh)
    q = AttentionKind.DECODER_SELF.point(0, "q")
    assert not torch.equal(kept[0][q], kept[1][q])
