"""Predict, then reveal: what a demo asks before it shows its figure (Question, written beside each demo in
tabs.demos), the rules that read an answer off a drawn figure, and the "Ask first" switch, question and Reveal
button above the tabs."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

import gradio as gr
import numpy as np

from limits import PAGE_WAITS

from visualize.reading import Cells


@dataclass(frozen=True)
class Choice:
    """One answer a class can pick to a demo's question, and which readings of its figure make it the right one:
    `fits(reading)`, where `reading` is the question's `rule` applied to the figure shown (the one rule: the class's
    right answer is read exactly as the Ask-first test reads the demo's)."""
    label: str
    fits: Callable[[object], bool]


def equal(label: str, value) -> Choice:
    """The choice `label`, right when the figure reads `value`."""
    return Choice(label, lambda reading: reading == value)


@dataclass(frozen=True)
class Question:
    """What a demo asks before it shows its figure (the "Ask first" switch), and how the answer is read off the
    figure the class is then shown: `rule(cells)` of that figure (visualize.reading.heatmap_cells) equals
    `expected` (tests/app/test_demo_questions.py computes every demo's figure afresh and checks it)."""
    ask: str
    answer: str  # the answer in words, shown on Reveal
    rule: Callable[[Cells], object]  # reads the answer off the revealed figure
    expected: object  # what `rule` gives on it
    figure: str = "att-one"  # the figure read: the one-head heatmap, the patching section's heads grid
    #                          ("patch-heads") or the Positional tab's sinusoids (tabs.positional.PE_MATRIX)
    choices: Callable[[Cells], tuple[Choice, ...]] | None = None  # what a class picks from, built from the figure
    #                          (None: asked out loud only; tabs.classroom sends a class the others with the view)

    def class_choices(self, cells: Cells) -> tuple[tuple[str, ...], int | None]:
        """(the labels of the choices a class is given on the figure `cells`, the index of the right one: the
        first whose `fits` takes `rule(cells)`; None when none does)."""
        if self.choices is None:
            raise ValueError("this question has no choices to send a class")
        options, reading = self.choices(cells), self.rule(cells)
        right = next((i for i, option in enumerate(options) if option.fits(reading)), None)
        return tuple(option.label for option in options), right


def most_common_offset(cells: Cells) -> int:
    """Where the rows of a self-attention map look most, as an offset from themselves (-1: the token before)."""
    offsets = [cells.argmax(row) - row for row in range(1, len(cells.rows))]
    return max(set(offsets), key=offsets.count)


def distinct_keys(cells: Cells, last: int | None = None) -> tuple[Choice, ...]:
    """Each distinct key label (up to the column `last`: what a causal row there may read), in order, as a choice
    right when the rule reads that label."""
    return tuple(equal(label, label) for label in dict.fromkeys(cells.columns[: None if last is None else last + 1]))


def top_cells(cells: Cells, n: int) -> tuple[str, ...]:
    """The n largest cells of a layers x heads grid, as "layer.head", largest first."""
    order = np.argsort(-np.nan_to_num(cells.z, nan=-np.inf), axis=None)[:n]
    return tuple(grid_cell(cells, i, j) for i, j in zip(*np.unravel_index(order, cells.z.shape)))


def grid_cell(cells: Cells, i: int, j: int) -> str:
    """The cell (i, j) of a layers x heads grid as its row and column labels read ("layer.head")."""
    return f"{cells.rows[i]}.{cells.columns[j]}"


def every_head(cells: Cells) -> tuple[Choice, ...]:
    """Each head of a layers x heads grid as a choice ("layer.head"), right when the rule reads that head alone."""
    labels = (grid_cell(cells, i, j) for i in range(len(cells.rows)) for j in range(len(cells.columns)))
    return tuple(equal(label, (label,)) for label in labels)


def column_mean(cells: Cells, label: str) -> float:
    """The mean share of the column labelled `label` over the other tokens' rows (its own row left out)."""
    column = cells.columns.index(label)
    return float(np.nanmean(cells.z[[i for i, row in enumerate(cells.rows) if row != label], column]))


def looks_ahead(cells: Cells) -> bool:
    """Whether any row of a self-attention map puts weight on a later column (right of the diagonal)."""
    return bool(np.any(np.triu(np.nan_to_num(cells.z), 1) > 0))


def sign_changes(values) -> int:
    """How many times a curve crosses zero (changes sign) from one point to the next."""
    return int(np.sum(np.diff(np.sign(values)) != 0))


