"""Attention Lab: a Gradio app that shows how a Transformer works.

`python app.py` serves on 127.0.0.1:7860 (GRADIO_SERVER_NAME / GRADIO_SERVER_PORT override it).
This file only assembles the page; each tab (in `tabs/`) builds its components and wires them to `transformer`
(the model) and `visualize` (the figures).
"""
from __future__ import annotations

import os

# Before gradio is imported: no analytics, no version check, no telemetry. The app opens no socket outside the
# machine unless a user asks for a Hub resource (tests/reliability/test_no_outside_sockets.py proves it).
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
# gradio's cache (uploads, served files, the app's exports) in a folder of the app's own, which server.guard keeps
# under its disk budget (the machine's shared /tmp/gradio may hold other apps' files).
os.environ.setdefault("GRADIO_TEMP_DIR", os.path.join(__import__("tempfile").gettempdir(), "attention-lab"))

import ctypes  # noqa: E402

import store.gpu  # noqa: E402,F401  (first: on a ZeroGPU Space, `spaces` must patch torch before CUDA is touched)
import gradio as gr  # noqa: E402

from limits import DEFAULT_CONCURRENCY, DELETE_CACHE, PLACES_EVERY_S, QUEUE_SIZE  # noqa: E402
from server.admission import door  # noqa: E402
from server.compat import GradioChanged, check as check_gradio  # noqa: E402
from server.guard import protect, serving  # noqa: E402
from store.catalogue import NOTICES, SHIPPED, fixed_choices, load_at_start, pretrained  # noqa: E402
from store.memory import arrow_on_malloc  # noqa: E402
from store.sessions import KEY_COOKIE  # noqa: E402
from tabs.about import about_line  # noqa: E402
from tabs.attention.link import vocabulary, wire_link  # noqa: E402
from tabs.attention.page import build_attention_tab  # noqa: E402
from tabs.classroom.page import build_class_tab, wire_class_tab  # noqa: E402
from tabs.demos import demo_buttons, wire_demos  # noqa: E402
from tabs.generate import build_generate_tab  # noqa: E402
from tabs.model import build_model_tab  # noqa: E402
from tabs.positional import build_positional_tab  # noqa: E402
from tabs.train.page import build_train_tab, restore_models  # noqa: E402
from tabs.train.session import warm_up  # noqa: E402
from widgets.accessible import CSS as ACCESSIBLE_CSS, PAGE_JS as ACCESSIBLE_JS, THEME  # noqa: E402
from widgets.controls import Dropdown  # noqa: E402
from widgets.ui import Followers, mark_figure_rows, progress_only_where_drawn  # noqa: E402
from visualize.style import PHONE_WIDTH  # noqa: E402

NOTICES.append(gr.Info)  # the store's notices (loading a pretrained model) reach the page as toasts
load_at_start()  # with a GPU, every shipped model onto it now (ZeroGPU takes the weights it finds there at start)

# Runs in the browser at page load: this browser's random key, made at its first visit and kept in its local storage,
# put in the cookie every request of the page carries (store.sessions.KEY_COOKIE: the only place the server reads a
# key from; no function takes one from a caller's data). On https (a Space shows the app in an iframe of another
# site) the cookie must be SameSite=None, Secure and Partitioned to be sent at all; on http, SameSite=Strict.
BROWSER_KEY_JS = """() => {
    let key = localStorage.getItem('attention-lab-key');
    if (!/^[0-9a-f]{32}$/.test(key || '')) {
        key = Array.from(crypto.getRandomValues(new Uint8Array(16)), b => b.toString(16).padStart(2, '0')).join('');
        localStorage.setItem('attention-lab-key', key);
    }
    const site = location.protocol === 'https:' ? 'SameSite=None; Secure; Partitioned' : 'SameSite=Strict';
    document.cookie = `COOKIE=${key}; path=/; max-age=31536000; ${site}`;
    return [];
}""".replace("COOKIE", KEY_COOKIE)


PRETRAINED_NOTE = ("<small>Real GPT-2 weights join this list when they are in the machine's Hugging Face cache: "
                   "`python -m transformer.pretrained gpt2` downloads them (on a Space, the README's "
                   "`preload_from_hub` does it at build time).</small>")


