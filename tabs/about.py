"""What the selected checkpoint was trained on and what input it expects (store.about's text, through
store.catalogue.description), shown where a checkpoint is chosen and where its input is typed: beside the checkpoint
list and beside the Attention tab's input (the Generate tab shows it under its intro). Issue 29, item 5: a student
typed "Hello, how are you?" into `reverse` and a modern sentence into the Bible-trained translator, with no hint."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from store import sessions
from store.catalogue import description
from widgets.answers import Answer, Components
from widgets.ui import Followers


@dataclass(frozen=True)
class About(Answer):
    """The line about the checkpoint (widgets.answers)."""

    about: Any


def about(ckpt, request: gr.Request = None) -> str:
    """The text for checkpoint `ckpt` as this browser can use it (its own trained models too); "" for another."""
    return description(ckpt, sessions.browser_key(request)) if isinstance(ckpt, str) else ""


def about_answer(ckpt, request: gr.Request = None) -> About:
    """about(ckpt) as the line's answer (widgets.ui.Followers sets it by name)."""
    return About(about(ckpt, request))


def about_line(ckpt, elem_id: str, followers: Followers) -> gr.Markdown:
    """A small line under `ckpt`'s choice that follows it (a demo's change of checkpoint too)."""
    line = gr.Markdown(description(ckpt.value, ""), elem_id=elem_id, elem_classes="ckpt-about")
    followers.add(about_answer, Components(about=line), About)
    return line