# In the page, at a demo's click: ask its question (ASK: whether it has one) when the switch is on, else show as
# before. The body's class does the hiding (app.py's CSS): "asking" hides the explanation and the open tab's
# panel (kept laid out, invisibly, so its figures are drawn at their width meanwhile) and shows the question;
# "revealed" shows all of it, the answer in the question's place. The body keeps the id of the figure asked about
# (FIGURE: Question.figure).
ASK_JS = """(ask) => {
    if (window.inViewStop) window.inViewStop();  // the last demo's figure no longer pulls the page to it
    LIVE_REGION
    document.body.classList.remove('asking', 'revealed');
    if (ask && ASK) document.body.classList.add('asking');
    document.body.dataset.askedFigure = FIGURE;
    return [QUESTION, ANSWER];
}"""
# What comes into view with a figure, under it: the one-head heatmap's caption (what to see in it, in words); the
# watch's chart under its status line (on a phone, after "Induction forming", both sat ~1,700 px down the page).
CAPTIONS = {"att-one": "att-caption", "train-status": "train-curves"}
# Bring a figure into view (its id): "nearest" scrolls only as far as needed (not at all when it is in view), so
# that its bottom (its caption's, CAPTIONS) meets the fold, or to its top when it is taller than the screen. On a
# projector a demo's notes (its question or answer and its explanation, #demo-notes) stay pinned at the screen's top
# while the page scrolls (app.py's CSS): the figure then stops under them (its scroll margin is their height), so
# that a class sees what to look for and the figure together. The one way the page scrolls to a figure: after
# Reveal, and after a demo's click once its figure is drawn (IN_VIEW_WHEN_DRAWN_JS). The head caption under the
# one-head heatmap was 60 px under the fold after "Reading backwards" at 1280x800.
IN_VIEW = """(id) => {
    const f = document.getElementById(id || ''), notes = document.getElementById('demo-notes');
    if (!f) return;
    const said = document.getElementById(CAPTIONS[id] || '');
    const pinned = notes && getComputedStyle(notes).position === 'sticky';
    f.style.scrollMarginTop = (pinned ? notes.getBoundingClientRect().height : 0) + 'px';
    const end = said && said.offsetParent ? said.getBoundingClientRect().bottom : 0;
    f.style.scrollMarginBottom = Math.max(0, end - f.getBoundingClientRect().bottom) + 'px';
    f.scrollIntoView({block: 'nearest', behavior: matchMedia('(prefers-reduced-motion: reduce)').matches ? 'instant'
                                                   : 'smooth'});
}""".replace("CAPTIONS", json.dumps(CAPTIONS))
# Move the keyboard's focus to a figure (its id) brought into view, so that it is not lost (the Reveal button pressed
# goes away) and the next key acts on what the class now sees: a heatmap's arrow keys read its rows
# (widgets.accessible). The plotly figure itself, else the element (a run's status line), focusable by script only
# when it is not in the tab order already. Only from where the visitor left it: the page's body or a demo button.
# A figure still hidden refuses the focus: it is tried at each frame until it takes it (for at most LAND_MS: on a busy
# page the figure asked about was still hidden seconds after Reveal, and a wait of FOCUS_MS from Reveal ran out in a
# frame or two, leaving the focus on the body: tests/browser/test_keyboard.py, 3 of 9 walks under load ~11), then kept
# there for FOCUS_MS while it falls back to the body (gradio replaces a plot's element when its figure arrives, which
# drops the focus to the body); not once the visitor has moved it elsewhere.
FOCUS = """(id) => {
    const from = (a) => a === document.body || a === null || (a.closest && a.closest('#demo-row, #demo-ask'));
    if (!from(document.activeElement)) return;
    const started = performance.now();
    let landed = null;  // when the focus first reached the figure
    const place = () => {
        const f = document.getElementById(id || ''), at = document.activeElement;
        if (!f || !(from(at) || f.contains(at))) return;  // gone, or the visitor moved the focus elsewhere
        if (!f.contains(at)) {
            const region = f.querySelector('.js-plotly-plot') || f;
            if (!region.hasAttribute('tabindex')) region.tabIndex = -1;
            region.focus({preventScroll: true});
        }
        const now = performance.now();
        if (landed === null && f.contains(document.activeElement)) landed = now;
        if (landed === null ? now - started < LAND_MS : now - landed < FOCUS_MS) requestAnimationFrame(place);
    };
    place();
}""".replace("FOCUS_MS", str(PAGE_WAITS["focus_ms"])).replace("LAND_MS", str(PAGE_WAITS["land_ms"]))
# Reveal: show it all, then bring the figure the class was asked about into view. The answer and the explanation
# shown again push it down: after "Reading backwards" at 1280x800 the heatmap's lower half was under the fold.
# The answer, shown, is also said: written into a live region (#demo-announce), which a screen reader reads out when
# its text changes (the answer's own box only stops being hidden, which is not announced). A demo's click (ASK_JS)
# makes the region, out of the layout and not drawn, so that it is in the page before Reveal writes into it.
ANNOUNCE = "demo-announce"
LIVE_REGION_JS = """(() => {
    if (document.getElementById(ANNOUNCE)) return;
    const live = document.createElement('div');
    live.id = ANNOUNCE;
    live.setAttribute('role', 'status');
    live.setAttribute('aria-live', 'polite');
    live.style.cssText = 'position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;'
        + 'clip:rect(0 0 0 0);white-space:nowrap;border:0';
    document.body.appendChild(live);
})();""".replace("ANNOUNCE", json.dumps(ANNOUNCE))
ASK_JS = ASK_JS.replace("LIVE_REGION", LIVE_REGION_JS)
REVEAL_JS = """() => {
    document.body.classList.replace('asking', 'revealed');
    const live = document.getElementById(ANNOUNCE), answer = document.getElementById('demo-answer');
    if (live && answer) {
        live.textContent = '';
        requestAnimationFrame(() => { live.textContent = answer.innerText.trim(); });
    }
    (IN_VIEW)(document.body.dataset.askedFigure);
    (FOCUS)(document.body.dataset.askedFigure);
}""".replace("IN_VIEW", IN_VIEW).replace("FOCUS", FOCUS).replace("ANNOUNCE", json.dumps(ANNOUNCE))
# After a demo's click, once the figure it is about (in_view_when_drawn's) is drawn: bring it into view, unless a
# question hides it (Reveal will). The figure is drawn after its data arrives (a patching demo's heads grid only after
# the second input's record and the patching: seconds later), and plotly may redraw it once for its margins: wait
# until the figure has changed since the click (the last demo's figure is still drawn when this runs: scrolling to
# it left the caption of "Previous-token head", taller than the figure before it, 11 px under the fold at 1280x800),
# or for at most REDRAW_MS when nothing changes (the same figure again), then until the drawn plot's height has held
# for 3 frames, for at most 60 s, and not at all once the visitor scrolls the page (the wheel, a touch, a key that
# scrolls it: Enter on Reveal counted as a scroll, and the heatmap drawn after Reveal took the keyboard's focus away
# to the page's body, where tests/browser/test_keyboard.py found it). Below a 3-line explanation at 1280x800 the
# heatmaps of "The causal mask" (41 positions) and the patching demos ended up to 500 px under the fold; on a phone
# they started at y 650-760 of 844. What a run streams to (the watch's status line, STREAMING) is in view as soon as
# it is laid out, and followed while it and what comes with it grow (the status taking more lines, the chart its
# legend) until the visitor scrolls, another demo is clicked (window.inViewStop, also called by ASK_JS) or the 60 s
# have passed. A drawn figure is followed too, while the page around it settles (until nothing has moved for
# REDRAW_MS): what is drawn after it may move or stretch it (the heads grid shares a row with the DLA figure drawn
# beside it; the patching section's residual figure sits above it): in CI the grid of "Who carries a word?" had its
# drawing brought to the fold, then its box grew 66 px under the fold at 1280x800.
SCROLL_KEYS = ["ArrowUp", "ArrowDown", "PageUp", "PageDown", "Home", "End", " "]  # keys that scroll the page
IN_VIEW_WHEN_DRAWN_JS = """() => {
    if (window.inViewStop) window.inViewStop();  // the last demo's wait or follow ends here
    const started = performance.now(), moves = ['wheel', 'touchmove', 'keydown'];
    const before = document.getElementById(FIGURE);
    let last = -1, held = 0, moved = false, follow = null, quiet = null, changed = !before;
    const redrawn = new MutationObserver(() => { changed = true; });
    if (before) redrawn.observe(before, {childList: true, subtree: true, attributes: true, characterData: true});
    const move = (e) => {  // a key moves the page only when it scrolls it: not Enter on Reveal, not a control's key
        if (e.type === 'keydown' && (!SCROLL_KEYS.includes(e.key) || (e.target.closest && e.target.closest(
            'input, textarea, select, button, [role=slider], .js-plotly-plot')))) return;
        moved = true;
    };
    const stop = window.inViewStop = () => {
        moved = true;
        clearTimeout(quiet);
        redrawn.disconnect();
        if (follow) follow.disconnect();
        moves.forEach(e => window.removeEventListener(e, move));
    };
    moves.forEach(e => window.addEventListener(e, move, {passive: true}));
    const wait = () => {  // looked up at each frame: a tab not shown yet may not have built it
        const figure = document.getElementById(FIGURE);
        changed = changed || figure !== before || performance.now() - started > REDRAW_MS;
        const drawn = figure && (STREAMING ? figure : figure.querySelector('.main-svg'));
        const height = drawn ? drawn.getBoundingClientRect().height : -1;
        held = changed && height > 0 && height === last ? held + 1 : 0;
        last = height;
        if (!moved && held < 3 && performance.now() - started < 60000) return requestAnimationFrame(wait);
        if (moved || held < 3 || document.body.classList.contains('asking')) return stop();
        (IN_VIEW)(FIGURE);
        (FOCUS)(FIGURE);
        const settled = () => { clearTimeout(quiet); quiet = setTimeout(stop, REDRAW_MS); };
        follow = new ResizeObserver(() => {
            if (moved) return stop();
            (IN_VIEW)(FIGURE);
            if (!STREAMING) settled();  // a stream is followed while it grows; a figure until the page is still
        });
        [figure, document.getElementById(CAPTIONS[FIGURE] || ''), figure.closest('.tabitem')]
            .forEach(e => e && follow.observe(e));
        if (!STREAMING) settled();
        setTimeout(stop, Math.max(0, 60000 - (performance.now() - started)));
    };
    requestAnimationFrame(wait);
}""".replace("IN_VIEW", IN_VIEW).replace("FOCUS", FOCUS).replace("CAPTIONS", json.dumps(CAPTIONS)).replace(
    "REDRAW_MS", str(PAGE_WAITS["redraw_ms"])).replace("SCROLL_KEYS", json.dumps(SCROLL_KEYS))