def build_demo() -> gr.Blocks:
    # Gradio's own cache (files it serves) is cleaned every 10 minutes of anything older than 30 minutes.
    with gr.Blocks(title="Attention Lab", delete_cache=DELETE_CACHE) as demo:
        default = "reverse" if "reverse" in SHIPPED else (SHIPPED[0] if SHIPPED else None)
        # One compact header row (title beside the checkpoint), so the demo row, its explanation and the heatmap
        # it opens fit the first screen of a projector (tests/browser/test_layout.py)
        followers = Followers()  # what every tab sets from the checkpoint, in one call after each change of it
        with gr.Row(elem_id="header", equal_height=True):
            gr.Markdown("# Attention Lab\nA Transformer from *Attention Is All You Need*, written from scratch: "
                        "generate with it, look inside its attention, and train one yourself.", elem_id="title")
            ckpt = Dropdown(fixed_choices(), value=default, label="Checkpoint (every tab)", elem_id="ckpt")
            about_line(ckpt, "ckpt-about", followers)  # what it was trained on and what input it expects
        buttons, explain = demo_buttons()
        # what part of the link the page was opened with was ignored (hidden, taking no room, when nothing was)
        link_note = gr.Markdown(elem_id="link-note", visible=False)
        page_width = gr.State(None)  # the browser's width (px), read at the page's load (the Attention tab's)
        with gr.Tabs(elem_id="tabs") as tabs:
            generate = build_generate_tab(ckpt, followers, page_width)
            attention = build_attention_tab(demo, ckpt, followers, page_width)
            positional = build_positional_tab(demo, ckpt, followers)
            train = build_train_tab(ckpt, door=door(demo))
            build_model_tab(demo, ckpt)
            classroom = build_class_tab()
        if not pretrained():
            gr.Markdown(PRETRAINED_NOTE, elem_id="pretrained-note")
        wire_demos(buttons, explain, tabs, ckpt, attention, train)
        wire_link(demo, tabs, ckpt, attention, generate, link_note)
        followers.wire(ckpt)
        demo.load(restore_models, None, ckpt, js=BROWSER_KEY_JS, api_visibility="private", queue=False)
        # after the browser key's cookie is set (above): a student opening the join link is known by it
        wire_class_tab(demo, tabs, classroom, attention, positional, buttons, vocabulary(
            [tab.id for tab in tabs.children if isinstance(tab, gr.Tab)], attention.scores))
    progress_only_where_drawn(demo)
    mark_figure_rows(demo)  # the rows a phone stacks (the CSS's .figure-row)
    # Every group of events waits in a line of its own, fair per client (server.lines: 64 each);
    # `max_size` only caps the sum. api_open=False: a queued event cannot be called directly, skipping its line and limits.
    # A waiting request is told its place when it joins (server.lines.settle) and every PLACES_EVERY_S after
    demo.queue(max_size=QUEUE_SIZE, default_concurrency_limit=DEFAULT_CONCURRENCY, api_open=False,
               status_update_rate=PLACES_EVERY_S)
    return demo


