"""Opening a link runs the Attention tab's own computation (issue 29): the link made from a drawn view, opened as the
page's load opens it (tabs.attention.link.open_link with the query in gr.Request.query_params), then computed and
drawn by the handlers "Show attention" uses, gives the same record and the same figures as computing the view
directly (oracle: the direct computation, figure JSON compared whole). A stale link opens the app with a sentence
per ignored part; a browser's own model has no link. Handlers called directly, no server."""
from __future__ import annotations

import dataclasses
import json
from types import SimpleNamespace
from urllib.parse import parse_qsl

import gradio as gr
import pytest

from store.catalogue import USER_MODELS, shipped_model
from tabs.attention.link import SECTIONS, compare_linked, link_query, open_link, rows_linked, vocabulary
from tabs.attention.page import SCORES, compute_attention, draw_cached, draw_view
from tabs.attention.two_inputs import Compared, compare_and_keep, draw_two
from tabs.generate import clear_generate, decoding_for, run_generate
from tabs.generate_link import generate_linked, generation_query
from tests.conftest import page_call
from visualize.text import markdown_text

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


def fields_of(answer) -> list:
    """An answer's fields' values, in its fields' order."""
    return [getattr(answer, field.name) for field in dataclasses.fields(answer)]


def plots(figures) -> list:
    """The first three figures of an answer (the Attention tab's Figures: one head, the layer's grid, the overview;
    the two inputs': A, B and the change per head)."""
    shown = fields_of(figures)[:3]
    return [json.loads(f.plot) if hasattr(f, "plot") else f for f in shown]


@pytest.mark.parametrize("ckpt, text, target, text_b, kind, layer, head, cells, words, score, row, position", [
    ("reverse", "transformer", "", "transformed", "cross", 1, 2, "value-weighted norms", False, "entropy", 4, 3),
    ("translate-en-es", "The disciples were filled with joy.", "Los discípulos estaban llenos de gozo.",
     "The disciples were filled with sorrow.", "decoder self", 3, 1, "weights", True, "previous token", 0, 5),
])
def test_a_link_opens_the_same_record_and_figures_as_computing_directly(ckpt, text, target, text_b, kind, layer,
                                                                        head, cells, words, score, row, position):
    """The second input's record and its two maps too (oracle: Compare's own computation on the first browser's
    record), the Q·K section's query row and the lens's position (the sliders' values)."""
    request = page_call(KEY)
    opened = compute_attention(ckpt, text, target, request=request)
    made_by, given, record = opened.made_by, opened.given, opened.record
    direct = draw_cached(record, kind, layer, head, score, cells, words, made_by, None, request=request)
    compared = compare_and_keep(made_by, record, text_b, request=request)
    record_b, given_b = compared.record_b, compared.given_b
    direct_two = draw_two(record, record_b, kind, layer, head, 1280, words, made_by, request=request)
    query = link_query(VOCAB, made_by, given, record, kind, layer, head, cells, words, score, "lens,qk,two", row,
                       position, given_b, record_b)
    assert query.startswith("?tab=attention&") and query.endswith(f"&query={row}&lens_position={position}"
                                                                  "&open=qk,lens,two")

    other = opening(query)  # another browser, opening the page with the link
    linked = open_link(VOCAB, "reverse", other)
    put, after = linked.attention, linked.after
    assert all(u == {"__type__": "update"} for u in fields_of(linked.generate))  # not a link to a generation: its
    #                                                                               tab is left
    assert linked.note == {"__type__": "update", "value": "", "visible": False}
    assert linked.opens == "qk,lens,two" and linked.tabs.selected == "attention"
    opened = compute_attention(value(linked.ckpt, "reverse"), put.text, put.target, put.focus, request=other)
    made_by2, given2, view2, record2 = opened.made_by, opened.given, opened.view, opened.record
    assert (made_by2, given2, view2) == (ckpt, (text, target), (kind, layer, head))
    assert record2.patterns[kind].weights.equal(record.patterns[kind].weights)
    shown = (value(put.cells, None), value(put.words, None), made_by2, None)
    assert plots(draw_view(record2, view2, value(put.score, None), *shown, request=other)) == plots(direct)
    assert after["text_b"] == text_b
    compared = compare_linked(made_by2, record2, after, request=other)
    record_b2, given_b2 = compared.record_b, compared.given_b
    assert given_b2 == text_b and record_b2.patterns[kind].weights.equal(record_b.patterns[kind].weights)
    two = draw_two(record2, record_b2, view2[0], layer, head, 1280, value(put.words, None), made_by2, request=other)
    assert plots(two) == plots(direct_two)
    rows = rows_linked(after, record2, view2[0], "")
    query_row, lens_position, note = rows.query, rows.lens_position, rows.note
    assert (query_row["value"], lens_position["value"], note) == (row, position, {"__type__": "update"})


