"""One "Show attention" on the translation demo computes each view of the record once (issue 26, item 5): the
handlers the page calls for it (tests/browser/test_translation_demo.py counts the calls) are run here in the page's
order, with the library functions that make the views counted. Before the memo (tabs.attention.views.VIEWS), one
click merged the verse into words 10 times, found its verse 5 times, made its word weights 5 times, its AER 4 times
and scored heads 5 times (in the browser, where the checkpoint's change computed the record a second time, twice
that).
Invariant: no computation is repeated on the same input (tests.call_counts: a repeat is a call whose argument has
the values of an earlier call's)."""
from __future__ import annotations

from tests.call_counts import counting
from tests.conftest import page_call


def test_one_show_attention_on_the_translation_demo_computes_each_view_once():
    from tabs.attention.page import compute_attention, draw_view
    from tabs.attention.record import SHARED_RECORDS
    from tabs.demos import DEMOS
    from transformer.interpretability.analysis import head_scores
    from transformer.interpretability.views import pattern_in_words
    from transformer.translation.gold import aer_per_head, cross_words, verse_of
    from widgets.figure_caption import caption_in

    demo = next(d for d in DEMOS if d.label == "Who reads whom?")
    request = page_call("memo")
    SHARED_RECORDS.clear()  # a record nobody has drawn yet: every view is computed in this click
    counted = (cross_words, verse_of, aer_per_head, head_scores, pattern_in_words)
    with counting(*counted) as calls:
        opened = compute_attention(demo.ckpt, demo.text, demo.target, (demo.ckpt, demo.kind, demo.score),
                                   request=request)
        made_by, view, record = opened.made_by, opened.view, opened.record
        shown = ("weights", demo.words, made_by)
        figures = draw_view(record, view, demo.score, *shown, 1280, request=request)
    assert all(f is not None for f in (figures.one, figures.grid, figures.overview, figures.table))
    assert caption_in(figures.one).startswith("Layer")
    names = {f"{fn.__module__.rsplit('.', 1)[-1]}.{fn.__qualname__}" for fn in counted}
    assert set(calls.total) == names, f"each view is computed on this click: {dict(calls.total)}"
    assert not +calls.repeats, (f"computed again on the same input: {dict(+calls.repeats)} "
                                f"(calls: {dict(calls.total)})")
    assert calls.total["gold.verse_of"] == calls.total["gold.cross_words"] == calls.total["gold.aer_per_head"] == 1
