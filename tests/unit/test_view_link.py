"""The link to a view (store.view_link): state -> link -> state is the identity (invariant, on views that use every
field and every character class a link must carry), and every bad field of an untrusted link is refused in words
and left out, the rest of the view kept (oracle: hand-written bad links, each with the part the sentence names).
Parsed as a browser sends the query (urllib's parse_qsl, as starlette's query_params)."""
from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import pytest

from checks import UserError
from limits import LINK_CHARS, MAX_PROMPT_CHARS
from store.view_link import View, Vocabulary, fit_to_input, fit_to_model, from_query, to_query

VOCAB = Vocabulary(checkpoints=("reverse", "translate-en-es", "gpt2 (pretrained)"),
                   tabs=("generate", "attention", "positional", "train", "model"),
                   sections=("qk", "rollout", "lens", "two", "patch"), scores=("entropy", "anti-diagonal", "induction"))
FULL = View(tab="attention", ckpt="translate-en-es", text="The disciples were filled with joy & the Holy Spirit?#",
            target="Y los discípulos estaban llenos de gozo, y del Espíritu Santo.",
            text_b="The disciples were filled with sorrow & the Holy Spirit?#", kind="cross", layer=2, head=3,
            cells="value-weighted norms", words=True, score="anti-diagonal", query=7, lens_position=0,
            sections=("qk", "lens", "two", "patch"), answer=" los", other=" las", patch_position=-1)


def spoiled(query: str, change: dict) -> tuple[View, list[str]]:
    """The view of `query` with the parameters of `change` changed (None: left out), as the page's load reads it."""
    params = dict(parse_qsl(query.lstrip("?"), keep_blank_values=True))
    for key, value in change.items():
        if value is None:
            params.pop(key)
        else:
            params[key] = value
    return from_query(params, VOCAB)


def opened(query: str) -> tuple[View, list[str]]:
    """The view a browser opening `query` gets, as the page's load reads it."""
    return from_query(dict(parse_qsl(urlsplit(query).query, keep_blank_values=True)), VOCAB)


@pytest.mark.parametrize("view", [
    FULL,
    View(tab="attention", ckpt="reverse", text="attention", kind="decoder self", layer=0, head=0, cells="weights",
         words=False, score="entropy"),
    View(tab="attention", ckpt="gpt2 (pretrained)", text="a+b=c; 100% sure/not?\n\tnext line 日本語 🙂 %20 &amp;"),
    View(tab="positional"),
    View(tab="attention", ckpt="reverse", text="x" * MAX_PROMPT_CHARS),
    View(tab="attention", ckpt="reverse", text="attention", text_b="attentive\n日本語 🙂 %20&b=1", query=0,
         lens_position=12, sections=("two",)),
    View(tab="generate", ckpt="translate-en-es", prompt="In the beginning & the end?#", decoding="sample",
         temperature=0.85, top_k=40, top_p=0.9, num_beams=1, max_new_tokens=400, seed=2**31 - 1),
    View(tab="generate", ckpt="reverse", prompt="abc", decoding="beam", temperature=0, top_k=0, top_p=1,
         num_beams=8, max_new_tokens=1, seed=-1),
])
def test_a_view_comes_back_from_its_link_unchanged(view):
    query = to_query(view, VOCAB)
    assert query.startswith("?")
    assert opened(query) == (view, [])


def test_the_link_is_readable_and_has_no_server_path():
    """What a teacher sees in a slide: key=value in the page's order, spaces as %20, sections comma-separated."""
    query = to_query(View(tab="attention", ckpt="reverse", text="to be", kind="cross", layer=1, head=2,
                          sections=("lens", "qk")), VOCAB)
    assert query == "?tab=attention&ckpt=reverse&text=to%20be&kind=cross&layer=1&head=2&open=qk,lens"
    assert "/" not in query


def test_a_model_trained_in_a_browser_has_no_link():
    with pytest.raises(UserError, match="trained in this browser.*no other browser"):
        to_query(View(tab="attention", ckpt="my reverse model #1", text="abc"), VOCAB)


