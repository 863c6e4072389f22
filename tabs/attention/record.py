"""The attention record of an input (every pattern of one forward pass): computed on the GPU when there is one, and
shared by everyone for the shipped checkpoints. The Attention tab's page and its two-inputs section both read it.

A class presses one demo at once: the requests for one input of a shipped or pretrained checkpoint made while its
record is computed wait for that one computation (store.record_cache.SingleFlight), so N identical requests cost one
forward pass, not one per request that found no record yet (tests/app/test_single_flight.py)."""
from __future__ import annotations

from transformer.interpretability.probe import record_attention

from checks import check_text
from limits import ATTENTION_CAP, SHIPPED_RECORDS
from store.catalogue import SHIPPED, ModelRef, model_ref
from store.record_cache import SharedValues, SingleFlight
from store.gpu import gpu
from widgets.errors import handler


@gpu(duration=10)
@handler
def record_on_gpu(source: ModelRef, text: str, target: str):
    """The one forward pass of a heatmap: every attention pattern of the input (on the CPU, ready to draw)."""
    model, tok, _ = source.load()
    return record_attention(model, tok, text, target or None, max_tokens=ATTENTION_CAP)


SHARED_RECORDS = SharedValues(SHIPPED_RECORDS)  # the shipped checkpoints' records, kept for everyone
PRETRAINED_FLIGHTS = SingleFlight()  # a pretrained model's records: one computation for the requests meanwhile (a
#                                      GPT-2 record is 9 MiB: not kept, store.record_cache's caches keep what it draws)


def _shipped_record(ckpt: str, text: str, target: str):
    """A class sends the same few inputs: the attention of a shipped checkpoint is computed once for everyone
    (records are never modified after they are made)."""
    return SHARED_RECORDS.get((ckpt, text, target), lambda: record_on_gpu(ModelRef(ckpt), text, target))


def attention_record(ckpt, text, target, key):
    """The attention record of an input, from the shared cache for shipped checkpoints."""
    text = check_text(text)
    target = check_text(target, "target") if target else ""
    source = model_ref(ckpt, key)
    if ckpt in SHIPPED:
        return _shipped_record(ckpt, text, target)
    if source.trained is None:  # a pretrained model: the same for every browser
        return PRETRAINED_FLIGHTS.run((ckpt, text, target), lambda: record_on_gpu(source, text, target))
    return record_on_gpu(source, text, target)
