"""What the tabs share about drawing: the queue of quick redraws, and how a trigger with several listeners is
wired."""
from __future__ import annotations

import contextlib
import functools

import gradio as gr
from gradio import context as gradio_context  # server.compat checks get_blocks_context at start

from limits import DRAW_CONCURRENCY
from widgets.answers import by_name, named_outputs, setting_each

FAST = dict(trigger_mode="always_last", show_progress="hidden", concurrency_limit=DRAW_CONCURRENCY,
            concurrency_id="draw")


# JS conditions, in the page: the accordion whose elem_id is {0} is open (gradio 6 marks its header
# `.label-wrap.open`); the element whose elem_id is {0} (a tab) is on screen
_OPEN = "document.querySelector('#{0} > .label-wrap.open')"
_SHOWN = "(document.getElementById('{0}') || {{checkVisibility: () => false}}).checkVisibility({{visibilityProperty: true}})"
# JS: count one more (the gate's count changes, and its listener runs) if the condition holds; else change nothing
# (an empty list: the page leaves the output as it is), and the listener is not called. The condition may read
# `given`, the value of the gate's second input (gate)
_COUNT_IF = "(n, given) => ({0}) ? [(n || 0) + 1] : []"


def open_states(demo: gr.Blocks, *sections: gr.Accordion) -> list[gr.State]:
    """Whether each of `sections` is open in this page: False from the page's load (one call for all), True on
    expand, False on collapse; None for an API client (which never opens a section: its calls always draw). The
    sections' handlers take it to draw nothing while closed."""
    shown = [gr.State(None) for _ in sections]
    demo.load(setting_each(shown, False), None, shown, queue=False, api_visibility="private")
    for section, state in zip(sections, shown):
        section.expand(lambda: True, None, state, queue=False, api_visibility="private")
        section.collapse(lambda: False, None, state, queue=False, api_visibility="private")
    return shown


def when_open(section: gr.Accordion, *triggers):
    """An event for one listener of a closed-by-default section (an accordion with an elem_id), called as a trigger
    is: at the section's opening (it draws what changed while it was closed) and at each of `triggers` while it is
    open, never while it is closed (separately(only_open=): a closed section costs no server call)."""
    return separately(section.expand, *triggers, only_open=section.elem_id)


def separately(*triggers, only_open: str | None = None, only_shown: str | None = None):
    """An event for one listener of `triggers` among several, called as a trigger is: `separately(a.change)(fn,
    inputs, outputs, **kwargs)`. The listener follows (`.then`) a listener that does nothing, in the page, at once;
    its trigger_mode is "always_last" (a `.change` listener's, and FAST's) unless it says otherwise.

    Why (a trap of gradio 6's page): when a call of an "always_last" listener was put off and the running one ends,
    the page fires the whole trigger again, every listener of it, and puts off those still running, which do the
    same when they end. Two such listeners of one control re-ran each other for as long as the page stayed open:
    after two quick Layer and Head changes, the heatmap, its caption and the two-input view were redrawn about
    twice a second until a reload (tests/browser/test_classroom.py). A listener that follows another is put off,
    and fired again, alone. tests/app/test_listeners.py checks the whole app.

    With `only_open` (an accordion's elem_id), the page calls the listener only while that section is open: a
    closed section costs no server call (issue 26, item 5; tests/browser/test_translation_demo.py counts them). Give the
    section's `.expand` among the triggers, so that it draws what changed while it was closed. API clients call
    the listener directly and always get it. With `only_shown` (a tab's elem_id), likewise only while that tab is
    on screen: give the tab's `.select` a listener of its own, so that it draws what changed while it was hidden.
    The gate (`gate`, in the section) does not throw to stop a closed section (the page counted a status update of
    every component that ever held a loading status for each step that failed: 8 of a demo click's 37, issue 29
    item 11)."""
    if not (only_open or only_shown):
        then = gr.on(list(triggers), None, None, None, trigger_mode="multiple", api_visibility="private").then
        return functools.partial(then, trigger_mode="always_last")
    gated = only_open or only_shown
    section = next(block for block in gradio_context.get_blocks_context().blocks.values() if block.elem_id == gated)
    condition = _OPEN.format(only_open) if only_open else _SHOWN.format(only_shown)
    return gate(functools.partial(gr.on, list(triggers), trigger_mode="multiple"), condition, inside=section)