@pytest.mark.parametrize("view, says", [
    (View(tab="attention", ckpt="reverse", text=""), "empty"),
    (View(tab="attention", ckpt="reverse", text="x" * (MAX_PROMPT_CHARS + 1)), "limit here is 2,000"),
    (View(tab="attention", ckpt="reverse", text="ok", target="\ud800"), "lone surrogate"),
    (View(tab="Attention"), "tab must be one of"),
    (View(tab="attention", ckpt="reverse", text="ok", kind="cross", layer=1), "layer and head together"),
    (View(tab="attention", ckpt="reverse", text="ok", kind="cross", layer=-1, head=0), "whole numbers from 0"),
    (View(tab="attention", ckpt="reverse", text="ok", score="beauty"), "score must be one of"),
    (View(tab="attention", sections=("qk", "secret")), "sections must be among"),
    (View(tab="attention", ckpt="reverse", text="ok", text_b=""), "second input.*empty"),
    (View(tab="attention", ckpt="reverse", text="ok", query=-1), "query row must be a whole number"),
    (View(tab="attention", ckpt="reverse", text="ok", lens_position=True), "lens position must be a whole number"),
    (View(tab="attention", ckpt="reverse", text="ok", lens_position=1.0), "lens position must be a whole number"),
    (View(tab="attention", ckpt="reverse", text="ok", text_b="é" * MAX_PROMPT_CHARS, target="ñ" * MAX_PROMPT_CHARS),
     f"longer than {LINK_CHARS:,}"),
    (View(tab="generate", ckpt="reverse", prompt="ok", decoding="nucleus"), "decoding must be one of"),
    (View(tab="generate", ckpt="reverse", prompt="ok", temperature=2.5), "temperature must be between 0 and 2"),
    (View(tab="generate", ckpt="reverse", prompt="ok", num_beams=2.5), "num_beams must be a whole number"),
    (View(tab="generate", ckpt="reverse", prompt="ok", seed=True), "seed must be a number"),
    (View(tab="generate", ckpt="reverse", prompt="x" * (MAX_PROMPT_CHARS + 1)), "limit here is 2,000"),
    (View(tab="attention", ckpt="reverse", text="é" * MAX_PROMPT_CHARS, target="ñ" * MAX_PROMPT_CHARS),
     f"longer than {LINK_CHARS:,}"),
])
def test_a_view_a_link_cannot_carry_is_refused_in_words(view, says):
    with pytest.raises(UserError, match=says):
        to_query(view, VOCAB)


BASE = ("?tab=attention&ckpt=reverse&text=attention&text_b=attentive&kind=cross&layer=1&head=2&cells=weights&words=0"
        "&score=entropy&query=3&lens_position=4&open=two,lens")
GOOD = opened(BASE)[0]


@pytest.mark.parametrize("change, part, kept", [
    ({"ckpt": "/etc/passwd"}, "checkpoint '/etc/passwd'", dict(ckpt=None, text=None, text_b=None, kind=None,
                                                               layer=None, head=None, query=None, lens_position=None)),
    ({"ckpt": "my reverse model #1"}, "stays with the browser that trained it",
     dict(ckpt=None, text=None, text_b=None, kind=None, layer=None, head=None, query=None, lens_position=None)),
    ({"text": "x" * (MAX_PROMPT_CHARS + 1)}, "input", dict(text=None, text_b=None, query=None, lens_position=None)),
    ({"text_b": "x" * (MAX_PROMPT_CHARS + 1)}, "second input", dict(text_b=None)),
    ({"text_b": "/etc/passwd"}, None, dict(text_b="/etc/passwd")),  # text, compared as typed: never a path read
    ({"query": "3.0"}, "query row '3.0'", dict(query=None)),
    ({"query": "٣"}, "query row", dict(query=None)),
    ({"lens_position": "-1"}, "lens position '-1'", dict(lens_position=None)),
    ({"lens_position": "12345"}, "lens position", dict(lens_position=None)),
    ({"text": "ok", "target": "y" * (MAX_PROMPT_CHARS + 1)}, "target", dict(text="ok")),
    ({"tab": "admin"}, "tab 'admin'", dict(tab=None)),
    ({"kind": "self"}, "kind 'self'", dict(kind=None, layer=None, head=None)),
    ({"layer": "1.5"}, "layer '1.5' and head '2'", dict(layer=None, head=None)),
    ({"head": "٣"}, "whole numbers from 0", dict(layer=None, head=None)),
    ({"head": "-1"}, "whole numbers from 0", dict(layer=None, head=None)),
    ({"head": None}, "layer was ignored: a link opens a head by its layer and its head together",
     dict(layer=None, head=None)),
    ({"kind": None}, "with its kind of attention", dict(kind=None, layer=None, head=None)),
    ({"cells": "probabilities"}, "cells 'probabilities'", dict(cells=None)),
    ({"words": "yes"}, "words 'yes'", dict(words=None)),
    ({"score": "<script>"}, "score '<script>'", dict(score=None)),
    ({"open": "qk,../../etc"}, "section '../../etc'", dict(sections=("qk",))),
])
def test_each_bad_field_of_a_link_is_ignored_alone_and_said(change, part, kept):
    """Oracle: the good link with one field spoiled: that field (and what belongs to it) is left out, one sentence
    names it and says why, and every other field is the good link's."""
    view, ignored = spoiled(BASE, change)
    if part is None:
        assert ignored == []
    else:
        assert len(ignored) == 1 and part in ignored[0], ignored
        assert ignored[0].endswith(".")
    expected = {**GOOD.__dict__, **kept}
    assert view.__dict__ == expected


