"""A link that opens exactly this view (issue 29): "Copy link to this view" in the Attention tab, and the page's load,
which opens the view a link names. The mapping between a view and its link is store.view_link's; this module wires
it to the page.

Opening: at the page's load `open_link` reads the link's query (gr.Request.query_params), checks it
(store.view_link.from_query, then fit_to_model against the model's own counts), and puts what passed into the
controls a visitor would use (checkpoint, input, target, second input, switches, overview colour, tab) and the head
into the tab's `focus`; the same computation as "Show attention" then runs (compute_attention, with that focus)
and draws the head, then Compare's on the second input (`compare_linked`), then the query row and the lens's
position are set, checked against the input now computed (`rows_linked`: store.view_link.fit_to_input), and the
page opens the link's sections by clicking them, as a visitor would. Whatever was ignored is said in one sentence
per part above the tabs.

Copying: the link is made from what the server holds of the view on screen: the record's checkpoint and the input
and target it was computed from (not what the text boxes say now: a teacher who edits the input after drawing, and
copies before pressing Show attention again, wants the figure on the screen in the slides, not one nobody has
seen), the second input Compare read (when there is a comparison), and the kind, layer, head, switches and colour
the figure is drawn with, the Q·K section's query row and the lens's position when those sections are open. The
sections open are read from the page. The base URL is the browser's own (window.location: origin + path), so the
link works wherever the page
is served, behind a Space's proxy or under a path prefix, and the server never guesses its public address.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

import gradio as gr

from transformer.checkpoint import CheckpointError
from transformer.heads import AttentionKind
from transformer.interpretability.views import SHOW
from visualize.text import markdown_text

from checks import UserError, check_choice, check_index
from limits import GENERATE_CONCURRENCY
from store.catalogue import fixed_choices, resolve
from store.view_link import View, Vocabulary, fit_to_input, fit_to_model, from_query, to_query
from tabs.attention.inside import selected_pattern
from tabs.attention.lens import lens_positions
from tabs.attention.two_inputs import Compared, compare_and_keep
from tabs.generate_link import LinkedDecoding, LinkedGeneration, generate_linked, generate_updates, generation_query
from widgets.answers import Answer, Components, answered, named_outputs
from widgets.controls import index_slider
from widgets.errors import handler
from widgets.link import COPY_JS, copy_link_row
from widgets.ui import FAST, gate

# The sections of the Attention tab a link can open: link name -> the accordion's elem_id, in the page's order
SECTIONS = {"qk": "att-qk-section", "rollout": "att-rollout-section", "heads-off": "att-ablate-section",
            "lens": "att-lens-section", "two": "att-two-section", "patch": "att-patch-section"}

# JS: the link names of the sections open on the page (an open accordion's button has the class "open")
OPEN_SECTIONS_JS = """() => Object.entries(SECTIONS).filter(([name, id]) =>
    document.querySelector(`#${id} > button.label-wrap.open`)).map(([name]) => name).join(',')""".replace(
    "SECTIONS", json.dumps(SECTIONS))
# JS: click open each section `names` lists (comma-separated link names) that is closed: its own expand event runs,
# as when a visitor opens it, and the section draws the record already computed
CLICK_SECTIONS_JS = """(names) => {
    for (const name of (names || '').split(',')) {
        const button = SECTIONS[name] && document.querySelector(`#${SECTIONS[name]} > button.label-wrap`);
        if (button && !button.classList.contains('open')) button.click();
    }
    return [];
}""".replace("SECTIONS", json.dumps(SECTIONS))


def vocabulary(tabs, scores) -> Vocabulary:
    """What a link may name on this page: the checkpoints every browser sees, the page's tabs, the Attention tab's
    sections and its overview's scores (tabs.attention.page.SCORES)."""
    return Vocabulary(tuple(fixed_choices()), tuple(tabs), tuple(SECTIONS), tuple(scores))


def model_shapes(ckpt: str) -> dict[str, tuple[int, int]]:
    """{kind: (layers, heads)} of a listed checkpoint, from its config (AttentionKind.n_layers: the one owner)."""
    model, _, _ = resolve(ckpt, "")
    config = model.config
    return {kind.value: (kind.n_layers(config), config.n_heads) for kind in AttentionKind.of(config)}


@dataclass(frozen=True)
class LinkedInput(Answer):
    """What a link sets in the Attention tab: the input, the target, the switches, the overview colour, the head to
    focus on and the second input's box (widgets.answers: each field sets the tab's component of its name)."""

    text: Any
    target: Any
    cells: Any
    words: Any
    score: Any
    focus: Any
    text_b: Any


@dataclass(frozen=True)
class LinkedPatching(Answer):
    """What a link sets in the patching section: its answer, other token and position."""

    answer: Any
    other: Any
    position: Any


