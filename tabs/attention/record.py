"""The attention record of an input (every pattern of one forward pass): computed on the GPU when there is one, and
shared by everyone for the shipped checkpoints. The Attention tab's page and its two-inputs section both read it.

A class presses one demo at once: the requests for one input of a shipped or pretrained checkpoint made while its
record is computed wait for that one computation (store.record_cache.SingleFlight), so N identical requests cost one
forward pass, not one per request that found no record yet (tests/app/test_single_flight.py).

A record holds its patterns only. The q, k and v its value norms and Q.K steps read are one more pass
(`inside_of`), made when the first of those views of the record is asked, and kept by model and input in INSIDES,
bounded in bytes: every later view of the same input runs no pass while it is kept."""
from __future__ import annotations

from transformer.interpretability.probe import AttentionRecord, record_attention, record_inside

from checks import check_text
from limits import ATTENTION_CAP, RECORD_CACHE_BYTES, SHIPPED_RECORDS, VIEWS_KEPT
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
#                                      GPT-2 record is 2.3 MiB: not kept, store.record_cache's caches keep what it draws)
INSIDES = SharedValues(VIEWS_KEPT, RECORD_CACHE_BYTES)  # records' q, k and v, by (model, input ids, target ids): 2.1
#                                      MiB for a 64-token translate-en-es record, 7 MiB for GPT-2 small's


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


@gpu(duration=10)
@handler
def inside_on_gpu(source: ModelRef, record: AttentionRecord) -> dict:
    """transformer.interpretability.probe.record_inside: the q, k and v of the record's pass (on the CPU)."""
    model, _, _ = source.load()
    return record_inside(model, record)


def inside_of(record: AttentionRecord, source: ModelRef) -> dict:
    """The q, k and v of `record`'s pass by `source`'s model: one forward pass for the first view that asks, then
    INSIDES' copy for every view of the same model and input (whichever session's record it is)."""
    target = None if record.target_ids is None else tuple(record.target_ids)
    key = (source.identity(), tuple(record.input_ids), target)
    return INSIDES.get(key, lambda: inside_on_gpu(source, record))