def test_a_query_row_or_position_past_the_input_is_ignored_in_words():
    """Oracle: the input's own counts ("attention" through reverse: 10 decoder rows with <s>); the slider is left
    where the computation put it, and the note adds one sentence after what it said."""
    record = compute_attention("reverse", "attention", "", request=page_call(KEY)).record
    rows = len(record.patterns["cross"].query_tokens)
    linked = rows_linked({"query": rows, "lens_position": 0}, record, "cross", "Earlier.")
    query_row, lens_position, note = linked.query, linked.lens_position, linked.note
    assert query_row == {"__type__": "update"} and lens_position["value"] == 0
    assert note["visible"] and note["value"] == "Earlier. " + markdown_text(  # the note as the page has it, then
        f"The link's query row {rows} was ignored: this input has {rows} rows (0 to {rows - 1}).")  # text
    assert compare_linked("reverse", record, {"query": 1, "text_b": None}) == Compared(gr.skip(), gr.skip())  # no B


def test_a_stale_link_opens_the_model_and_says_what_it_ignored():
    """reverse has 2 layers of 4 heads: head 5.2 is ignored in words, the rest of the link opens (its input, its
    kind), and the tab opens that kind on the head it picks for a new input."""
    query = "?tab=attention&ckpt=reverse&text=stale&kind=decoder%20self&layer=5&head=2&words=maybe&open=qk,vault"
    linked = open_link(VOCAB, "sort", opening(query))
    ckpt, text, target, focus, opens = linked.ckpt, linked.attention.text, linked.attention.target, \
        linked.attention.focus, linked.opens
    assert linked.note["visible"] is True
    note = linked.note["value"]
    assert (ckpt, text, target, opens) == ("reverse", "stale", "", "qk")
    assert markdown_text("The link's head decoder self 5.2 was ignored: this model's decoder self attention has 2 "
                         "layers of 4 heads.") in note
    assert markdown_text("The link's words 'maybe' was ignored") in note
    assert markdown_text("The link's section 'vault' was ignored") in note
    assert focus == ("reverse", "decoder self", None, None, None)
    opened = compute_attention(ckpt, text, target, focus, request=opening(query))
    view, record = opened.view, opened.record
    assert view[0] == "decoder self" and view[1:] == record.patterns["decoder self"].sharpest_head()


def test_a_page_without_a_link_is_left_as_it_is():
    linked = open_link(VOCAB, "reverse", opening("?__theme=dark"))
    kept = [linked.tabs, linked.ckpt, *fields_of(linked.attention), *fields_of(linked.patch),
            *fields_of(linked.generate)]
    assert all(u == {"__type__": "update"} for u in kept)
    assert (linked.note, linked.opens, linked.after) == ({"__type__": "update", "value": "", "visible": False}, "",
                                                         None)