@dataclass(frozen=True)
class LinkOpened(Answer):
    """What the page's load sets from its link: the tab, the checkpoint, the note above the tabs, the sections to
    open, what is opened after the input is computed (`after`: linked), and the Attention tab's, the patching
    section's and the Generate tab's controls."""

    tabs: Any
    ckpt: Any
    note: Any
    opens: Any
    after: Any
    attention: LinkedInput
    patch: LinkedPatching
    generate: LinkedDecoding


def open_link(vocab: Vocabulary, ckpt, request=None) -> LinkOpened:
    """What the page's load sets from the link the page was opened with (LinkOpened); a page opened without one
    keeps every control as it is (and says nothing). Never raises: what cannot be opened is said in the note (the
    load event is not queued, and gradio shows an error of such an event as a bare "Error")."""
    keep = gr.update()
    params = getattr(request, "query_params", None)
    view, ignored = from_query(dict(params) if params else {}, vocab)
    if view.is_empty:
        return LinkOpened(keep, keep, said(ignored), "", None, LinkedInput(*[keep] * 7),
                          LinkedPatching(keep, keep, keep), generate_updates(view))
    model = view.ckpt or ckpt
    if view.kind is not None and isinstance(model, str) and model in fixed_choices():
        try:
            view, more = fit_to_model(view, model_shapes(model))
        except (UserError, CheckpointError) as e:  # a cached model whose files cannot be read: the app says why
            view, more = replace(view, kind=None, layer=None, head=None), [
                f"The link's head was ignored: the model {model!r} could not be read ({e})."]
        ignored += more
    focus = (model, view.kind, view.score, view.layer, view.head) if view.kind or view.score else keep
    given = LinkedInput(keep if view.text is None else view.text, keep if view.text is None else view.target,
                        view.cells or keep, keep if view.words is None else view.words, view.score or keep, focus,
                        keep if view.text_b is None else view.text_b)
    patching = LinkedPatching(*(keep if value is None else value
                                for value in (view.answer, view.other, view.patch_position)))
    return LinkOpened(gr.Tabs(selected=view.tab) if view.tab else keep, view.ckpt or keep, said(ignored),
                      ",".join(view.sections), linked(view), given, patching, generate_updates(view))


def linked(view: View) -> dict | None:
    """What of `view` is opened once its input is computed: the second input, the query row, the lens's position
    (None when the link has none of them)."""
    after = {"text_b": view.text_b, "query": view.query, "lens_position": view.lens_position}
    return after if any(v is not None for v in after.values()) else None


def compare_linked(made_by, record, after, request=None) -> Compared:
    """The second input's record and its text when the link had one (Compare's own computation:
    tabs.attention.two_inputs), else nothing changes."""
    if not after or after.get("text_b") is None:
        return Compared(gr.skip(), gr.skip())
    return compare_and_keep(made_by, record, after["text_b"], request=request)


@dataclass(frozen=True)
class LinkedRows(Answer):
    """The Q·K section's query slider, the lens's position slider and the note above the tabs (widgets.answers)."""

    query: Any
    lens_position: Any
    note: Any


def rows_linked(after, record, kind, note) -> LinkedRows:
    """The Q·K section's query row, the lens's position and the note, from the link's query row and position
    checked against the input now computed (store.view_link.fit_to_input: one past its counts is ignored and said,
    after what the note said already)."""
    keep = gr.update()
    if not after or record is None or kind not in record.patterns:
        return LinkedRows(keep, keep, keep)
    rows, positions = len(selected_pattern(record, kind).query_tokens), lens_positions(record)
    view, ignored = fit_to_input(View(query=after.get("query"), lens_position=after.get("lens_position")), rows,
                                 positions)
    return LinkedRows(keep if view.query is None else index_slider(rows, view.query),
                      keep if view.lens_position is None else index_slider(positions, view.lens_position),
                      said(ignored, shown=note) if ignored else keep)


def said(ignored: list[str], shown: str = ""):
    """The note above the tabs: the sentences of what was ignored, after the note `shown` already (as the page has
    it), shown only when there are some. The sentences quote the link, so they reach the page as text
    (visualize.text.markdown_text), never as markup."""
    value = " ".join(part for part in (shown, markdown_text(" ".join(ignored))) if part)
    return gr.update(value=value, visible=bool(value))


