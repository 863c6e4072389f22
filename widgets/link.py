"""A link to what is on screen, copied with one click: the button, the box that shows the link, and the page's
half of the copy (the server makes the query, store.view_link; the page adds its own address)."""
from __future__ import annotations

import gradio as gr

# JS: the full link from the query the server made: this page's own address (origin and path, without its query
# or fragment) and the query; written to the clipboard, and into the box (whose copy button is the fallback where
# the clipboard is refused). A refusal (no "?") is left as it is.
COPY_JS = """(query) => {
    if (typeof query !== 'string' || !query.startsWith('?')) return query;
    const url = window.location.origin + window.location.pathname + query;
    if (navigator.clipboard) navigator.clipboard.writeText(url).catch(() => {});
    return url;
}"""


def copy_link_row(elem_id: str, label: str, placeholder: str) -> tuple[gr.Button, gr.Textbox]:
    """(the button `#{elem_id}-copy`, the box `#{elem_id}` that shows the link), in one row."""
    with gr.Row(equal_height=True, elem_id=f"{elem_id}-row"):
        button = gr.Button(label, size="sm", scale=0, min_width=190, elem_id=f"{elem_id}-copy")
        box = gr.Textbox(show_label=False, interactive=False, buttons=["copy"], scale=3, elem_id=elem_id,
                         placeholder=placeholder)
    return button, box
