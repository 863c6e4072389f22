"""Train tab: train a small model in this browser session and watch it learn."""
from __future__ import annotations

import gradio as gr

from transformer.data import TASKS

from .common import checkpoint_choices, handler
from .training_session import LIMITS, PRESETS, TrainingRequest, run_training_session


@handler
def run_train(source, task, text, upload, hub, layers, heads, d_model, lr, steps, batch, models,
              progress=gr.Progress()):
    """Stream the session's training run onto the Train tab (curves, status, samples, attention, zip)."""
    request = TrainingRequest(source, task, text, upload, hub, layers, heads, d_model, lr, steps, batch)
    for update in run_training_session(request, models or {}):
        yield (update.curves, update.status, update.samples, update.attention, update.zip_path,
               gr.update(choices=checkpoint_choices(update.models)), update.models, update.control)
        if update.total:
            progress((update.step, update.total), desc="training")


def stop_training(control):
    """Ask this session's run to stop after its current step; the run itself reports the final status."""
    if control is None or control.is_set():
        raise gr.Error("Nothing is training in this tab: press Start first")
    control.set()
    gr.Info("Stopping after the current step…")


def bounded_number(key: str, label: str) -> gr.Number:
    """A number box preset to the tiny model's value; gradio itself refuses values outside LIMITS[key]."""
    lo, hi = LIMITS[key]
    return gr.Number(value=PRESETS["tiny"][key], label=f"{label} ({lo:g}-{hi:g})", minimum=lo, maximum=hi,
                     precision=None if isinstance(lo, float) else 0)


def build_train_tab(ckpt, user_models):
    with gr.Tab("Train"):
        gr.Markdown("Train a small model right here and watch its loss fall and its attention take shape. "
                    "The default (reverse, tiny) learns to read its input backwards in about a minute.")
        with gr.Row():
            source = gr.Radio(["task", "text"], value="task", label="Train on")
            task = gr.Dropdown(sorted(TASKS), value="reverse", label="Task")
            preset = gr.Radio(list(PRESETS), value="tiny", label="Model size")
        with gr.Accordion("Text (for “text”): paste, upload a .txt, or name a Hub dataset", open=False):
            text = gr.Textbox(label="Paste text", lines=4, max_length=LIMITS["text_chars"])
            upload = gr.File(label="Upload a .txt file", file_types=[".txt"], type="filepath")
            hub = gr.Textbox(label="Hugging Face Hub dataset (needs internet)", placeholder="e.g. tiny_shakespeare")
        with gr.Accordion("Hyper-parameters (the preset fills these)", open=False):
            with gr.Row():
                layers, heads, d_model = (bounded_number(k, label) for k, label in
                                          (("layers", "Layers"), ("heads", "Heads"), ("d_model", "d_model")))
            with gr.Row():
                lr, steps, batch = (bounded_number(k, label) for k, label in
                                    (("lr", "Peak learning rate"), ("steps", "Steps"), ("batch_size", "Batch size")))
        with gr.Row():
            start = gr.Button("Start", variant="primary", elem_id="train-start")
            stop = gr.Button("Stop", variant="stop", elem_id="train-stop")
        status = gr.Markdown("Press Start.", elem_id="train-status")
        with gr.Row():
            curves = gr.Plot(show_label=False, label="Loss and learning rate", elem_id="train-curves")
            attention = gr.Plot(show_label=False, label="Attention of one example", elem_id="train-attention")
        samples = gr.Dataframe(label="Samples at the last evaluation", max_height=250)
        download = gr.File(label="Your model as a checkpoint zip")
        control = gr.State(None)
    preset.change(lambda p: tuple(PRESETS[p][k] for k in ("layers", "heads", "d_model", "lr", "steps", "batch_size")),
                  preset, [layers, heads, d_model, lr, steps, batch], api_visibility="private")

    start.click(run_train, [source, task, text, upload, hub, layers, heads, d_model, lr, steps, batch, user_models],
                [curves, status, samples, attention, download, ckpt, user_models, control], api_name="train",
                concurrency_limit=LIMITS["concurrent_trainings"], concurrency_id="train", show_progress_on=[status])
    stop.click(stop_training, control, None, api_name="stop", concurrency_limit=None)