CSS = ACCESSIBLE_CSS + """
/* overflow clip, not gradio's hidden: a hidden overflow made the container the box a sticky element holds to,
   and it never scrolls (the demo's notes below never stuck) */
.gradio-container {max-width: 1500px !important; overflow: clip !important}
/* A demo's notes (its question or answer, its explanation) stay pinned at the top of a projector's screen while the
   page scrolls to the figure they are about (tabs.ask_first.IN_VIEW stops the figure under them): the 41 rows of
   "The causal mask" are taller than 800 px, and the explanation scrolled out of view. Not on a phone, where its
   6-12 lines (126-260 px) would take up to a third of the screen for as long as one reads. */
@media not all and (max-width: PHONE_WIDTHpx) {
  #demo-notes {position: sticky; top: 0; z-index: 1002; background: var(--body-background-fill)}
}
/* Every tab reachable on a phone. Gradio moves the tabs that do not fit on one line into a "..." menu, measuring
   them on hidden copies; with the copies taking no room every tab stays in the bar, and the bar wraps instead. */
.tab-container.visually-hidden > button {display: none !important}
.tab-wrapper {height: auto !important}
.tab-container[role=tablist] {flex-wrap: wrap; height: auto !important; overflow: visible !important}
.tab-container[role=tablist] > button {flex: 0 0 auto; height: var(--size-8)}
/* A hidden tab keeps its width, invisibly: a figure drawn while its tab is hidden (on page load, by a demo button)
   is then drawn at the width it will be shown at, not at plotly's default 700 px and cut off. */
.tabs > .tabitem:is([style*="display: none"], [style*="display:none"]) {
  display: flex !important; visibility: hidden; position: absolute; left: 0; right: 0; height: 0;
  overflow: hidden; pointer-events: none}
/* ... and all it holds: a piece that sets its own visibility (plotly's SVG text; the Model tab's summary after an update
   arrived while another tab was shown) would otherwise show through (tests/browser/test_browser.py) */
.tabs > .tabitem:is([style*="display: none"], [style*="display:none"]) * {visibility: hidden !important}
/* A figure whose cells would be smaller than readable is drawn wider than its box (visualize.sizes): the box
   scrolls it sideways instead of cutting it off. */
.js-plotly-plot {overflow-x: auto; overflow-y: hidden}
/* A figure's caption (widgets.figure_caption, a gr.HTML) where a Markdown's text would be: gr.HTML pads it */
.figure-caption-box .html-container {padding: 0 !important}
/* A figure's exports (tabs.figure_export): one short line under it, the buttons and what they saved */
.figure-export {gap: var(--size-2) !important; align-items: center; flex-wrap: nowrap !important}
.figure-export-said p {font-size: var(--text-sm); margin: 0}
/* Predict, then reveal (tabs.ask_first.ask_first_row): the page's body is "asking" from a demo's click with "Ask first"
   on until Reveal, then "revealed". The open tab's panel is hidden but keeps its layout, so its figures are drawn
   at their width meanwhile. Gradio adds a copy of each rule under `.gradio-container .contain`, which outranks an
   id: the default (hidden) is in :where(), so that the body's class wins. */
#demo-row > .form:has(#demo-ask-first) {flex: 0 0 auto !important; min-width: max-content !important;
  width: auto !important; border: none; box-shadow: none}
#demo-ask-first {padding: var(--size-1) var(--size-2) !important}
:where(#demo-ask) {display: none !important}
body.asking #demo-ask, body.revealed #demo-ask {display: flex !important}
body.asking #demo-answer, body.asking #demo-explain {display: none !important}
body.revealed #demo-reveal, body.revealed #demo-question {display: none !important}  /* the answer takes its place */
body.asking .tabs > .tabitem {visibility: hidden !important}
#demo-question {font-size: var(--text-xl)}
/* After Reveal the answer stays with the figure, on a phone too (issue 38: it was above the screen there): the notes,
   answer first, pinned at the top in at most a third of the screen, the rest of them scrolled inside it; the figure
   stops under them (tabs.ask_first.IN_VIEW). Not in a @media block: gradio writes those only under
   `.gradio-container .contain`, inside which the body's class is never found */
body.revealed #demo-notes {position: sticky; top: 0; z-index: 1002; background: var(--body-background-fill);
  max-height: 33vh; overflow-y: auto}
#demo-ask {align-items: center}
@media (max-width: PHONE_WIDTHpx) {
  /* the switch is for a teacher at a projector: on a phone it is the row's last cell, the buttons keep the view */
  #demo-row > .form:has(#demo-ask-first) {order: 99}
  #demo-ask {flex-direction: column !important; align-items: stretch}
  #demo-ask > * {width: 100% !important}
  /* plotly's toolbar, shown at a touch, lay over the figure's title; PNG and HTML are under every figure */
  .js-plotly-plot .modebar-container {display: none !important}
  /* a figure's exports wrap to a second line where PNG, HTML and "Show as a table" (168 px) do not fit on one: at
     320 px (a 1280 px screen zoomed to 400 %) the table's button ran 24 px off the page */
  .figure-export {flex-wrap: wrap !important}
}
/* The training's status line is never faded: gradio greys a Markdown awaiting an update of a call in flight (its
   `.pending`, opacity 0.2), and a running watch or training always has one, so the line a class reads (step, loss,
   the best heads) was read at opacity 0.2 in one CI run (tests/browser/test_readable_texts.py) */
#train-status .pending, #train-status.pending {opacity: 1 !important}
/* Why Start is disabled, in words, exactly while it is (a run of this tab goes): tabs.train.page.BUSY */
#train-busy {display: none !important}
body:has(#train-start:disabled) #train-busy {display: block !important}
/* A metric's value on one line: gradio's prose lets a word break anywhere (overflow-wrap: anywhere), so on a phone the
   Model tab's value column was as narrow as one character and "0.9646" read "0.964" over "6"; the names beside it
   wrap between words (tests/browser/test_readable_texts.py) */
#model-summary td:nth-child(2) {white-space: nowrap; overflow-wrap: normal}
#title h1 {margin: 0 0 var(--size-1) 0}
/* A class's question open (tabs.classroom): the model's own answer stays hidden on the projector until Reveal */
body.class-asking :is(#att-one, #att-grid, #att-overview) {visibility: hidden !important}
.class-code {font-size: 64px; font-weight: bold; letter-spacing: 4px; font-family: monospace}
/* What the checkpoint was trained on and expects: small, under the list and beside the Attention tab's input */
.ckpt-about p {font-size: 13px !important; line-height: 1.35 !important; margin: 0 !important}
#header > #title {flex: 44 1 0 !important; min-width: 0 !important}
#header > .form:has(#ckpt) {flex: 22 1 0 !important; min-width: 260px !important}
#header > #ckpt-about {flex: 36 1 0 !important; min-width: 0 !important; align-self: center}
#title p {margin: 0}
/* "Demos:" stays one word; on a phone the demo buttons scroll sideways in one line instead of taking 5 lines */
#demo-label {flex: 0 0 auto !important; width: auto !important; min-width: 0 !important}
#demo-label p {white-space: nowrap}
/* Each demo button as wide as its label, in one line: eleven demos at 128 px each wrapped their labels into three
   lines and the row took 116 px at 1280, pushing the heatmap below y = 400 (tests/browser/test_layout.py) */
#demo-row > button {flex: 1 1 auto !important; min-width: max-content !important; white-space: nowrap}
/* The subtitle and a demo's explanation a little smaller and tighter than the page's prose: after a demo click the
   heatmap, its x-axis title and its colour bar fit above a projector's fold (test_layout.py) */
#title p, #demo-explain p {font-size: 15px !important; line-height: 1.4 !important}
/* the demos' buttons 8 px apart, not gradio's 16 ("Who reads whom?" also lost its ": translation"): at 1280 the
   fourteenth, "What a head writes", still starts a third line */
#demo-row {row-gap: 6px !important; column-gap: 8px !important}
/* What scrolls sideways says so (SIDEWAYS_JS marks it "sideways" while it is wider inside than shown): the demo row
   on a phone, "swipe →" under its label; a figure drawn wider than its box or a table, under it */
#demo-row.sideways #demo-label p::after, .block.sideways::after {content: "swipe →"; display: block;
  font-weight: normal; font-size: var(--text-sm)}
.block.sideways::after {text-align: right; color: var(--body-text-color-subdued)}
@media (max-width: PHONE_WIDTHpx) {
  #header {flex-direction: column !important}
  #header > * {width: 100% !important; min-width: 100% !important}
  #header > #ckpt-about {display: none}  /* on a phone beside the input of the Attention tab, and in Generate */
  /* in a column the columns' flex-basis 0 would be their height: the title and the list collapsed to 0 px and
     the list lay under the demo row, unclickable */
  #header > #title, #header > .form:has(#ckpt) {flex: 0 0 auto !important}
  /* The demo row in two lines that scroll sideways together, and says so: in one line a phone showed 1.5 of the 11
     buttons and no hint of the rest (in rows that wrap they took 9 lines, 258 px). "Demos" spans both lines with
     "swipe →" under it, and the right edge fades where buttons go on. The subtitle and a demo's explanation in a
     smaller type pay for the second line: the heatmap a demo opens starts higher than before (test_layout.py). */
  #demo-row {display: grid !important; grid-template-rows: auto auto; grid-auto-flow: column;
    grid-auto-columns: max-content; gap: 4px !important; overflow-x: auto; padding-bottom: 4px;
    -webkit-mask-image: linear-gradient(to right, #000 88%, transparent); mask-image: linear-gradient(to right, #000 88%, transparent)}
  #demo-row > button {min-width: 0 !important; justify-self: start; font-size: var(--text-sm) !important;
    padding: 2px 8px !important}
  #demo-label {grid-row: span 2; align-self: center}
  .tab-container[role=tablist] > button {padding: 0 var(--size-3)}
  /* On a phone, plots that share a row go one under the other, each the full width (widgets.ui.mark_figure_rows:
     a class, not a :has() over the figures, which froze a phone page for a minute) */
  .row.figure-row {flex-direction: column !important; flex-wrap: nowrap !important}
  .row.figure-row > * {width: 100% !important; min-width: 100% !important}
}
""".replace("PHONE_WIDTH", str(PHONE_WIDTH))  # the width below which the figures are drawn for a phone too


