"""Attention Lab: a Gradio app that shows how a Transformer works.

`python app.py` serves on 127.0.0.1:7860 (GRADIO_SERVER_NAME / GRADIO_SERVER_PORT override it).
This file only assembles the page; each tab (in `tabs/`) builds its components and wires them to `transformer`
(the model) and `visualize` (the figures).
"""
from __future__ import annotations

import ctypes
import os

import gradio as gr

from tabs.attention import build_attention_tab
from tabs.common import SHIPPED
from tabs.generate import build_generate_tab
from tabs.model import build_model_tab
from tabs.positional import build_positional_tab
from tabs.train import build_train_tab
from tabs.training_session import warm_up


def build_demo() -> gr.Blocks:
    with gr.Blocks(title="Attention Lab") as demo:
        gr.Markdown("# Attention Lab\nA Transformer from *Attention Is All You Need*, written from scratch: "
                    "generate with it, look inside its attention, and train one yourself.")
        user_models = gr.State({})
        default = "reverse" if "reverse" in SHIPPED else (SHIPPED[0] if SHIPPED else None)
        ckpt = gr.Dropdown(SHIPPED, value=default, label="Checkpoint (used by every tab)", elem_id="ckpt")
        build_generate_tab(ckpt, user_models)
        build_attention_tab(demo, ckpt, user_models)
        build_positional_tab(demo, ckpt, user_models)
        build_train_tab(ckpt, user_models)
        build_model_tab(demo, ckpt, user_models)
    demo.queue(max_size=256, default_concurrency_limit=4)  # generous: training is limited per event instead
    return demo


THEME = gr.themes.Soft(text_size=gr.themes.sizes.text_lg)
CSS = ".gradio-container {max-width: 1500px !important}"


def keep_freed_memory():
    """Ask glibc to keep large freed blocks instead of returning them to the kernel: capturing attention allocates
    many (B, H, T, S) tensors, and re-faulting their pages cost 16% of a captured forward (bench/RESULTS.md)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD: 32 MiB
        libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD: 1 GiB
    except (OSError, AttributeError):  # not glibc (macOS, Windows, musl): nothing to tune
        pass


def main():
    keep_freed_memory()
    warm_up()
    build_demo().launch(server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
                        server_port=int(os.environ.get("GRADIO_SERVER_PORT", 7860)),
                        ssr_mode=False, theme=THEME, css=CSS, footer_links=["gradio", "settings"])


if __name__ == "__main__":
    main()