def in_view_when_drawn(figure: str, streaming: bool = False) -> str:
    """The page's JS that brings the figure of id `figure` into view once it is drawn (IN_VIEW_WHEN_DRAWN_JS): a
    plotly figure once its plot is drawn; what a run streams to (`streaming`) once it is laid out, then kept in
    view while it grows."""
    return IN_VIEW_WHEN_DRAWN_JS.replace("STREAMING", json.dumps(streaming)).replace("FIGURE", json.dumps(figure))


SWITCHED_OFF_JS = "(ask) => { if (!ask) document.body.classList.remove('asking', 'revealed'); }"


def ask_first_row(buttons, questions: list, labels: list[str], ask_first: gr.Checkbox) -> None:
    """Predict, then reveal: with "Ask first" on, a demo's click shows its question and hides its figure and its
    explanation, which the demo computes meanwhile; one click on Reveal shows them, with the answer. All of it
    happens in the page (no call to the server), so the reveal is instant.

    Off by default: a visitor alone (a student at home, a visitor of the Space) who clicks a demo came to see it,
    and a question nobody asks them is a step in the way; the teacher in front of a class turns it on once."""
    with gr.Row(elem_id="demo-ask"):
        with gr.Column(scale=4, min_width=0):
            question = gr.Markdown(elem_id="demo-question")
            answer = gr.Markdown(elem_id="demo-answer")
        reveal = gr.Button("Reveal", variant="primary", elem_id="demo-reveal", scale=0, min_width=120)
    for button, asked, label in zip(buttons, questions, labels):  # a demo that cannot run here asks nothing
        js = ASK_JS.replace("ASK", json.dumps(asked is not None)).replace(
            "FIGURE", json.dumps(asked.figure if asked else "")).replace(  # before the texts, which may hold it
            "QUESTION", json.dumps(f"**{label}: a question first.** {asked.ask}" if asked else "")).replace(
            "ANSWER", json.dumps(f"**Answer.** {asked.answer}" if asked else ""))
        button.click(None, ask_first, [question, answer], js=js)
    reveal.click(None, None, None, js=REVEAL_JS)
    ask_first.input(None, ask_first, None, js=SWITCHED_OFF_JS)
