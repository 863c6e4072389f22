"""Drawing the Attention tab's figures from a stored record: one head, the layer's heads, the layers x heads
overview and the per-head table, in the view the switches ask for."""
from __future__ import annotations

import visualize as viz
from transformer.interpretability.analysis import LOW_IS_INTERESTING

from checks import check_choice, check_index
from tabs.attention.translation_view import GOLD_SCORE, gold_scores, with_gold
from tabs.attention.views import SHOW, cell_value, view_pattern, view_title

SCORES = ["entropy", "mean distance", "diagonal", "anti-diagonal", "previous token", "duplicate token", "induction",
          GOLD_SCORE]  # the last: translation verses with gold links only (tabs.attention.translation_view)


def selected(record, kind, layer, head, view=(SHOW[0], False, None, None)):
    """The pattern of `kind` as `view` = (show, words, made_by, request) asks (tabs.attention.views), and the
    layer and head, clamped to it."""
    pattern = view_pattern(record, kind, *view)
    L, H = pattern.shape
    layer = check_index(layer, "layer", L)
    head = check_index(head, "head", H)
    return pattern, layer, head


def draw_figures(record, kind, layer, head, score, parts=("one", "grid", "overview", "table"),
                 view=(SHOW[0], False, None, None), width=None):
    """The figures of the tab from the stored record: one head, the layer's heads, the overview and the per-head
    table (or the `parts` asked for), in the `view` the switches ask for (the value-weighted norms cost one
    forward pass per record and kind, cached), the layer's heads in as many columns as a page `width` px wide
    holds (visualize.grid_columns); nothing while there is no record (a new input is on its way, or it was
    refused)."""
    if record is None:
        return (None,) * len(parts)
    pattern, layer, head = selected(record, kind, layer, head, view)
    kind = pattern.kind
    score = check_choice(score, "overview colour", SCORES)
    mask = pattern.drawn_mask
    scores = {**pattern.scores(), **gold_scores(record, kind)}
    shown = score if score in scores else "entropy"
    why = ("needs a held-out verse and its reference Spanish (translate-en-es)" if score == GOLD_SCORE
           else "is a self-attention score on tokens")
    title = f"{shown} of every head ({kind})" if shown == score else f"{score} {why}; {shown} of every head ({kind})"
    low = LOW_IS_INTERESTING | {GOLD_SCORE}
    what = view_title(kind, view[0], view[1])
    build = {
        "one": lambda: with_gold(viz.head_heatmap(pattern.weights[layer, head], pattern.query_tokens,
                                                  pattern.key_tokens, title=f"{what}, layer {layer}, head {head}",
                                                  mask=mask, narrow=viz.narrow_page(width),
                                                  value=cell_value(view[0])),
                                 record, kind, layer, head, bool(view[1]), viz.narrow_page(width)),
        "grid": lambda: viz.layer_grid(pattern.weights[layer], pattern.query_tokens, pattern.key_tokens,
                                       title=f"{what}, all heads of layer {layer}", mask=mask,
                                       cols=viz.grid_columns(width), scale=not viz.narrow_page(width),
                                       value=cell_value(view[0]), box_px=viz.box_width(width) if width else None),
        "overview": lambda: viz.overview(scores[shown], shown, title=title,
                                         low_is_interesting=shown in low),
        "table": lambda: viz.scores_table(scores)}
    return tuple(build[part]() for part in parts)
