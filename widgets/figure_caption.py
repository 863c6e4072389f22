"""A caption under a figure that says what the figure on screen shows, never what it showed before or will show next.

The caption travels inside the figure (its layout's `meta`, which plotly keeps and does not draw), in the same output
of the same call, and the page writes under the figure the caption of the figure drawn, in the moment plotly draws
it (a MutationObserver: it runs after the page's changes and before the screen is painted). No figure drawn, no
caption.

Why: gradio's page draws a gr.Plot and a gr.Markdown of one reply at different moments (plotly after its first
import, seconds after a page's load, or the Markdown after its own asynchronous rendering), and a caption of an event
of its own answers apart from the figure's. Under load, a demo click showed the causal mask's layer 0, head 0 under
the page load's caption "Layer 1, head 3: anti-diagonal head" for seconds, and a head slider's new caption came
0.6 s before its heatmap (tests/browser/test_caption_follows.py).
"""
from __future__ import annotations

import json

import gradio as gr

CAPTION = "caption"  # the key of the caption in the figure's layout.meta

# In the page (the gr.HTML's js_on_load; `element` is the caption's own element): after every change of the page,
# write the caption the drawn figure `#FIGURE` carries (text, never markup: a token such as `<s>` stays as it is)
SHOW_CAPTION_JS = """
const line = () => element.querySelector('.figure-caption strong');
const show = () => {
    const plot = document.querySelector('#FIGURE .js-plotly-plot'), said = line();
    const meta = plot && plot._fullLayout && plot.layout && plot.layout.meta;
    const text = (meta && typeof meta.CAPTION === 'string') ? meta.CAPTION : '';
    if (said && said.textContent !== text) said.textContent = text;
};
new MutationObserver(show).observe(document.body, {childList: true, subtree: true});
show();
"""


def with_caption(figure, caption: str):
    """`figure` (a plotly figure) carrying `caption`, beside what its layout's meta already holds."""
    meta = figure.layout.meta if isinstance(figure.layout.meta, dict) else {}
    figure.update_layout(meta={**meta, CAPTION: caption})
    return figure


def caption_in(plot) -> str:
    """The caption a figure carries, as gr.Plot sends it (its `plot` JSON) or as a dict (an API client's), or ""."""
    figure = json.loads(plot.plot if hasattr(plot, "plot") else plot["plot"]) if plot is not None else {}
    return (figure.get("layout", {}).get("meta") or {}).get(CAPTION, "")


def figure_caption(figure_id: str, elem_id: str) -> gr.HTML:
    """The line under the figure whose elem_id is `figure_id`: the caption of the figure drawn there, in bold; the
    server never writes to it."""
    return gr.HTML("", html_template='<p class="figure-caption"><strong></strong></p>', elem_id=elem_id,
                   elem_classes="figure-caption-box",  # unpadded, where a Markdown's text would be (app.py's CSS)
                   js_on_load=SHOW_CAPTION_JS.replace("FIGURE", figure_id).replace("CAPTION", CAPTION))
