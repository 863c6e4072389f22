"""A figure with its exports: `figure(...)` is a gr.Plot with a line under it, "PNG" and "HTML", which save the
figure as it is drawn on the page.

PNG is made in the browser: plotly.js, already in the page to draw the figure, renders it (`Plotly.downloadImage`)
at the size it is drawn, and the server does nothing at all. Made on the server it would need kaleido and a
chromium of its own on the Space (hundreds of MB, about a second of one of its 2 cores per image), to draw what
the visitor's browser has already drawn. plotly's modebar has the same camera button, but it shows only under a
mouse (never on a phone or a projector's remote), so the button is on the page.

HTML is made on the server (plotly.js, 4.8 MB, is in the plotly package, not in the page as a file): the page sends
the figure it shows, visualize.standalone checks it is a plotly figure of the kinds the app draws and writes the
page, into the bounded export folder (store.exports: served only to the browser that asked, each browser's last
EXPORTS_PER_BROWSER kept; the same figure asked again by it is the same file). The browser then downloads it;
gradio serves an .html file as an attachment, never as a page of the app's own address. A client names no path: it sends a figure and gets a file the server named.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import gradio as gr

from visualize.standalone import write_standalone_html

from checks import UserError
from limits import DRAW_CONCURRENCY, EXPORT_CONCURRENCY, EXPORT_FIGURE_GROUP, FIGURE_TABLE_GROUP
from store.exports import EXPORTS
from widgets.answers import Answer, Components, answered, named_outputs
from widgets.errors import handler
from widgets.figure_table import Plot, table_box, table_of

NOTHING_YET = "No figure here yet: it appears once the section has computed one."

# In the page: the figure drawn in the element `#{elem_id}` as a PNG of its size on screen, saved as `{name}.png`;
# what happened, in words, into the status line.
PNG_JS = """async () => {
    const plot = document.querySelector('#ELEM_ID .js-plotly-plot');
    if (!plot || !plot._fullLayout || !window.Plotly) return NOTHING_YET;
    const {width, height} = plot._fullLayout;
    await window.Plotly.downloadImage(plot, {format: 'png', filename: NAME, width: width, height: height});
    return `${NAME}.png: ${Math.round(width)} × ${Math.round(height)} px`;
}"""
# In the page: download the file the server has just written (its URL is the File value's `url`).
DOWNLOAD_JS = """(file) => {
    if (!file || !file.url) return;
    const link = document.createElement('a');
    link.href = file.url;
    link.download = file.orig_name || '';
    document.body.appendChild(link);
    link.click();
    link.remove();
}"""


# The same two for an SVG figure (the Train tab's live charts, gr.HTML holding visualize's SVG), both made in the
# page: the SVG drawn on a canvas of its size on screen for the PNG, and the SVG itself in a page for the HTML (an
# SVG needs no library, so nothing is asked of the server).
SVG_JS = """async () => {
    const svg = document.querySelector('#ELEM_ID svg');
    if (!svg) return NOTHING_YET;
    const {width, height} = svg.getBoundingClientRect();
    const copy = svg.cloneNode(true);
    copy.setAttribute('width', width);
    copy.setAttribute('height', height);
    const text = new XMLSerializer().serializeToString(copy);
    let url, saved;
    if (FORMAT === 'png') {
        const image = new Image();
        image.src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(text);
        await image.decode();
        const canvas = document.createElement('canvas');
        canvas.width = Math.round(width);
        canvas.height = Math.round(height);
        const context = canvas.getContext('2d');
        context.fillStyle = 'white';
        context.fillRect(0, 0, canvas.width, canvas.height);
        context.drawImage(image, 0, 0, canvas.width, canvas.height);
        url = canvas.toDataURL('image/png');
        saved = `${NAME}.png: ${canvas.width} × ${canvas.height} px`;
    } else {
        const page = '<!doctype html><html><head><meta charset="utf-8"><title>' + NAME + '</title></head><body>'
            + text + '</body></html>';
        url = URL.createObjectURL(new Blob([page], {type: 'text/html'}));
        saved = `${NAME}.html: the figure in one file, opens offline`;
    }
    const link = document.createElement('a');
    link.href = url;
    link.download = NAME + '.' + FORMAT;
    document.body.appendChild(link);
    link.click();
    link.remove();
    return saved;
}"""


def _js(template: str, elem_id: str, name: str, **more) -> str:
    """A JS template of this module with the figure's element, its file name and the words for no figure."""
    filled = template.replace("ELEM_ID", elem_id).replace("NOTHING_YET", json.dumps(NOTHING_YET))
    for key, value in {"NAME": name, **more}.items():
        filled = filled.replace(key, json.dumps(value))
    return filled


