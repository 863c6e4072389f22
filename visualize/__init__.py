"""Plotly figures for Attention Lab: plain data in (arrays, tensors, lists, tokens), a go.Figure out.

Nothing here runs a model or imports gradio; app.py computes the numbers and hands them over. What a live run
redraws many times (the Train tab's curves and attention map) is plain SVG instead: visualize.line_chart and
visualize.heatmap_svg (a plotly figure per update kept the page's memory growing, issue 19).
"""
from .attention import grid_columns, head_heatmap, layer_grid, narrow_page
from .generation import attended_bar, bars_shown, token_probabilities
from .head_scores import overview, scores_table
from .lens import final_token_curve, logit_lens_grid
from .model import parameter_breakdown
from .patching import patching_grid
from .positional import pe_matrix, pe_side_by_side, pe_similarity, pe_waves
from .sizes import box_width
from .relative_positions import alibi_bias_figure, rope_angles_figure, rope_distance_figure
from .steps import qk_steps, rollout_heatmap
from .style import axis_labels, empty_curves

__all__ = ["bars_shown", "box_width", "head_heatmap", "layer_grid", "grid_columns", "narrow_page", "overview", "scores_table", "attended_bar",
           "token_probabilities",
           "pe_matrix", "pe_waves", "pe_similarity", "pe_side_by_side", "empty_curves",
           "parameter_breakdown", "axis_labels", "qk_steps", "rollout_heatmap",
           "rope_angles_figure", "rope_distance_figure", "alibi_bias_figure", "logit_lens_grid", "final_token_curve",
           "patching_grid"]
