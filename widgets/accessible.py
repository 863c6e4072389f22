"""What makes the page usable by every student (WCAG 2.2 AA, issue 40): the theme's colours, a focus that can always be
seen, a heatmap read row by row from the keyboard, and motion that follows the visitor's `prefers-reduced-motion`.

app.py passes THEME to launch(), adds CSS to the page's and runs PAGE_JS at the page's load. What each part fixes is
measured by axe-core in tests/browser/test_axe.py and by the keyboard in tests/browser/test_keyboard.py (docs/
accessibility.md says what was checked).
"""
from __future__ import annotations

import gradio as gr

# Soft's indigo 500 (#6366f1) is 3.62:1 under the labels (on indigo 100), 4.46:1 under white on a primary button and
# 4.27:1 as the selected tab's text (on gray 50); gray 400 (#9ca3af, a slider's bounds, the footer) 2.5:1. Indigo 600
# gives 5.1, 6.3 and 6.0:1, gray 600 7.2:1 (WCAG 1.4.3 asks 4.5:1). A button's hover goes darker, not lighter.
THEME = gr.themes.Soft(text_size=gr.themes.sizes.text_lg).set(
    block_label_text_color="*primary_600", block_title_text_color="*primary_600", color_accent="*primary_600",
    button_primary_background_fill="*primary_600", button_primary_background_fill_hover="*primary_700",
    checkbox_label_background_fill_selected="*primary_600", slider_color="*primary_600",
    body_text_color_subdued="*neutral_600")

FOCUS_COLOUR = "#3730a3"  # indigo 800: 8.9:1 on white, 7.0:1 on indigo 100, so the ring reads >= 3:1 (WCAG 1.4.11)

CSS = """
/* One focus ring for everything a keyboard reaches (WCAG 2.4.7), 3 px (2.4.13 asks at least 2): gradio's slider had
   none and its number box a 1 px inset ring. Drawn outside the control, two-tone (a white ring inside the dark
   one), so it stands out on a light page and on a filled control (a selected radio's indigo label) alike; shown at
   once, not faded in. */
:is(button, input, select, textarea, summary, a[href], [tabindex]):focus-visible {
  outline: 3px solid COLOUR !important; outline-offset: 2px !important; box-shadow: 0 0 0 2px #fff !important;
  transition: none !important}
/* A heatmap read from the keyboard (PAGE_JS): the query row it speaks, outlined over the figure */
#heatmap-row-mark {position: absolute; pointer-events: none; z-index: 1001; outline: 3px solid COLOUR;
  outline-offset: 0; display: none}
.sr-only {position: absolute !important; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden;
  clip: rect(0 0 0 0); white-space: nowrap; border: 0}
/* prefers-reduced-motion: nothing slides, grows or fades (gradio's tab underline, its spinners) and the page's
   scrolls land at once (PAGE_JS makes gradio's own smooth scrolls instant too). A duration on every element makes
   every change of any property a transition (transition-property is "all"), and a transition shows its start
   until the next frame: a plotly text placed by its transform attribute was drawn at its group's origin for a frame
   or more, at 0,0 with all the others (476 pairs of bar texts over each other: tests/browser/
   test_features_section.py).
   Plotly moves its SVG itself: none of it transitions. */
@media (prefers-reduced-motion: reduce) {
  *, *::before, *::after {animation-duration: 0.01ms !important; animation-iteration-count: 1 !important;
    transition-duration: 0.01ms !important; scroll-behavior: auto !important}
  .js-plotly-plot svg, .js-plotly-plot svg * {transition-property: none !important}
}
""".replace("COLOUR", FOCUS_COLOUR)

