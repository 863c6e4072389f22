"""A link that opens exactly this view: the one mapping between a view of the app and the query string of its link
(`?tab=attention&ckpt=reverse&text=attention&kind=cross&layer=1&head=2&cells=weights&words=0&score=entropy`), with
the second input of "Two inputs side by side" and "What a head does" (`text_b`), the Q·K section's query row
(`query`), the logit lens's position (`lens_position`) and the patching section's answer tokens and position
(`answer`, `other`, `patch_position`) when the view has them; a view of the Generate tab
(`?tab=generate&ckpt=reverse&prompt=attention&decoding=sample&temperature=0.8&top_k=0&top_p=1&num_beams=4&
max_new_tokens=120&seed=7`) carries its prompt and decoding controls.

A link is read by whoever opens it, so its query is untrusted input, checked field by field as typed input is:
- the checkpoint only by name, from the list every browser sees (`Vocabulary.checkpoints`: the shipped and the
  cached pretrained ones). A model trained in the Train tab lives with the browser that trained it: no other
  browser can open it, so a view of one has no link, and a link naming one is ignored, said in words;
- the input, the target, the second input and the prompt through `checks.check_text` (the limits of a typed
  input); the decoding numbers through `checks.check_number` within the Generate tab's own limits
  (`limits.GENERATE`); the whole query at most `limits.LINK_CHARS`;
- the kind, layer and head against the model (`fit_to_model`, given the model's own counts), the query row and
  the lens's position against the input's own counts once it is computed (`fit_to_input`), the other switches
  against their owners' choices.
A field that fails is left out of the view, with one sentence saying which part of the link was ignored and why;
the app then opens as it would without it. A link never names a server path: only names from these lists, text,
and small numbers.

No gradio here: tabs/attention/link.py wires it to the page (the page's base URL comes from the browser).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from urllib.parse import quote, urlencode

from transformer.generate import STRATEGIES
from transformer.heads import HeadId
from transformer.interpretability.probe import KINDS
from transformer.interpretability.views import SHOW

from checks import UserError, check_number, check_text
from limits import GENERATE, LINK_CHARS

INDEX = re.compile(r"[0-9]{1,4}")  # a layer or head: ASCII digits only (int() would also read "٣", " 3", "+3")
WORDS = {"0": False, "1": True}
PATCH_POSITION = re.compile(r"-1|[0-9]{1,4}")  # the patching section's position: -1 is automatic
NUMBER = re.compile(r"-?[0-9]{1,10}(\.[0-9]{1,6})?")  # a decoding control: ASCII, no exponent, no "+", no spaces
DECODING = {"temperature": False, "top_k": True, "top_p": False, "num_beams": True, "max_new_tokens": True,
            "seed": True}  # the Generate tab's number controls (limits.GENERATE) -> whether whole


@dataclass(frozen=True)
class Vocabulary:
    """What a link may name, each list from its owner: the checkpoints every browser sees
    (store.catalogue.fixed_choices), the page's tab ids, its sections' link names, the overview's scores, the
    kinds of attention, what the cells show and the decoding strategies."""

    checkpoints: tuple[str, ...]
    tabs: tuple[str, ...]
    sections: tuple[str, ...] = ()
    scores: tuple[str, ...] = ()
    kinds: tuple[str, ...] = KINDS
    cells: tuple[str, ...] = SHOW
    strategies: tuple[str, ...] = STRATEGIES


@dataclass(frozen=True)
class View:
    """What a link opens. None (or empty) for a field the link does not set: the app opens it as usual."""

    tab: str | None = None
    ckpt: str | None = None
    text: str | None = None
    target: str = ""  # seq2seq: the target the decoder reads ("": the model's own output)
    text_b: str | None = None  # the second input, compared with the first (two inputs, patching)
    kind: str | None = None
    layer: int | None = None  # with `head`: the head opened (both or neither)
    head: int | None = None
    cells: str | None = None  # what the cells show: weights or value-weighted norms
    words: bool | None = None  # subword tokens merged into words
    score: str | None = None  # the overview's colour
    query: int | None = None  # the Q·K section's query (a row of the heatmap)
    lens_position: int | None = None  # the logit lens's position (a column of its grid) for its curve
    sections: tuple[str, ...] = ()  # the sections open, in the page's order
    prompt: str | None = None  # the Generate tab: its prompt and decoding controls
    decoding: str | None = None  # greedy, sample or beam
    temperature: float | None = None
    top_k: int | None = None
    top_p: float | None = None
    num_beams: int | None = None
    max_new_tokens: int | None = None
    seed: int | None = None
    answer: str | None = None  # the patching section: its answer token (None: the clean run's top token),
    other: str | None = None  # the other token (None: the corrupted run's top token),
    patch_position: int | None = None  # and the position measured (None or -1: automatic)

    @property
    def is_empty(self) -> bool:
        return self == View()


KEYS = {"tab": "tab", "ckpt": "ckpt", "text": "text", "target": "target", "text_b": "text_b", "kind": "kind",
        "layer": "layer", "head": "head", "cells": "cells", "words": "words", "score": "score", "query": "query",
        "lens_position": "lens_position", "sections": "open", "prompt": "prompt", "decoding": "decoding",
        **{name: name for name in DECODING}, "answer": "answer", "other": "other",
        "patch_position": "patch_position"}  # field -> key
PAIR = ("text_b", "answer", "other", "patch_position")  # what belongs to the second input
ROWS = {"query": "query row", "lens_position": "lens position"}  # the positions in the input a link may name


def to_query(view: View, vocab: Vocabulary) -> str:
    """The query string (from "?") of the link to `view`; fields left None are not written. A view the link could
    not carry gets a UserError saying why: a checkpoint no other browser has (a model trained in this browser), a
    field outside its choices, a text past the limits of typed input, a link too long."""
    if view.ckpt is not None and view.ckpt not in vocab.checkpoints:
        raise UserError(f"{view.ckpt[:80]!r} is a model trained in this browser: it stays with the browser that "
                        "trained it, so no other browser can open a link to it (links open the shipped and "
                        "pretrained checkpoints)")
    for name, choices in _choices(vocab).items():
        value = getattr(view, name)
        if value is not None and value not in choices:
            raise UserError(f"the link's {KEYS[name]} must be one of {', '.join(choices)}; got {str(value)[:40]!r}")
    if set(view.sections) - set(vocab.sections):
        raise UserError(f"the link's sections must be among {', '.join(vocab.sections)}")
    if (view.layer is None) != (view.head is None) or not all(map(_index, (view.layer, view.head))):
        raise UserError("a link opens a head by its layer and head together, whole numbers from 0")
    for name, what in ROWS.items():
        if not _index(getattr(view, name)):
            raise UserError(f"the link's {what} must be a whole number from 0")
    if view.text is not None:
        check_text(view.text)
    if view.target:
        check_text(view.target, "target")
    if view.text_b is not None:
        check_text(view.text_b, "second input")
    if view.prompt is not None:
        check_text(view.prompt, "prompt")
    for name in ("answer", "other"):
        if getattr(view, name) is not None:
            check_text(getattr(view, name), f"{name} token")
    if view.patch_position is not None and not PATCH_POSITION.fullmatch(str(view.patch_position)):
        raise UserError("the link's patch position must be a whole number from -1 (automatic) to 9999")
    for name, whole in DECODING.items():
        if getattr(view, name) is not None:
            check_number(getattr(view, name), f"the link's {name}", *GENERATE[name], integer=whole)
    values = {name: str(int(value)) if DECODING[name] else f"{round(value, 4):g}"  # a slider's 0.8500000000000001
              for name, value in ((n, getattr(view, n)) for n in DECODING) if value is not None}  # is 0.85
    values |= {"words": None if view.words is None else str(int(view.words)),
              "sections": ",".join(s for s in vocab.sections if s in view.sections) or None}
    pairs = [(KEYS[f.name], values.get(f.name, getattr(view, f.name))) for f in fields(View)]
    query = "?" + urlencode([(k, str(v)) for k, v in pairs if v is not None and v != ""], quote_via=quote, safe=",")
    if len(query) > LINK_CHARS:
        raise UserError(f"the link to this view would be {len(query):,} characters long; links longer than "
                        f"{LINK_CHARS:,} are cut by proxies and chat apps: shorten the input")
    return query


def _index(value) -> bool:
    """Whether `value` is None or a whole number from 0 (a layer, a head, a row): not a bool, not a float."""
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0)


def _choices(vocab: Vocabulary) -> dict[str, tuple[str, ...]]:
    """The fields a link names from a list: field -> its choices."""
    return {"tab": vocab.tabs, "ckpt": vocab.checkpoints, "kind": vocab.kinds, "cells": vocab.cells,
            "score": vocab.scores, "decoding": vocab.strategies}


def from_query(params, vocab: Vocabulary) -> tuple[View, list[str]]:
    """(the view of a link's query parameters `params` ({key: text}), one sentence per part of it ignored).

    Each field is checked alone; one that fails is left out (None) and said why. The input, target, kind, layer
    and head belong to the checkpoint: an ignored checkpoint takes them with it, an ignored input its target.
    Keys that are not a link's (gradio's `__theme`, a host's own) are left alone."""
    if not hasattr(params, "get"):
        return View(), []
    got = {name: params.get(key) for name, key in KEYS.items() if params.get(key) is not None}
    view, ignored = {}, []

    def ignore(part: str, why: str, *also: str):
        ignored.append(f"The link's {part} was ignored: {why}.")
        for name in also:
            got.pop(name, None)

    for name, value in got.items():
        if not isinstance(value, str):
            ignore(KEYS[name], "it must be text")
    got = {name: value for name, value in got.items() if isinstance(value, str)}
    if "ckpt" in got and got["ckpt"] not in vocab.checkpoints:
        ignore(f"checkpoint {got.pop('ckpt')[:80]!r}",
               "it is not in this app's list (a model trained in the Train tab stays with the browser that trained "
               "it; a pretrained one is listed only where its weights are cached), so its input and head were "
               "ignored with it", "text", "target", "kind", "layer", "head", *ROWS, "prompt", *PAIR)
    for name, what in (("text", "input"), ("target", "target"), ("text_b", "second input"), ("prompt", "prompt"),
                       ("answer", "answer token"), ("other", "other token")):
        if name in got and got[name] != "":
            try:
                view[name] = check_text(got[name], what)
            except UserError as e:
                ignore(what, str(e), *(("target", *ROWS, *PAIR) if name == "text" else PAIR[1:] if name == "text_b"
                                       else ()))
    for name in PAIR[1:]:  # the patching of the pair: without its second input, nothing to patch
        if name in got and "text_b" not in view:
            ignore(name.replace("_", " "), "it belongs to a second input (text_b=...)", name)
            view.pop(name, None)
    if "patch_position" in got:
        if PATCH_POSITION.fullmatch(got["patch_position"]):
            view["patch_position"] = int(got["patch_position"])
        else:
            ignore(f"patch position {got['patch_position'][:8]!r}", "it is -1 (automatic) or a whole number from 0")
    for name, choices in _choices(vocab).items():
        if name in got:
            if got[name] in choices:
                view[name] = got[name]
            else:
                ignore(f"{KEYS[name]} {got[name][:40]!r}", f"it must be one of {', '.join(choices)}",
                       *(("layer", "head") if name == "kind" else ()))
    if "words" in got:
        if got["words"] in WORDS:
            view["words"] = WORDS[got["words"]]
        else:
            ignore(f"words {got['words'][:20]!r}", "it must be 0 (tokens) or 1 (words)")
    if "layer" in got or "head" in got:
        layer, head = got.get("layer"), got.get("head")
        if layer is None or head is None:
            ignore("layer" if head is None else "head", "a link opens a head by its layer and its head together")
        elif not (INDEX.fullmatch(layer) and INDEX.fullmatch(head)):
            ignore(f"layer {layer[:8]!r} and head {head[:8]!r}", "a layer and a head are whole numbers from 0")
        elif "kind" not in view:
            ignore(f"layer {layer} and head {head}", "a link opens a head with its kind of attention (kind=...)")
        else:
            view["layer"], view["head"] = int(layer), int(head)
    for name, whole in DECODING.items():
        if name in got:
            try:
                if not NUMBER.fullmatch(got[name]):
                    raise UserError("it is a number written in digits")
                number = float(got[name])
                view[name] = check_number(int(number) if number.is_integer() else number, name, *GENERATE[name],
                                          integer=whole)
            except UserError as e:
                ignore(f"{name} {got[name][:12]!r}", str(e))
    for name, what in ROWS.items():
        if name in got:
            if INDEX.fullmatch(got[name]):
                view[name] = int(got[name])
            else:
                ignore(f"{what} {got[name][:8]!r}", "it is a whole number from 0")
    if "sections" in got:
        named = got["sections"].split(",")
        unknown = [s for s in named if s not in vocab.sections]
        if unknown:
            ignore(f"section {unknown[0][:40]!r}", f"the sections are {', '.join(vocab.sections)}")
        view["sections"] = tuple(s for s in vocab.sections if s in named)
    return View(**view), ignored


def fit_to_model(view: View, shapes: dict[str, tuple[int, int]]) -> tuple[View, list[str]]:
    """`view` with its kind, layer and head checked against the model it opens, `shapes` = {kind: (layers, heads)}
    of that model (its kinds of attention only): a kind it does not have is ignored with its head, a layer or head
    past its own counts with the head. Returns (the view, one sentence per part ignored)."""
    if view.kind is None:
        return view, []
    if view.kind not in shapes:
        return (replace(view, kind=None, layer=None, head=None),
                [f"The link's kind {view.kind!r} was ignored: this model has {' and '.join(shapes)} attention only."])
    if view.layer is None:
        return view, []
    layers, heads = shapes[view.kind]
    if view.layer < layers and view.head < heads:
        return view, []
    return (replace(view, layer=None, head=None),
            [f"The link's head {HeadId(view.kind, view.layer, view.head)} was ignored: this model's {view.kind} "
             f"attention has {layers} layer{'s' * (layers != 1)} of {heads} head{'s' * (heads != 1)}."])


def fit_to_input(view: View, rows: int, positions: int) -> tuple[View, list[str]]:
    """`view` with its query row and lens position checked against the input it opens, once computed: `rows` query
    rows of the heatmap the Q·K section reads, `positions` columns of the logit lens. One past its count is ignored
    (the section opens where it would) and said. Returns (the view, one sentence per part ignored)."""
    view, ignored = view, []
    for name, count, what in (("query", rows, "rows"), ("lens_position", positions, "positions")):
        value = getattr(view, name)
        if value is not None and value >= count:
            view = replace(view, **{name: None})
            ignored.append(f"The link's {ROWS[name]} {value} was ignored: this input has {count} {what} (0 to "
                           f"{count - 1}).")
    return view, ignored