def link_query(vocab: Vocabulary, made_by, given, record, kind, layer, head, cells, words, score, sections,
               query=None, lens_position=None, given_b=None, record_b=None, answer="", other="",
               patch_position=-1) -> str:
    """The query of the link to the view on screen (store.view_link.to_query): the record's checkpoint and the input
    and target it was computed from, the second input of the comparison on screen (`given_b`, with its `record_b`),
    the kind, layer and head drawn, the switches, the sections open (`sections`: their link names, read from the
    page), the Q·K section's `query` row, the lens's position and the patching section's answer tokens and
    position (as its boxes hold them; the defaults, "" and -1, are not written) while those are open."""
    if record is None or given is None or made_by is None:
        raise UserError("press Show attention first: the link opens the view on the screen")
    kind = check_choice(kind, "attention", record.kinds)
    cells, score = check_choice(cells, "cells show", SHOW), check_choice(score, "overview colour", vocab.scores)
    L, H = record.patterns[kind].shape
    names = tuple(s for s in SECTIONS if s in str(sections or "").split(","))
    rows = len(selected_pattern(record, kind).query_tokens)
    view = View("attention", made_by, given[0], given[1], given_b if record_b is not None else None, kind,
                check_index(layer, "layer", L), check_index(head, "head", H), cells, bool(words), score,
                check_index(query, "query", rows) if "qk" in names else None,
                check_index(lens_position, "position", lens_positions(record)) if "lens" in names else None, names)
    if "patch" in names and record_b is not None:
        view = replace(view, answer=answer or None, other=other or None,
                       patch_position=None if patch_position in (None, -1) else int(patch_position))
    return to_query(view, vocab)


def link_row() -> dict:
    """The button and the box of the link (under the heatmap's caption), and two hidden boxes the page fills: the
    sections open when the button is pressed, and those a link opens."""
    button, box = copy_link_row("att-link", "Copy link to this view",
                                "a link that opens this view: same model, input, head and switches")
    return dict(button=button, box=box, sections=gr.Textbox(visible=False), opens=gr.Textbox(visible=False))


def wire_link(demo, tabs, ckpt, attention, generate: Components, note) -> None:
    """The page's load opens the view of its link (then computes as "Show attention" does, and generates as
    Generate does when it is a link to a generation); the buttons copy the link to the view on screen and to the
    generation on screen. `note` (above the tabs) says what part of a link was ignored."""
    link = attention.link
    tab_ids = [tab.id for tab in tabs.children if isinstance(tab, gr.Tab)]

    @handler
    def opened_by_link(checkpoint, request: gr.Request = None) -> LinkOpened:
        return open_link(vocabulary(tab_ids, attention.scores), checkpoint, request)

    @handler
    def copied(*view):
        return link_query(vocabulary(tab_ids, attention.scores), *view)

    @handler
    def generation_copied(generated):
        return generation_query(vocabulary(tab_ids, attention.scores), generated)

    after = gr.State(None)  # what the link opens once its input is computed (linked)
    patching = [attention.patch.answer, attention.patch.other, attention.patch.position]
    opening = Components(tabs=tabs, ckpt=ckpt, note=note, opens=link["opens"], after=after, attention=attention,
                         patch=attention.patch, generate=generate)
    opened = demo.load(answered(opening, opened_by_link), ckpt, named_outputs(opening, LinkOpened),
                       api_visibility="private", show_progress="hidden", queue=False)
    # only when the page was opened by a link to a generation (a page load without one calls nothing more)
    gate(opened.then, "given", generate.linked)(
        answered(generate, handler(generate_linked)), [generate.linked, ckpt, generate.prompt, *generate.controls],
        named_outputs(generate, LinkedGeneration), concurrency_limit=GENERATE_CONCURRENCY,
        concurrency_id="generate", api_visibility="private").then(
        **generate.inspect, api_visibility="private").then(
        lambda: False, None, generate.linked, queue=False, api_visibility="private")  # ckpt changes decode as before
    button, box = generate.link
    button.click(generation_copied, generate.generated, box, api_name="generation_link", api_visibility="private",
                 **FAST).success(None, box, box, js=COPY_JS, api_visibility="private")
    compare = {k: v for k, v in attention.compare.items() if k not in ("fn", "inputs")}  # its line and outputs
    rows = Components(query=attention.query, lens_position=attention.lens_position, note=note)
    attention.compute_after(opened.then, api_visibility="private").then(
        answered(attention, handler(compare_linked)), [attention.made_by, attention.record, after], **compare,
        api_visibility="private").then(
        answered(rows, handler(rows_linked)), [after, attention.record, attention.kind, note],
        named_outputs(rows, LinkedRows), queue=False, api_visibility="private").then(
        None, link["opens"], None, js=CLICK_SECTIONS_JS, api_visibility="private")
    link["button"].click(None, None, link["sections"], js=OPEN_SECTIONS_JS, api_visibility="private").then(
        copied, attention.view_inputs + [link["sections"]] +
        [getattr(attention, name) for name in ("query", "lens_position", "given_b", "record_b")] + patching,
        link["box"], api_name="view_link", **FAST).success(
        None, link["box"], link["box"], js=COPY_JS, api_visibility="private")