# In the page, from its load: mark "sideways" each box whose content is wider than it shows and scrolls sideways
# (the demo row on a phone, a figure drawn wider than its box at the readable cell size, a table's columns), and
# unmark it when it fits again (a new figure, another input, a turned phone); the CSS above writes the hint. Checked
# once a frame at most, when the page's content, a style (a tab shown: a table is drawn when its tab is) or the
# window's size changes.
SIDEWAYS_JS = """(also) => {  // also: what else runs at each change (widgets.accessible.PAGE_JS's)
    const mark = () => document.querySelectorAll('#demo-row, .js-plotly-plot, .virtual-table-viewport').forEach(e => {
        const owner = e.id === 'demo-row' ? e : (e.closest('.block') || e);
        owner.classList.toggle('sideways', e.scrollWidth > e.clientWidth + 1);
    });
    let queued = false;
    const soon = () => {
        if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; mark(); also(); }); }
    };
    new MutationObserver(soon).observe(document.body, {childList: true, subtree: true, attributeFilter: ['style']});
    window.addEventListener('resize', soon);
    soon();
}"""


def keep_freed_memory():
    """Ask glibc to keep large freed blocks instead of returning them to the kernel: capturing attention allocates
    many (B, H, T, S) tensors, and re-faulting their pages cost 16% of a captured forward (bench/RESULTS.md)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD: 32 MiB
        libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD: 1 GiB
        # M_ARENA_MAX: 2 heaps, not 8 per core: each request thread otherwise grows an arena of its own that
        # malloc_trim hands back only in part (bench/hostile_load.py, 45 s after the load: +537 MB without this,
        # +415 MB with it set here, +359 MB with MALLOC_ARENA_MAX=2 in the environment; peak 1,330 -> 1,054 MB)
        libc.mallopt(-8, 2)
    except (OSError, AttributeError):  # not glibc (macOS, Windows, musl): nothing to tune
        pass


def launch(**overrides):
    """Start the app as `python app.py` does and return (demo, launch result); tests and benchmarks pass
    overrides (server_port=None, prevent_thread_lock=True, quiet=True)."""
    check_gradio()  # first: building the page uses gradio internals too (server.compat; GradioChanged otherwise)
    keep_freed_memory()
    arrow_on_malloc()
    warm_up()
    demo = build_demo()
    settings = dict(server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
                    server_port=int(os.environ.get("GRADIO_SERVER_PORT", 7860)), ssr_mode=False, theme=THEME,
                    css=CSS, js=f"() => ({SIDEWAYS_JS})(({ACCESSIBLE_JS})())",
                    footer_links=["gradio", "settings"], **protect(demo))
    try:
        launched = demo.launch(**{**settings, **overrides})
        serving(demo)
        return demo, launched
    except Exception:
        demo.close()  # a launch that failed after its server started (gradio's reachability check) leaves none running
        raise


if __name__ == "__main__":
    try:
        launch()
    except GradioChanged as e:  # a gradio whose internals the server's protection patches are gone (server.compat)
        raise SystemExit(f"Attention Lab did not start: {e}") from None