def test_a_view_of_a_browsers_own_model_has_no_link():
    """A model trained in this browser lives with it: no other browser could open the link, so none is made, and a
    link naming one is ignored in words."""
    name = USER_MODELS.reserve(KEY, "reverse")
    USER_MODELS.put(KEY, name, *shipped_model("reverse")[:2], {"task": "reverse"})
    request = page_call(KEY)
    opened = compute_attention(name, "abc", "", request=request)
    made_by, given, record = opened.made_by, opened.given, opened.record
    with pytest.raises(Exception, match="trained in this browser: it stays with the browser that trained it"):
        link_query(VOCAB, made_by, given, record, "cross", 0, 0, "weights", False, "entropy", "")
    note = open_link(VOCAB, "reverse", opening(f"?tab=attention&ckpt={name}&text=abc")).note["value"]
    assert markdown_text(f"The link's checkpoint {name!r} was ignored") in note
    assert markdown_text("stays with the browser") in note


def test_the_sections_a_link_opens_are_the_pages_own():
    """Every section name a link may carry is an accordion of the Attention tab (its elem_id in the page)."""
    import app

    config = app.build_demo().get_config_file()
    ids = {c["props"].get("elem_id") for c in config["components"] if c["type"] == "accordion"}
    assert set(SECTIONS.values()) <= ids
    assert VOCAB.sections == tuple(SECTIONS)


def test_a_link_to_a_generation_generates_the_same_output_in_another_browser():
    """Oracle: Generate's own run (tabs.generate.run_generate) in the first browser, with sampling at a fixed
    seed: the link made of the run on screen, opened by another browser, sets the same controls and its generation
    writes the same text and the same table of steps. A translation model opened by a link keeps the link's
    decoding (the tab would switch it to beam search)."""
    request = page_call(KEY)
    settings = ("sample", 0.9, 5, 0.95, 4, 12, 7)
    direct = list(run_generate("reverse", "attention", *settings, request=request))[-1]
    generated = clear_generate("reverse", "attention", *settings).generated
    query = generation_query(VOCAB, generated)
    assert query == ("?tab=generate&ckpt=reverse&prompt=attention&decoding=sample&temperature=0.9&top_k=5&top_p=0.95"
                     "&num_beams=4&max_new_tokens=12&seed=7")
    updates = open_link(VOCAB, "sort", opening(query))
    prompt, *controls, linked = fields_of(updates.generate)
    assert (updates.tabs.selected, updates.ckpt, prompt, tuple(controls), linked) == (
        "generate", "reverse", "attention", settings, True)
    *_, last = generate_linked(linked, updates.ckpt, prompt, *controls, request=opening(query))
    assert last.run.output == direct.output and last.run.table.equals(direct.table) and last.generated == generated
    skipped = list(generate_linked(False, "reverse", "attention", *settings))
    assert len(skipped) == 1 and all(u == gr.skip() for u in (*fields_of(skipped[0].run), skipped[0].generated))
    assert decoding_for("translate-en-es", True, request=request).strategy == gr.update()
    assert decoding_for("translate-en-es", False, request=request).strategy["value"] == "beam"
    with pytest.raises(Exception, match="press Generate first"):
        generation_query(VOCAB, None)


def test_a_link_carries_the_patching_sections_answers_and_position():
    """The patching section's boxes as they are (its answer tokens and position) while it is open with a second
    input; their defaults ("" and -1: each run's top token, the automatic position) are left out of the link."""
    request = page_call(KEY)
    opened = compute_attention("reverse", "attention", "", request=request)
    made_by, given, record = opened.made_by, opened.given, opened.record
    compared = compare_and_keep(made_by, record, "attentive", request=request)
    record_b, given_b = compared.record_b, compared.given_b
    view = (VOCAB, made_by, given, record, "cross", 1, 0, "weights", False, "entropy", "two,patch", 0, 0, given_b,
            record_b)
    query = link_query(*view, " n", "e", 2)
    assert "&text_b=attentive&" in query and query.endswith("&open=two,patch&answer=%20n&other=e&patch_position=2")
    assert fields_of(open_link(VOCAB, "sort", opening(query)).patch) == [" n", "e", 2]
    assert "answer" not in link_query(*view, "", "", -1) and "patch" not in link_query(*view[:10], "two", 0, 0,
                                                                                       given_b, record_b, " n")
