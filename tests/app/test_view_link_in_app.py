"""Opening a link runs the Attention tab's own computation (issue 29): the link made from a drawn view, opened as the
page's load opens it (tabs.attention.link.open_link with the query in gr.Request.query_params), then computed and
drawn by the handlers "Show attention" uses, gives the same record and the same figures as computing the view
directly (oracle: the direct computation, figure JSON compared whole). A stale link opens the app with a sentence
per ignored part; a browser's own model has no link. Handlers called directly, no server."""
from __future__ import annotations

import json
from types import SimpleNamespace
from urllib.parse import parse_qsl

import pytest

from store.catalogue import USER_MODELS, shipped_model
from tabs.attention.link import SECTIONS, link_query, open_link, vocabulary
from tabs.attention.page import SCORES, compute_attention, draw_cached, draw_view
from tests.conftest import page_call

KEY = "0123456789abcdef0123456789ab0029"  # a browser's key, in its page's cookie (store.sessions.browser_key)
TABS = ("generate", "attention", "positional", "train", "model")
VOCAB = vocabulary(TABS, SCORES)


def opening(query: str, key: str = "fedcba9876543210fedcba9876543210"):
    """A page load's request, of another browser, with the link's query parameters."""
    request = page_call(key, session="s1link")
    request.query_params = dict(parse_qsl(query.lstrip("?"), keep_blank_values=True))
    return request


def value(update, default):
    """What an update of open_link sets (a plain value, or gr.update's "value"), or `default` when it keeps it."""
    if isinstance(update, dict):
        return update.get("value", default)
    return update


def plots(figures) -> list:
    return [json.loads(f.plot) if hasattr(f, "plot") else f for f in figures[:3]]


@pytest.mark.parametrize("ckpt, text, target, kind, layer, head, cells, words, score", [
    ("reverse", "transformer", "", "cross", 1, 2, "value-weighted norms", False, "entropy"),
    ("translate-en-es", "The disciples were filled with joy.", "Los discípulos estaban llenos de gozo.",
     "decoder self", 3, 1, "weights", True, "previous token"),
])
def test_a_link_opens_the_same_record_and_figures_as_computing_directly(ckpt, text, target, kind, layer, head, cells,
                                                                        words, score):
    request = page_call(KEY)
    *_, made_by, given, _, record = compute_attention(ckpt, text, target, request=request)
    direct = draw_cached(record, kind, layer, head, score, cells, words, made_by, None, request=request)
    query = link_query(VOCAB, made_by, given, record, kind, layer, head, cells, words, score, "lens,qk")
    assert query.startswith("?tab=attention&") and "open=qk,lens" in query

    other = opening(query)  # another browser, opening the page with the link
    tab, ckpt_, text_, target_, cells_, words_, score_, focus, note, opens = open_link(VOCAB, "reverse", other)
    assert note == {"__type__": "update", "value": "", "visible": False}
    assert opens == "qk,lens" and tab.selected == "attention"
    *_, made_by2, given2, view2, record2 = compute_attention(value(ckpt_, "reverse"), text_, target_, focus,
                                                             request=other)
    assert (made_by2, given2, view2) == (ckpt, (text, target), (kind, layer, head))
    assert record2.patterns[kind].weights.equal(record.patterns[kind].weights)
    shown = (value(cells_, None), value(words_, None), made_by2, None)
    assert plots(draw_view(record2, view2, value(score_, None), *shown, request=other)) == plots(direct)


def test_a_stale_link_opens_the_model_and_says_what_it_ignored():
    """reverse has 2 layers of 4 heads: head 5.2 is ignored in words, the rest of the link opens (its input, its
    kind), and the tab opens that kind on the head it picks for a new input."""
    query = "?tab=attention&ckpt=reverse&text=stale&kind=decoder%20self&layer=5&head=2&words=maybe&open=qk,vault"
    tab, ckpt, text, target, cells, words, score, focus, note, opens = open_link(VOCAB, "sort", opening(query))
    assert note["visible"] is True
    note = note["value"]
    assert (ckpt, text, target, opens) == ("reverse", "stale", "", "qk")
    assert ("The link's head decoder self 5.2 was ignored: this model's decoder self attention has 2 layers of 4 "
            "heads.") in note
    assert "The link's words 'maybe' was ignored" in note and "The link's section 'vault' was ignored" in note
    assert focus == ("reverse", "decoder self", None, None, None)
    *_, view, record = compute_attention(ckpt, text, target, focus, request=opening(query))
    assert view[0] == "decoder self" and view[1:] == record.patterns["decoder self"].sharpest_head()


def test_a_page_without_a_link_is_left_as_it_is():
    updates = open_link(VOCAB, "reverse", opening("?__theme=dark"))
    assert all(u == {"__type__": "update"} for u in updates[:8])
    assert updates[8:] == ({"__type__": "update", "value": "", "visible": False}, "")


def test_a_view_of_a_browsers_own_model_has_no_link():
    """A model trained in this browser lives with it: no other browser could open the link, so none is made, and a
    link naming one is ignored in words."""
    name = USER_MODELS.reserve(KEY, "reverse")
    USER_MODELS.put(KEY, name, *shipped_model("reverse")[:2], {"task": "reverse"})
    request = page_call(KEY)
    *_, made_by, given, _, record = compute_attention(name, "abc", "", request=request)
    with pytest.raises(Exception, match="trained in this browser: it stays with the browser that trained it"):
        link_query(VOCAB, made_by, given, record, "cross", 0, 0, "weights", False, "entropy", "")
    note = open_link(VOCAB, "reverse", opening(f"?tab=attention&ckpt={name}&text=abc"))[8]["value"]
    assert f"The link's checkpoint {name!r} was ignored" in note and "stays with the browser" in note


def test_the_sections_a_link_opens_are_the_pages_own():
    """Every section name a link may carry is an accordion of the Attention tab (its elem_id in the page)."""
    import app

    config = app.build_demo().get_config_file()
    ids = {c["props"].get("elem_id") for c in config["components"] if c["type"] == "accordion"}
    assert set(SECTIONS.values()) <= ids
    assert VOCAB.sections == tuple(SECTIONS)