def test_a_page_opened_without_a_link_opens_as_usual():
    """gradio's own `__theme` and a host's parameters are not a link's: nothing is opened, nothing said."""
    assert from_query({"__theme": "dark", "logs": "container"}, VOCAB) == (View(), [])
    assert from_query(None, VOCAB) == (View(), [])
    assert View().is_empty and not GOOD.is_empty


def test_a_value_that_is_not_text_is_refused():
    view, ignored = from_query({"tab": "attention", "ckpt": ["reverse"]}, VOCAB)
    assert view == View(tab="attention") and ignored == ["The link's ckpt was ignored: it must be text."]


REVERSE = {"encoder self": (2, 4), "decoder self": (2, 4), "cross": (2, 4)}


@pytest.mark.parametrize("view, shapes, kept, says", [
    (GOOD, REVERSE, GOOD, None),
    (View(tab="attention", kind="cross", layer=2, head=0), REVERSE, View(tab="attention", kind="cross"),
     "head cross 2.0 was ignored: this model's cross attention has 2 layers of 4 heads"),
    (View(tab="attention", kind="cross", layer=0, head=4), REVERSE, View(tab="attention", kind="cross"),
     "head cross 0.4 was ignored"),
    (View(tab="attention", kind="cross", layer=0, head=0), {"decoder self": (1, 1)}, View(tab="attention"),
     "kind 'cross' was ignored: this model has decoder self attention only"),
    (View(tab="attention", kind="decoder self", layer=0, head=0), {"decoder self": (1, 1)},
     View(tab="attention", kind="decoder self", layer=0, head=0), None),
])
def test_the_head_is_checked_against_the_model(view, shapes, kept, says):
    """Oracle: the model's own counts of layers and heads per kind; a stale link (a head the model does not have)
    keeps its kind, a kind the model does not have goes with its head."""
    fitted, ignored = fit_to_model(view, shapes)
    assert fitted == kept
    assert (ignored == []) if says is None else (len(ignored) == 1 and says in ignored[0]), ignored


@pytest.mark.parametrize("rows, positions, kept, says", [
    (4, 5, dict(query=3, lens_position=4), []),
    (3, 5, dict(query=None, lens_position=4), ["query row 3 was ignored: this input has 3 rows (0 to 2)"]),
    (9, 2, dict(query=3, lens_position=None), ["lens position 4 was ignored: this input has 2 positions (0 to 1)"]),
])
def test_the_query_row_and_lens_position_are_checked_against_the_input(rows, positions, kept, says):
    """Oracle: the input's own counts (the heatmap's rows, the lens's columns), known once it is computed; a row
    past them is left out (the section opens where it would) and said, the rest of the view kept."""
    fitted, ignored = fit_to_input(GOOD, rows, positions)
    assert fitted.__dict__ == {**GOOD.__dict__, **kept}
    assert len(ignored) == len(says) and all(s in i for s, i in zip(says, ignored)), ignored


