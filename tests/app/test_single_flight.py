"""A class pressing one demo at once costs one computation (issue 39, item 6): N sessions run the page's "Show
attention" (tabs.attention.page.compute_and_draw: the record, then the head it opens drawn) on one input at the same
moment, each in its own thread as gradio runs them; the model runs one forward pass and the heatmap is built once,
and every session gets the same record and the same figure.

Regression: the shipped records were kept in a functools.lru_cache and the figures in store.record_cache's
RecordCache, both filled when a computation ended; every request that missed them while the first was computing
computed again (bench/class_load.py --cold: 3 records and 3 forward passes for 30 identical requests, as many as the
address's requests that ran at once). Oracle: the calls counted, and the objects' identity."""
from __future__ import annotations

import threading
import time

import pytest

from tests.conftest import page_call

STUDENTS = 8
SLOW_S = 0.3  # each counted computation lasts this long, so that the sessions ask while it runs


def slowed(counts: dict, name: str, fn):
    """fn, counted in counts[name] and lasting at least SLOW_S."""
    lock = threading.Lock()

    def counted(*args, **kwargs):
        with lock:
            counts[name] += 1
        time.sleep(SLOW_S)
        return fn(*args, **kwargs)
    return counted


def press_at_once(fn, n: int) -> list:
    """fn(i) in n threads let go together; their results (an exception is re-raised here)."""
    results, barrier = [None] * n, threading.Barrier(n)

    def one(i):
        barrier.wait()
        try:
            results[i] = fn(i)
        except BaseException as e:  # noqa: BLE001  (re-raised below)
            results[i] = e

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return results


@pytest.mark.parametrize("ckpt", ["reverse", "translate-en-es"])
def test_identical_show_attentions_at_once_cost_one_forward_pass_and_one_figure(monkeypatch, ckpt):
    import visualize as viz
    from tabs.attention import page, record
    from transformer.model import Transformer

    counts = {"forward": 0, "heatmap": 0}
    monkeypatch.setattr(Transformer, "forward", slowed(counts, "forward", Transformer.forward))
    monkeypatch.setattr(viz, "head_heatmap", slowed(counts, "heatmap", viz.head_heatmap))
    record.SHARED_RECORDS.clear()  # nobody has drawn this input yet
    text, target = ("flight", "") if ckpt == "reverse" else ("The light was good.", "La luz era buena.")

    def show(i):
        return page.compute_and_draw(ckpt, text, target, None, "entropy", "weights", False, 1280,
                                     request=page_call(f"student{i}", session=f"s{i}page"))

    answers = press_at_once(show, STUDENTS)
    records = {id(a.opened.record) for a in answers}  # each session's record (its gr.State)
    heatmaps = {id(a.figures.one) for a in answers}  # the one-head heatmap, as gr.Plot sends it
    assert counts == {"forward": 1, "heatmap": 1}, f"{STUDENTS} identical requests at once cost {counts}"
    assert len(records) == 1 and len(heatmaps) == 1
    assert answers[0].figures.one is not None


def test_a_computation_that_fails_fails_for_every_waiter_and_is_not_kept():
    """The sessions waiting for a computation get its error (in words: a UserError, as the first does), and the
    next request computes again."""
    from store.record_cache import SharedValues

    values, calls = SharedValues(4), []

    def failing():
        calls.append(1)
        time.sleep(SLOW_S)
        raise ValueError("the checkpoint is broken")

    def ask(i):
        try:
            return values.get("key", failing)
        except ValueError as e:
            return str(e)

    assert press_at_once(ask, STUDENTS) == ["the checkpoint is broken"] * STUDENTS
    assert len(calls) == 1 and len(values) == 0
    assert values.get("key", lambda: "computed") == "computed" and len(values) == 1