@dataclass(frozen=True)
class Saved(Answer):
    """The file saved (the page downloads it) and what it is, in words (widgets.answers)."""

    file: Any
    said: Any


def figure_html(plot, name: str, request=None) -> Saved:
    """The path of `name`.html drawing the figure `plot` (gr.Plot's value) and what was saved, in words; the file
    is served only to the browser behind `request`."""
    if plot is None or not getattr(plot, "plot", None):
        raise UserError(NOTHING_YET)
    if getattr(plot, "type", "plotly") != "plotly":
        raise UserError("only a plotly figure can be saved as HTML")
    text = plot.plot if isinstance(plot.plot, str) else json.dumps(plot.plot)
    tag = f"html:{name}:{hashlib.sha256(text.encode()).hexdigest()}"

    def write(folder):
        path = folder / f"{name}.html"
        write_standalone_html(text, path)
        return path
    path = EXPORTS.reuse(tag, write, request)
    return Saved(path, f"{name}.html: the figure and plotly.js in one file, opens offline")


def _buttons(elem_id: str, table: bool = False):
    """The "PNG" and "HTML" buttons of the figure `#elem_id` (and with `table` its "Show as a table") and the line
    that says what they saved."""
    if not elem_id:
        raise ValueError("a figure with exports needs an elem_id (the buttons find the figure by it)")
    with gr.Row(elem_classes="figure-export", elem_id=f"{elem_id}-export"):
        png = gr.Button("PNG", size="sm", scale=0, min_width=64, elem_id=f"{elem_id}-png")
        html = gr.Button("HTML", size="sm", scale=0, min_width=64, elem_id=f"{elem_id}-html")
        # 168 px: its words on one line in the theme's large text (at 64 px it took 3 lines, 71 px, and pushed the
        # head caption under "Previous-token head"'s heatmap 11 px under the fold at 1280x800)
        as_table = gr.Button("Show as a table", size="sm", scale=0, min_width=168,
                             elem_id=f"{elem_id}-show-table") if table else None
        said = gr.Markdown(elem_id=f"{elem_id}-saved", elem_classes="figure-export-said", min_width=0)
    return (png, html, said, as_table) if table else (png, html, said)


def svg_exports(chart: gr.HTML, name: str) -> None:
    """The exports of an SVG figure (a gr.HTML holding one), both made in the page."""
    png, html, said = _buttons(chart.elem_id)
    png.click(None, None, said, js=_js(SVG_JS, chart.elem_id, name, FORMAT="png"))
    html.click(None, None, said, js=_js(SVG_JS, chart.elem_id, name, FORMAT="html"))


def export_row(plot: gr.Plot, name: str) -> None:
    """The exports of a plotly figure `plot` (which has an elem_id): the PNG made in the page, the HTML by the
    server."""
    elem_id = plot.elem_id
    png, html, said, as_table = _buttons(elem_id, table=True)
    box = table_box(plot, plot.label or name)  # the figure's name and description, and its table
    as_table.click(table_of, plot, box, api_visibility="private", concurrency_limit=DRAW_CONCURRENCY,
                   concurrency_id=FIGURE_TABLE_GROUP, show_progress="hidden")
    file = gr.File(visible=False)  # the page downloads it (DOWNLOAD_JS) as soon as it arrives
    png.click(None, None, said, js=_js(PNG_JS, elem_id, name))
    def html_file(value, request: gr.Request = None) -> Saved:
        return figure_html(value, name, request)
    saved = Components(file=file, said=said)
    html.click(answered(saved, handler(html_file)), plot, named_outputs(saved, Saved), api_visibility="private",
               concurrency_limit=EXPORT_CONCURRENCY, concurrency_id=EXPORT_FIGURE_GROUP, show_progress="minimal"
               ).success(None, file, None, js=DOWNLOAD_JS)


def figure(label: str, elem_id: str, name: str | None = None, **kwargs) -> gr.Plot:
    """A gr.Plot (no label shown; its figures named and described: widgets.figure_table) with its exports and its
    "Show as a table" under it, saved as `name` (default: the elem_id); all in a column of their own, which takes
    the plot's place in a row of figures (as wide as a plot may be narrow)."""
    with gr.Column(min_width=160, elem_classes="figure-box"):
        plot = Plot(show_label=False, label=label, elem_id=elem_id, **kwargs)
        export_row(plot, name or elem_id)
    return plot
