"""Train tab: train a small model in this browser session and watch it learn."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import gradio as gr
import numpy as np
import pandas as pd

from transformer.data import TASKS
from transformer.tokenization import SPECIAL_TOKENS

from transformer.train.compare import COMPARISONS

from visualize.comparison_table import UNITS_NOTE, column_widths, comparison_tables
from visualize.heatmap_svg import head_heatmap_svg
from visualize.line_chart import training_chart

from checks import UserError, check_choice, check_number
from limits import (CHAR_VOCAB, COMPARE, EXPORT_CONCURRENCY, GPU_SECONDS_MARGIN, HUB_NAME_CHARS, TRAINING,
                    TRAINING_GROUP, UPLOAD_BYTES)
from store import sessions
from store.catalogue import USER_MODELS, checkpoint_choices
from store.exports import EXPORTS
from store.gpu import gpu, wall_seconds
from tabs.train.comparison import run_comparison_session
from tabs.train.lifecycle import TabRun
from tabs.train.live_heatmap import LiveHeatmap
from tabs.train.request import ATTENTION_CHOICES, HYPER_PARAMETERS, POSITION_CHOICES, PRESETS, TrainingRequest
from tabs.train.session import SAMPLE_COLUMNS, export_checkpoint, run_training_session, train_stream
from tabs.train.notices import (BUSY, Buttons, Idle, Said, disables_the_buttons, idle, say_if_refused,
                                stop_training)
from tabs.train.scripts import SHOW_NOTICE, SHOW_STATUS
from tabs.train.tab import Recipe, TrainTab
from tabs.train.watch import WATCH_EXPLAINED, WatchUpdate, run_watch
from tabs.figure_export import svg_exports
from widgets.answers import Answer, Components, answered, named_outputs
from widgets.controls import Dropdown, Number, Radio, index_control, index_slider
from widgets.errors import handler
from widgets.ui import FAST


@gpu(duration=lambda request, text, control: wall_seconds(TRAINING["seconds"]) + GPU_SECONDS_MARGIN)
@handler
def train_on_gpu(request, text, control):
    """The training of a Train-tab run (tabs.train.session.train_stream), on ZeroGPU within the GPU time a call
    may ask for: its wall-clock limit is cut to fit there."""
    yield from train_stream(request, text, control, max_seconds=wall_seconds(TRAINING["seconds"]))


@gpu(duration=lambda request, which, control=None: COMPARE["seconds"] + GPU_SECONDS_MARGIN)
@handler
def compare_on_gpu(request, which, control=None):
    """The trainings of a comparison (tabs.train.comparison.run_comparison_session), one after the other, within
    the GPU time a call may ask for on ZeroGPU; `control` (a StopSignal) is the Stop button."""
    yield from run_comparison_session(request, which, seconds=wall_seconds(COMPARE["seconds"]),
                                      control=control)


@dataclass(frozen=True)
class TrainingUpdate(Answer):
    """What a training streams, each field the Train tab's component of its name (widgets.answers): the curves, the
    status, the last evaluation's samples and attention map, the checkpoint list (when the model joins it), the Stop
    signal, the live map and its head control."""

    curves: Any
    status: Any
    samples: Any
    heatmap: Any
    ckpt: Any
    control: Any
    live: Any
    live_head: Any


@dataclass(frozen=True)
class ComparisonUpdate(Answer):
    """What a comparison streams: the curves, the status, the table and its details (at the end), the Stop signal."""

    curves: Any
    status: Any
    compare_table: Any
    compare_details: Any
    control: Any


@handler
def run_train(request: gr.Request = None, **asked):
    """Stream the session's training run onto the Train tab (curves, status, samples, attention, checkpoint list,
    the live map's head control). `asked`: the TrainingRequest's fields, each the value of the control of its name
    (the event's inputs_kwargs). The samples and the attention map are sent only when an evaluation brought new
    ones, so the page redraws the small loss chart (an SVG) and the status line, and little else."""
    key = sessions.browser_key(request)
    request_ = TrainingRequest(**asked)
    live, keep = LiveHeatmap(), gr.update()
    for update in run_training_session(request_, USER_MODELS, key, train=train_on_gpu, call=request):
        ckpt = gr.update(choices=checkpoint_choices(key)) if update.done else keep
        samples = update.samples if update.samples is not None else keep
        if update.attention is not None:
            heatmap = live.show(update.attention, update.step)
            head = index_slider(live.n_heads, live.head)  # the model's own heads; hidden for a 1-head model
        elif update.first_evaluation:
            heatmap, head = LiveHeatmap.waiting(update.first_evaluation), keep
        else:
            heatmap, head = keep, keep
        yield TrainingUpdate(update.curves, update.status, samples, heatmap, ckpt, update.control, live, head)


def choose_live_head(live, head):
    """The user picks the live map's head: it is drawn now and kept at every later evaluation."""
    if not isinstance(live, LiveHeatmap):
        return gr.update()
    figure = live.choose(check_number(head, "head", 0, TRAINING["heads"][1] - 1, integer=True))
    return figure if figure is not None else gr.update()


@handler
def run_compare(which="kv-heads", request: gr.Request = None, **asked):
    """A comparison of attention variants (MHA / GQA / MQA / MLA, or the position schemes): one loss curve per
    variant on one plot, then the table (tabs.train.comparison). Each variant changes its own fields of the
    requested model (attention, positions: `asked`, the TrainingRequest's fields as run_train's) and keeps the
    rest."""
    check_choice(which, "Variants to compare", list(COMPARISONS))
    request_ = TrainingRequest(**asked).validated()
    with TabRun(call=request) as run:  # no model kept: the table is the result
        for figure, status, table, details in compare_on_gpu(request_, which, run.control):
            keep = gr.update()
            yield ComparisonUpdate(figure, status, table if table is not None else keep,
                                   details if details is not None else keep, run.control)


@handler
def download_model(ckpt, request: gr.Request = None) -> str:
    """A checkpoint zip of the selected model, if this browser trained it; written only when asked."""
    key = sessions.browser_key(request)
    entry = USER_MODELS.get(key, ckpt) if isinstance(ckpt, str) else None
    if entry is None:
        raise UserError("select a model you trained here in the checkpoint list first (the shipped ones are in "
                        "the project's checkpoints/ folder)")
    model, tokenizer, info = entry  # the same model's zip again is the same file (no new copy on disk)
    return EXPORTS.reuse(f"{ckpt}\n{id(model)}",
                         lambda folder: export_checkpoint(model, tokenizer, info, ckpt, folder), request)


def restore_models(request: gr.Request = None):
    """On page load: this browser's models (kept on the server under its key, from the page's cookie) back in the
    checkpoint list."""
    return gr.update(choices=checkpoint_choices(sessions.browser_key(request)))


def bounded_number(key: str, label: str) -> Number:
    """A number box preset to the tiny model's value; a value outside TRAINING[key] is refused naming the box
    (widgets.controls.Number)."""
    lo, hi = TRAINING[key]
    return Number(value=PRESETS["tiny"][key], label=f"{label} ({lo:g}-{hi:g})", minimum=lo, maximum=hi,
                     precision=None if isinstance(lo, float) else 0)


def build_train_tab(ckpt, door=None) -> TrainTab:
    """The Train tab; `door(group, request)` says what the server's queue would answer a run now (server.admission.door,
    handed in by app.py: the tabs never import the server)."""
    with gr.Tab("Train", id="train"):
        notice = gr.Markdown(elem_id="train-notice")  # a run refused: why, and what to do (first: seen after a demo)
        gr.Markdown("Train a small model right here and watch its loss fall and its attention take shape. "
                    "The default (reverse, tiny) learns to read its input backwards in about a minute. "
                    f"Your last {USER_MODELS.per_browser} models stay in the checkpoint list of this browser, also "
                    "after a reload.")
        with gr.Row():
            source = Radio(["task", "text"], value="task", label="Train on", elem_id="train-source")
            task = Dropdown(sorted(TASKS), value="reverse", label="Task", elem_id="train-task")
            preset = gr.Radio(list(PRESETS), value="tiny", label="Model size")
        with gr.Accordion("Text (for “text”): paste, upload a .txt, or name a Hub dataset", open=False):
            gr.Markdown(f"A text model reads one character per token: the {CHAR_VOCAB - len(SPECIAL_TOKENS)} most "
                        f"frequent characters of the text get a token each, rarer ones become `<unk>`. At most "
                        f"{TRAINING['text_chars']:,} characters are used.", elem_id="train-text-limits")
            text = gr.Textbox(label="Paste text", lines=4, max_length=TRAINING["text_chars"])
            upload = gr.File(label=f"Upload a .txt file (at most {UPLOAD_BYTES >> 20} MB)", file_types=[".txt"],
                             type="filepath")
            hub = gr.Textbox(label="Hugging Face Hub dataset name (needs internet)", max_length=HUB_NAME_CHARS,
                             placeholder="e.g. owner/dataset")
        with gr.Accordion("Hyper-parameters (the preset fills these)", open=False):
            with gr.Row():
                layers, heads, d_model = (bounded_number(k, label) for k, label in
                                          (("layers", "Layers"), ("heads", "Heads"), ("d_model", "d_model")))
            with gr.Row():
                lr, steps, batch = (bounded_number(k, label) for k, label in
                                    (("lr", "Peak learning rate"), ("steps", "Steps"), ("batch_size", "Batch size")))
            with gr.Row():
                attention = Dropdown(ATTENTION_CHOICES, value="mha", label="Attention",
                                     elem_id="train-attention-kind")
                positions = Dropdown(POSITION_CHOICES, value="sinusoidal", label="Positions",
                                     elem_id="train-positions")
        with gr.Row():
            start = gr.Button("Start", variant="primary", elem_id="train-start")
            stop = gr.Button("Stop", variant="stop", elem_id="train-stop")
            compare = gr.Button("Compare variants (trains once per variant)", elem_id="train-compare")
            compare_which = Dropdown([(label, key) for key, label in COMPARISONS.items()], value="kv-heads",
                                     label="Variants to compare", elem_id="train-compare-which")
        with gr.Accordion("Watch an induction head form (2-4 minutes)", open=False, elem_id="train-watch-section"):
            gr.Markdown(WATCH_EXPLAINED)
            watch = gr.Button("Watch an induction head form", elem_id="train-watch")
        gr.Markdown(BUSY, elem_id="train-busy")  # shown while Start is disabled (app.py's CSS)
        status = gr.Markdown("Press Start.", elem_id="train-status")
        with gr.Row():
            # an SVG chart, not a gr.Plot: gradio's Plot redraws through Plotly.react at every update and the page
            # kept ~500 DOM nodes of each (renderer memory grew ~40 MB/s during a run); replaced HTML is freed
            with gr.Column():
                curves = gr.HTML(training_chart([], [], title="Training loss", message="Press Start"),
                                 label="Loss and exact match", elem_id="train-curves", js_on_load=None)
                svg_exports(curves, "training-curves")
            with gr.Column():
                # an SVG too: a gr.Plot given a new figure at each evaluation kept the old one's DOM (issue 19)
                heatmap = gr.HTML(head_heatmap_svg(np.zeros((0, 0)), [], [], message="Attention appears here"),
                                  label="Attention of one example", elem_id="train-attention", js_on_load=None)
                svg_exports(heatmap, "training-attention")
                live_head = index_control(4, label="Head shown (kept at every evaluation)", elem_id="train-head")
        samples = gr.Dataframe(pd.DataFrame(columns=SAMPLE_COLUMNS), label="Samples at the last evaluation",
                               max_height=250, elem_id="train-samples")
        empty_table, empty_details = comparison_tables([])
        compare_table = gr.Dataframe(empty_table, label="The variants side by side: same data, steps and seed",
                                     column_widths=column_widths(), elem_id="train-compare-table")
        gr.Markdown(UNITS_NOTE, elem_id="train-compare-units")  # the short headers' units
        with gr.Accordion("Comparison details", open=False, elem_id="train-compare-details-section"):
            compare_details = gr.Dataframe(empty_details, show_label=False, elem_id="train-compare-details")
        with gr.Row():
            download = gr.Button("Download the selected model (checkpoint zip)", elem_id="train-download", scale=1)
            zip_file = gr.File(label="Checkpoint zip", scale=3)
        control, live = gr.State(None), gr.State(None)
    hyper = dict(zip(HYPER_PARAMETERS, (layers, heads, d_model, lr, steps, batch)))
    tab = TrainTab(ckpt=ckpt, source=source, task=task, preset=preset, notice=notice, status=status, curves=curves,
                   heatmap=heatmap, live_head=live_head, samples=samples, compare_table=compare_table,
                   compare_details=compare_details, start=start, compare=compare, watch=watch, control=control,
                   live=live, hyper=hyper)
    boxes = Components(**hyper)
    preset.change(answered(boxes, lambda p: Recipe(**PRESETS[p])), preset, named_outputs(boxes, Recipe),
                  api_visibility="private")
    # the TrainingRequest's fields, each from the control of its name (an API client gives them in this order)
    asked = dict(source=source, task=task, text=text, upload=upload, hub=hub, layers=layers, heads=heads,
                 d_model=d_model, lr=lr, steps=steps, batch_size=batch)
    model_options = dict(attention=attention, positions=positions)
    # show_progress "minimal": a queued run shows its place in the queue, and the status line stays readable while
    # the run streams (the full overlay greyed it out)
    buttons = named_outputs(tab, Buttons)
    after = dict(fn=answered(tab, idle), inputs=None, outputs=named_outputs(tab, Idle), queue=False,
                 api_visibility="private")  # the buttons back after a run, however it ended

    def say(request: gr.Request = None) -> Said:
        return say_if_refused(door, request)

    def told(trigger):
        """`trigger`'s `.then` after the notice says whether the run will start, and why not, or the status that it
        will wait (say_if_refused); the run is sent only when it was not refused (SHOW_NOTICE)."""
        said = trigger(answered(tab, say), None, named_outputs(tab, Said), queue=False, show_progress="hidden",
                       api_visibility="private")
        return said.then(None, js=SHOW_NOTICE, queue=False, api_visibility="private").then

    told(start.click)(
        answered(tab, disables_the_buttons(run_train)), inputs_kwargs=asked | model_options,
        outputs=named_outputs(tab, TrainingUpdate) + buttons,
        api_name="train", concurrency_limit=TRAINING["concurrent_trainings"], concurrency_id=TRAINING_GROUP,
        show_progress="minimal", show_progress_on=[status]).then(**after)
    live_head.input(choose_live_head, [live, live_head], heatmap, api_visibility="private", **FAST)
    told(compare.click)(
        answered(tab, disables_the_buttons(run_compare)),
        inputs_kwargs=asked | dict(which=compare_which) | model_options,
        outputs=named_outputs(tab, ComparisonUpdate) + buttons,
        api_name="compare_variants", concurrency_id=TRAINING_GROUP, show_progress="minimal",
        show_progress_on=[status]).then(**after)

    def watch_after(trigger, **kwargs):
        """Run "Watch an induction head form" after `trigger` (its button, or a demo click's `.then`)."""
        return told(trigger)(
            answered(tab, disables_the_buttons(run_watch)), None, named_outputs(tab, WatchUpdate) + buttons,
            concurrency_limit=TRAINING["concurrent_trainings"], concurrency_id=TRAINING_GROUP,
            show_progress="minimal", show_progress_on=[status], **kwargs).then(**after)

    watch_after(watch.click, api_name="watch_induction")
    # Stop asks the run to end after its current step (a training or a comparison); each reports how it ended
    # outside the queue: Stop never waits in a line, however full (server.admission)
    stop.click(stop_training, None, status, api_name="stop", queue=False).then(
        None, js=SHOW_STATUS, queue=False, api_visibility="private")
    download.click(download_model, ckpt, zip_file, api_name="download_model",
                   concurrency_limit=EXPORT_CONCURRENCY)
    return replace(tab, watch_after=watch_after)