def test_the_link_to_a_generation_writes_its_numbers_as_typed():
    """What a teacher sees in a slide: the decoding controls in the tab's order, whole numbers as such (a seed of
    2**31 - 1 is not 2.14748e+09), a slider's 0.8500000000000001 as 0.85."""
    query = to_query(View(tab="generate", ckpt="reverse", prompt="to be", decoding="sample",
                          temperature=0.8500000000000001, top_k=0, top_p=1.0, num_beams=4.0, max_new_tokens=120,
                          seed=2**31 - 1), VOCAB)
    assert query == ("?tab=generate&ckpt=reverse&prompt=to%20be&decoding=sample&temperature=0.85&top_k=0&top_p=1"
                     "&num_beams=4&max_new_tokens=120&seed=2147483647")


GENERATION = "?tab=generate&ckpt=reverse&prompt=abc&decoding=sample&temperature=0.8&top_k=5&top_p=0.9&seed=7"


@pytest.mark.parametrize("change, part", [
    ({"decoding": "nucleus"}, "decoding 'nucleus'"),
    ({"temperature": "1e-3"}, "temperature '1e-3' was ignored: it is a number written in digits"),
    ({"temperature": "2.5"}, "temperature '2.5' was ignored: temperature must be between 0 and 2"),
    ({"top_k": "٣"}, "top_k '٣' was ignored: it is a number written in digits"),
    ({"top_p": " 0.5"}, "top_p ' 0.5'"),
    ({"top_p": "0"}, "top_p must be between 0.05 and 1"),
    ({"seed": "1.5"}, "seed must be a whole number"),
    ({"seed": "99999999999"}, "seed '99999999999'"),
    ({"prompt": ""}, None),  # no prompt: nothing to generate, the rest of the link opens
])
def test_each_bad_decoding_field_is_ignored_alone_and_said(change, part):
    """Oracle: the good link to a generation with one field spoiled: only that field is left out, said in one
    sentence (the Generate tab's own limits, limits.GENERATE, and its strategies)."""
    params = {**dict(parse_qsl(GENERATION[1:])), **change}
    view, ignored = from_query(params, VOCAB)
    good, _ = opened(GENERATION)
    if part is None:
        assert ignored == [] and view == good.__class__(**{**good.__dict__, "prompt": None})
        return
    assert len(ignored) == 1 and part in ignored[0], ignored
    name = next(iter(change))
    assert view.__dict__ == {**good.__dict__, {"decoding": "decoding"}.get(name, name): None}


PATCHED = ("?tab=attention&ckpt=reverse&text=attention&text_b=attentive&open=patch&answer=%20a&other=b"
           "&patch_position=3")


@pytest.mark.parametrize("change, says, kept", [
    ({}, [], dict(answer=" a", other="b", patch_position=3)),
    ({"text_b": None}, ["answer was ignored: it belongs to a second input", "other was ignored: it belongs",
                        "patch position was ignored: it belongs"], dict(text_b=None)),
    ({"text_b": "x" * (MAX_PROMPT_CHARS + 1)}, ["second input was ignored"], dict(text_b=None)),
    ({"text": "x" * (MAX_PROMPT_CHARS + 1)}, ["input was ignored"], dict(text=None, text_b=None)),
    ({"patch_position": "-2"}, ["patch position '-2' was ignored: it is -1 (automatic)"],
     dict(answer=" a", other="b")),
    ({"patch_position": "-1"}, [], dict(answer=" a", other="b", patch_position=-1)),
    ({"answer": "x" * (MAX_PROMPT_CHARS + 1)}, ["answer token was ignored"], dict(other="b", patch_position=3)),
])
def test_the_patching_sections_answers_and_position_go_with_the_second_input(change, says, kept):
    """Oracle: the patching section's answer tokens and position measure the pair: without a second input (none in
    the link, or one ignored with its input) they are ignored too, each said; a bad one alone is ignored alone."""
    view, ignored = spoiled(PATCHED, change)
    assert len(ignored) == len(says) and all(s in i for s, i in zip(says, ignored)), ignored
    fields = dict(text="attention", text_b="attentive", answer=None, other=None, patch_position=None)
    assert {name: getattr(view, name) for name in fields} == {**fields, **kept}
