"""Every plotly figure says what it shows, in words and as data (issue 40, item 2).

`Plot` is gr.Plot whose figures carry, in their layout's `meta` (which plotly keeps and does not draw), their
accessible name and description (visualize.figure_text: the title and the cells' shape; the caption the app already
writes (widgets.figure_caption) and what the data holds) and a digest of the figure. In the page, `table_box` gives
the drawn figure role="figure", that name and that description (aria-describedby), and holds its "Show as a table": the
figure's cells as HTML tables with row and column headers, built on the server from the figure the page shows, by
visualize.figure_text, so the table cannot disagree with the figure. A table is shown only while the figure it was
built from is drawn: the page hides it as soon as another figure (another digest) is drawn there.
"""
from __future__ import annotations

import json
import secrets

import gradio as gr

from visualize.figure_text import as_figure, figure_description, figure_name, figure_tables, table_html
from visualize.text import html_text

from limits import FIGURE_TABLE
from widgets.figure_caption import CAPTION

NAME, DESCRIPTION, DIGEST = "name", "description", "digest"  # their keys in the figure's layout.meta
NO_FIGURE = "No figure here yet: it appears once the section has computed one."


def described(figure):
    """`figure` (a go.Figure) with its name, description and a digest (a fresh random one: what tells one drawn
    figure from the next) in its layout's meta, beside what the meta holds (its caption)."""
    meta = figure.layout.meta if isinstance(figure.layout.meta, dict) else {}
    read = as_figure(figure)
    figure.update_layout(meta={**meta, NAME: figure_name(read),
                               DESCRIPTION: figure_description(read, meta.get(CAPTION, "")),
                               DIGEST: secrets.token_hex(8)})
    return figure


class Plot(gr.Plot):
    """gr.Plot whose plotly figures carry their name, description and digest (described). The class keeps gradio's
    name: the page draws a component by its class's name (GRADIO_NOTES: a subclass named otherwise is not drawn).
    A value already sent (a figure of the cache of tabs.attention.page) passes as it is."""

    def postprocess(self, value):
        if value is not None and hasattr(value, "to_plotly_json"):
            described(value)
        return super().postprocess(value)


def table_of(plot) -> str:
    """The tables of the figure `plot` (gr.Plot's value, as the page sends it back), in a region the keyboard
    reaches, stamped with the figure's digest; words when there is no figure."""
    if plot is None or not getattr(plot, "plot", None):
        return f'<p class="figure-tables" data-digest="">{html_text(NO_FIGURE)}</p>'
    figure = as_figure(plot)
    if not isinstance(figure, dict) or not isinstance(figure.get("data"), list):
        return '<p class="figure-tables" data-digest="">Only a plotly figure can be shown as a table.</p>'
    meta = (figure.get("layout") or {}).get("meta") or {}
    name = meta.get(NAME) or figure_name(figure) or "the figure"
    tables = figure_tables(figure, FIGURE_TABLE["cells"], FIGURE_TABLE["columns"])
    body = table_html(tables, FIGURE_TABLE["cells"], FIGURE_TABLE["columns"]) if tables else \
        f"<p>{html_text(name)} has no cells to list.</p>"
    return (f'<div class="figure-tables" role="region" tabindex="0" aria-label="{html_text(name)}, as a table" '
            f'data-digest="{html_text(str(meta.get(DIGEST, "")))}">{body}</div>')


# In the page (the gr.HTML's js_on_load; `element` is the box under the figure `#FIGURE`): after every change of the
# page, give the drawn figure its name and description (and hide what plotly draws inside it from a screen reader:
# Playwright's aria snapshot read its tick labels letter by letter, "a t t e n t i o n </s> ...", and its toolbar),
# and show the box's table only while the figure it was built from is drawn; when a table arrives, move the focus to
# it (the keyboard user asked for it).
TABLE_JS = """
const box = element;
const update = () => {
    const plot = document.querySelector('#FIGURE .js-plotly-plot');
    const meta = (plot && plot._fullLayout && plot.layout && plot.layout.meta) || {};
    const said = box.querySelector('.figure-description');
    if (plot) {
        const name = meta.NAME || LABEL;
        // a figure, named and described, not an image: an image's inside is presentational, and a heatmap takes the
        // keyboard's focus to read its rows (widgets.accessible): axe's nested-interactive on role="img"
        if (plot.getAttribute('role') !== 'figure') plot.setAttribute('role', 'figure');
        // what plotly draws inside (tick labels one by one, the mouse's toolbar) is not read: the name and the
        // description say it, the table lists it. Its toolbar's buttons (zoom, pan: the mouse's tools; PNG and HTML
        // are the app's buttons under the figure) leave the tab order: focusable inside what a screen reader does
        // not read is axe's aria-hidden-focus, and they were 8 Tab stops on each figure
        const inner = plot.querySelector(':scope > .plot-container');
        if (inner && inner.getAttribute('aria-hidden') !== 'true') inner.setAttribute('aria-hidden', 'true');
        for (const c of (inner ? inner.querySelectorAll('a[href], button, input, select, textarea, [tabindex]') : []))
            if (c.tabIndex !== -1) c.tabIndex = -1;
        if (plot.getAttribute('aria-label') !== name) plot.setAttribute('aria-label', name);
        if (said && said.textContent !== (meta.DESCRIPTION || '')) said.textContent = meta.DESCRIPTION || '';
        if (said && plot.getAttribute('aria-describedby') !== said.id) plot.setAttribute('aria-describedby', said.id);
    }
    const table = box.querySelector('.figure-tables');
    if (table) {
        const stale = table.dataset.digest !== '' && table.dataset.digest !== String(meta.DIGEST || '');
        if (table.hidden !== stale) table.hidden = stale;
    }
    // no table shown: the box takes no room (nor the column's gap) under the figure; the description stays
    // referenced (aria-describedby reads hidden text)
    const root = document.getElementById('FIGURE-table'), display = table && !table.hidden ? '' : 'none';
    if (root && root.style.display !== display) root.style.display = display;
};
new MutationObserver(update).observe(document.body, {childList: true, subtree: true});
watch('value', () => {
    update();
    const table = box.querySelector('.figure-tables');
    if (table && !table.hidden && table.focus) table.focus();
});
update();
"""
TABLE_CSS = """
.figure-tables { max-height: 420px; overflow: auto; margin-top: 4px; }
table.figure-table { border-collapse: collapse; font-size: 14px; margin: 0 0 8px 0; }
.figure-table caption { text-align: left; font-weight: bold; padding: 2px 0; }
.figure-table th, .figure-table td { border: 1px solid #888888; padding: 2px 6px; white-space: nowrap; }
.figure-table td { text-align: right; font-variant-numeric: tabular-nums; }
"""


def table_box(plot: gr.Plot, label: str) -> gr.HTML:
    """The box under the figure `plot` (which has an elem_id): its description (for aria-describedby, not drawn) and
    the table "Show as a table" puts there."""
    figure_id = plot.elem_id
    return gr.HTML("", elem_id=f"{figure_id}-table", elem_classes="figure-table-box",
                   html_template=f'<p class="figure-description" id="{figure_id}-description" hidden></p>${{value}}',
                   css_template=TABLE_CSS,
                   js_on_load=TABLE_JS.replace("FIGURE", figure_id).replace("LABEL", json.dumps(label)).replace(
                       "NAME", NAME).replace("DESCRIPTION", DESCRIPTION).replace("DIGEST", DIGEST))