def gate(step, condition: str, given=None, inside=None):
    """An event that follows `step` only when the JS `condition` holds in the page, called as a trigger is:
    `gate(button.click, "given", flag)(fn, inputs, outputs, **kwargs)`. `step` is called as a listener is (a
    trigger, a `.then`, a partial of gr.on); the condition may read `given`, the value of the component `given`.
    Its trigger_mode is "always_last" unless it says otherwise.

    The gate does not throw to stop (gradio's page counts a step run in the page that fails as a failed call: a
    status update of every component that ever held a loading status, issue 29 item 11): it counts, in a hidden
    number (in the block `inside`, else where the gate is wired), each time `step` runs while the condition holds,
    and the listener follows the count's `.change`."""
    with inside or contextlib.nullcontext():  # in the page, never on screen
        count = gr.Number(0, visible="hidden", show_label=False, container=False)
    step(None, [count] + ([given] if given is not None else []), count, js=_COUNT_IF.format(condition),
         api_visibility="private")
    return functools.partial(count.change, trigger_mode="always_last")


FIGURE_ROW = "figure-row"  # app.py's CSS stacks these rows on a phone


def mark_figure_rows(block) -> bool:
    """Give every gr.Row that holds a plot (at any depth) the class FIGURE_ROW; whether `block` holds one.

    Why not CSS's `.row:has(.js-plotly-plot)`: a :has() over all descendants is checked again at every change of any
    node under the row, and a plotly figure is thousands of nodes; on a phone, after the two-inputs maps and a
    comparison, a change of checkpoint froze the page for 60-75 s of style recalculation (tests/browser/
    test_fit_the_screen.py at 390 px timed out on it in CI). Marked once here, the rule is a class."""
    holds = isinstance(block, gr.Plot)
    for child in getattr(block, "children", None) or []:
        holds = mark_figure_rows(child) or holds
    if holds and isinstance(block, gr.Row):
        classes = block.elem_classes if isinstance(block.elem_classes, list) else [block.elem_classes or ""]
        block.elem_classes = [c for c in classes if c] + [FIGURE_ROW]
    return holds


def progress_only_where_drawn(demo: gr.Blocks) -> None:
    """Every event of `demo` that draws no progress gives its outputs no loading status (show_progress_on=[]):
    those whose progress is "hidden", and those run at once (queue=False: the page has their answer before an
    overlay could mean anything). An event that names where its progress shows keeps it.

    Why (gradio 6's page): every component that has held a loading status since the page opened is found in the
    page's tree, deep-copied and updated again at each status update of every later call (about six a call), and
    every component inside a Tabs, Column or Accordion that held one too: a demo click spent most of its main
    thread's long tasks there (bench/RESULTS.md, "Issue 26 item 5, issue 29 item 11"). A progress that is not drawn
    changes nothing on screen; tests/app/test_listeners.py checks the whole app."""
    for fn in demo.fns.values():
        if fn.show_progress_on is None and (fn.show_progress == "hidden" or not fn.queue):
            fn.show_progress_on = []


class Followers:
    """What the tabs set from the shared checkpoint (the lines that say what it was trained on, the decoding it opens
    with, the RoPE and ALiBi sizes), all in one call after each change of it: each tab `add`s its part, and
    `wire(ckpt)` makes the call once every tab is built.

    Why one call: gradio's page updates again every component that has held a loading status at each status update
    of every call (about six a queued call), so four listeners of the checkpoint cost a demo click four calls of them
    (bench/RESULTS.md, "Issue 26 item 5, issue 29 item 11")."""

    def __init__(self):
        self.parts = []  # (fn, [its inputs after the checkpoint], the components its answers set, their type)

    def add(self, fn, components, answer: type, inputs=()) -> None:
        """`fn(ckpt, *inputs' values, request=)` returns an `answer` (a widgets.answers.Answer) whose fields set
        the components of the same name in `components`."""
        self.parts.append((fn, list(inputs), components, answer))

    def follow(self, request: gr.Request, ckpt, *values) -> dict:
        """Every part's updates for checkpoint `ckpt`, {component: value} (`values`: the parts' inputs' values, in
        the order the parts were added; the request first, where gradio gives it to a function with `*values`)."""
        updates, values = {}, list(values)
        for fn, inputs, components, _ in self.parts:
            updates.update(by_name(components, fn(ckpt, *values[:len(inputs)], request=request)))
            del values[:len(inputs)]
        return updates

    follow.answers_by_name = True  # it answers by name (tests/app/test_answers_by_name.py)

    def wire(self, ckpt) -> None:
        separately(ckpt.change)(self.follow, [ckpt] + [i for _, inputs, _, _ in self.parts for i in inputs],
                                [output for _, _, components, answer in self.parts
                                 for output in named_outputs(components, answer)],
                                api_visibility="private", **FAST)