# In the page, from its load (app.py runs it, and the function it returns after each change of the page):
# - gradio's empty placeholder of a figure (`.empty` with an aria-label and no role: axe's aria-prohibited-attr) is
#   named as the image it stands for;
# - a dropdown's open list is no Tab stop of its own (its options are chosen with the dropdown's arrow keys);
# - a box that scrolls sideways and holds nothing focusable (a figure drawn wider than its box on a phone: axe's
#   scrollable-region-focusable) joins the tab order, so its arrows scroll it;
# - every plotly figure with one heatmap joins the tab order; on it, Up and Down (Home, End) move along its query
#   rows, an outline marks the row, and a live line says the row's token and its strongest key (which of the keys,
#   so that a pattern such as the anti-diagonal can be heard, and its token), read off the
#   figure's own data (its customdata's tokens, else its tick labels; masked cells, NaN, never win);
# - under prefers-reduced-motion, the smooth scrolls gradio asks for land at once.
PAGE_JS = """() => {
    const reduce = matchMedia('(prefers-reduced-motion: reduce)');
    for (const [proto, name] of [[Element.prototype, 'scrollIntoView'], [Element.prototype, 'scrollTo'],
                                 [window, 'scrollTo'], [window, 'scrollBy'], [Element.prototype, 'scrollBy']]) {
        const own = proto[name];
        proto[name] = function (...args) {
            if (reduce.matches && args[0] && typeof args[0] === 'object') args[0] = {...args[0], behavior: 'instant'};
            return own.apply(this, args);
        };
    }
    const said = Object.assign(document.createElement('div'),
                               {id: 'heatmap-row-said', className: 'sr-only'});
    said.setAttribute('aria-live', 'polite');
    const mark = Object.assign(document.createElement('div'), {id: 'heatmap-row-mark'});
    document.body.append(said, mark);
    const plain = (s) => { const t = document.createElement('textarea'); t.innerHTML = String(s); return t.value; };
    const heatmap = (gd) => {
        const traces = (gd._fullData || []).filter(t => t.type === 'heatmap' && t.visible !== false);
        return traces.length === 1 && gd.calcdata ? traces[0] : null;
    };
    // a heatmap's rows, top to bottom: [{label, key, value, y}] (y: the row's centre in page pixels)
    const rows = (gd) => {
        const trace = heatmap(gd), cd = gd.calcdata.find(c => c[0].trace && c[0].trace.index === trace.index);
        const z = cd ? cd[0].z : null;
        if (!z) return [];
        const ya = gd._fullLayout[(trace.yaxis || 'y').replace('y', 'yaxis')];
        const xa = gd._fullLayout[(trace.xaxis || 'x').replace('x', 'xaxis')];
        const ys = cd[0].y || z.map((_, i) => i), xs = cd[0].x || z[0].map((_, j) => j);
        const tick = (axis, v) => {
            const i = (axis.tickvals || []).indexOf(v);
            return i >= 0 && axis.ticktext ? axis.ticktext[i] : String(v);
        };
        const box = gd.getBoundingClientRect(), size = gd._fullLayout._size;
        const centre = (arr, i) => arr.length > z.length || arr.length > (z[0] || []).length
            ? (arr[i] + arr[i + 1]) / 2 : arr[i];  // bricks' edges or centres
        const out = z.map((row, i) => {
            let best = -1;
            row.forEach((v, j) => { if (Number.isFinite(v) && (best < 0 || v > row[best])) best = j; });
            const custom = trace.customdata && trace.customdata[i] && trace.customdata[i][Math.max(best, 0)];
            const yv = centre(ys, i), xv = best >= 0 ? centre(xs, best) : null;
            return {label: plain(custom ? custom[0] : tick(ya, yv)), column: best, columns: row.length,
                    key: best < 0 ? null : plain(custom ? custom[1] : tick(xa, xv)),
                    value: best < 0 ? null : row[best],
                    top: box.top + window.scrollY + size.t + ya.l2p(yv) - ya._length / z.length / 2,
                    left: box.left + window.scrollX + size.l, width: xa._length, height: ya._length / z.length};
        });
        return out.sort((a, b) => a.top - b.top);
    };
    const say = (gd) => {
        const all = rows(gd), i = Math.min(Math.max(gd.__row || 0, 0), all.length - 1), r = all[i];
        if (!r) return;
        gd.__row = i;
        const value = r.value === null ? 'no key (every cell masked)'
            : `strongest key ${r.column + 1} of ${r.columns}, ${r.key}, ${r.value.toFixed(2)}`;
        said.textContent = `Row ${i + 1} of ${all.length}, ${r.label}: ${value}`;
        Object.assign(mark.style, {display: 'block', top: r.top + 'px', left: r.left + 'px', width: r.width + 'px',
                                   height: Math.max(r.height, 2) + 'px'});
    };
    // a figure redrawn keeps the keyboard's focus: gradio replaces a plot's element when its new figure arrives,
    // which dropped the focus to the page's body (a Tab pressed as the heatmap was redrawn after a head change
    // landed there; tests/browser/test_keyboard.py). The figure's box whose plot has the focus is remembered until
    // the focus goes elsewhere or the visitor points elsewhere.
    let held = null;
    document.addEventListener('focusin', (e) => {
        const plot = e.target.closest && e.target.closest('.js-plotly-plot');
        held = plot && plot.parentElement ? plot.parentElement.closest('[id]') : null;
    });
    document.addEventListener('pointerdown', (e) => {
        if (!(held && e.target.closest && held.contains(e.target))) held = null;
    }, true);
    new MutationObserver(() => {
        const at = document.activeElement;
        if (!held || !held.isConnected || (at && at !== document.body)) return;
        const plot = held.querySelector('.js-plotly-plot');
        if (!plot) return;
        if (!plot.hasAttribute('tabindex')) plot.tabIndex = -1;
        plot.focus({preventScroll: true});
    }).observe(document.body, {childList: true, subtree: true});
    // Mended in the observer's own callback (a microtask of the change that added it), not in the next frame's adopt:
    // a placeholder shown by a demo was read by axe without its role in the frame between (issue 40: 2 serious
    // nodes after "Who reads whom?" on a fresh page, in 1 of 2 runs), and a dropdown's list is a Tab stop as soon
    // as it is open. A dropdown's open list (ul[role=listbox]) scrolls when its options need more room than the
    // screen leaves it, and chromium makes a box that scrolls with nothing focusable in it a Tab stop of its own: the
    // Tab from the dropdown went into its list, the dropdown's blur closed the list, and the focus fell to the page's
    // body (tests/browser/test_keyboard.py: the Tab after #train-task and #att-score under load). Its options are
    // chosen with the dropdown's arrow keys; the list is taken out of the tab order.
    const mend = (root) => {
        if (!root.querySelectorAll) return;
        for (const box of [root, ...root.querySelectorAll('.empty[aria-label]:not([role]), [role=listbox]')]) {
            if (box.matches('.empty[aria-label]:not([role])')) box.setAttribute('role', 'img');
            else if (box.matches('[role=listbox]:not([tabindex])')) box.tabIndex = -1;
        }
    };
    mend(document.body);
    new MutationObserver((records) => {
        for (const r of records) {
            if (r.type === 'attributes') mend(r.target);
            else for (const node of r.addedNodes) mend(node);
        }
    }).observe(document.body, {childList: true, subtree: true, attributeFilter: ['aria-label']});
    const keys = {ArrowDown: 1, ArrowUp: -1, Home: -Infinity, End: Infinity};
    const adopt = () => {
        for (const gd of document.querySelectorAll('.js-plotly-plot')) {
            const map = heatmap(gd);
            if (map && gd.tabIndex < 0) {
                gd.tabIndex = 0;
                gd.setAttribute('aria-keyshortcuts', 'ArrowUp ArrowDown Home End');
                gd.addEventListener('keydown', (e) => {
                    if (!(e.key in keys) || !heatmap(gd)) return;
                    e.preventDefault();
                    const step = keys[e.key];
                    gd.__row = Number.isFinite(step) ? (gd.__row === undefined ? 0 : gd.__row + step)
                        : (step < 0 ? 0 : Infinity);
                    say(gd);
                });
                gd.addEventListener('focus', () => {
                    said.textContent = 'Heatmap: the up and down arrow keys read each query row and its strongest key.';
                });
                gd.addEventListener('blur', () => { mark.style.display = 'none'; });
            }
        }
        // A table's box that scrolls (gradio's .virtual-table-viewport, between its grid and its rows) cannot take
        // the focus itself (a focusable box there is axe-critical aria-required-children): its first header cell
        // joins the tab order instead (a grid's cells may take the focus), and with the focus in the box its arrow
        // keys scroll it (axe's scrollable-region-focusable: the Train tab's two tables at 390, issue 40)
        const tabbable = ':is(button:not([disabled]), input:not([disabled]), a[href], [tabindex])'
            + ':not([tabindex^="-"])';  // a table's cell menu button has tabindex -1: not in the tab order
        for (const box of document.querySelectorAll('.js-plotly-plot, #demo-row, .virtual-table-viewport')) {
            const scrolls = box.scrollWidth > box.clientWidth + 1 || box.scrollHeight > box.clientHeight + 1;
            if (!scrolls || box.tabIndex >= 0 || box.querySelector(tabbable)) continue;
            const table = box.matches('.virtual-table-viewport');
            const cell = table && box.querySelector('[role=columnheader], [role=gridcell]');
            if (cell) cell.tabIndex = 0;
            else if (!table) box.tabIndex = 0;
        }
    };
    return adopt;  // app.py's SIDEWAYS_JS runs it at each change of the page, once a frame at most
}"""
