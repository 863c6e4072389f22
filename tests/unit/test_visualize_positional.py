"""Positional-encoding figures show the table they are given, and the similarity is the table's Gram matrix; the
RoPE and ALiBi figures show exactly what transformer.positions.rotary and transformer.positions.alibi compute."""
import math

import numpy as np
import pytest
import torch

from transformer.positions.alibi import alibi_bias, alibi_slopes
from transformer.embeddings import sinusoidal_table
from transformer.positions.rotary import rope_angles, rotated_dot_products
from visualize import (alibi_bias_figure, pe_matrix, pe_side_by_side, pe_similarity, pe_waves, rope_angles_figure,
                       rope_distance_figure)
from visualize.relative_positions import slope_text


@pytest.fixture
def table():
    return sinusoidal_table(20, 8)  # (L=20, D=8)


def test_pe_matrix_shows_the_table_centred_on_zero(table):
    """z is the table itself (positions down, dimensions across) on a diverging scale with 0 in the middle."""
    fig = pe_matrix(table)
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), table.numpy())
    assert fig.data[0].zmid == 0
    assert fig.layout.yaxis.autorange == "reversed"


def test_pe_waves_one_curve_per_dimension(table):
    """Curve k is column dims[k] over the positions; even dims are named sin, odd cos (section 3.5)."""
    fig = pe_waves(table, [4, 5])
    assert [t.name for t in fig.data] == ["dim 4 (sin)", "dim 5 (cos)"]
    np.testing.assert_array_equal(np.asarray(fig.data[1].y), table[:, 5].numpy())
    assert list(fig.data[0].x) == list(range(20))
    # oracle: dimension 0 is sin(pos), dimension 1 is cos(pos)
    np.testing.assert_allclose(np.asarray(pe_waves(table, [0]).data[0].y), np.sin(np.arange(20)), atol=1e-6)


def test_pe_waves_labels_override_and_bad_dims_raise(table):
    """A learned table has no sin/cos: the caller names the curves. Out-of-range dims are an error."""
    assert [t.name for t in pe_waves(table, [0, 3], labels=["a", "b"]).data] == ["a", "b"]
    with pytest.raises(ValueError):
        pe_waves(table, [8])
    with pytest.raises(ValueError):
        pe_waves(table, [0, 1], labels=["only one"])


def test_pe_similarity_is_table_times_its_transpose(table):
    """Cell (i, j) is the dot product of positions i and j; for sinusoids the diagonal is d_model / 2."""
    fig = pe_similarity(table)
    z = np.asarray(fig.data[0].z)
    np.testing.assert_allclose(z, table.numpy() @ table.numpy().T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.diag(z), 4.0, atol=1e-5)  # sin^2 + cos^2 = 1, four pairs
    np.testing.assert_allclose(z, z.T)


def test_pe_side_by_side_own_colour_range_each(table):
    """Each panel shows its own table, titled, with a range fitted to it (a learned table's scale differs)."""
    learned = torch.randn(16, 8, generator=torch.Generator().manual_seed(0)) * 0.02
    fig = pe_side_by_side(table, learned)
    assert [a.text for a in fig.layout.annotations] == ["sinusoidal (fixed)", "learned (trained)"]
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), table.numpy())
    np.testing.assert_array_equal(np.asarray(fig.data[1].z), learned.numpy())
    assert fig.data[0].zmax == pytest.approx(float(table.abs().max()))
    assert fig.data[1].zmax == pytest.approx(float(learned.abs().max()))
    assert fig.data[1].zmin == -fig.data[1].zmax


def test_pe_side_by_side_stacks_with_each_colour_bar_beside_its_panel(table):
    """The tables are stacked on one shared dimension axis (their stripes line up, and a phone fits them); each
    colour bar spans its own panel's height only, so no bar sits on the other panel's axis title."""
    fig = pe_side_by_side(table, table * 0.5)
    layout = fig.layout
    assert layout.xaxis.matches == "x2" or layout.xaxis2.matches == "x"  # shared dimension axis
    assert [layout.xaxis.title.text, layout.xaxis2.title.text] == [None, "dimension"]  # written once, at the bottom
    for trace, axis in zip(fig.data, (layout.yaxis, layout.yaxis2)):
        bottom, top = axis.domain
        bar = trace.colorbar
        assert bar.y - bar.len / 2 >= bottom - 1e-9 and bar.y + bar.len / 2 <= top + 1e-9


# --- relative positions: RoPE and ALiBi (visualize/relative_positions.py) -------------------------------------


def test_rope_angles_figure_is_the_angle_mod_two_pi():
    """z equals rope_angles mod 2π for the same positions and d_k (rows = positions, columns = pairs) on a fixed
    0..2π scale; the hover keeps the full angle. Oracle by hand: pair 0 turns by 1 rad per position."""
    angles = rope_angles(torch.arange(30), 16)  # (30, 8)
    fig = rope_angles_figure(angles)
    z = np.asarray(fig.data[0].z)
    np.testing.assert_allclose(z, np.mod(angles.numpy(), 2 * math.pi), atol=1e-12)
    np.testing.assert_allclose(z[:, 0], np.mod(np.arange(30.0), 2 * math.pi), atol=1e-12)
    np.testing.assert_array_equal(np.asarray(fig.data[0].customdata), angles.numpy())
    assert (fig.data[0].zmin, fig.data[0].zmax) == (0, pytest.approx(2 * math.pi))
    assert ((z >= 0) & (z < 2 * math.pi)).all()
    assert fig.layout.yaxis.autorange == "reversed"


def test_rope_distance_figure_plots_the_rotated_dot_products():
    """Each curve's y is rotated_dot_products for those distances, x the distances. Oracle: with q = k = ones,
    <R_m q, R_n q> = sum over pairs of 2 cos((n - m) theta_i), theta_i = 10000^(-2i/d_k)."""
    d_k, distances = 8, torch.arange(-20, 21)
    ones = torch.ones(d_k)
    q, k = torch.randn(2, d_k, generator=torch.Generator().manual_seed(3))
    curves = {"q = k": rotated_dot_products(ones, ones, distances), "random": rotated_dot_products(q, k, distances)}
    fig = rope_distance_figure(distances, curves)
    assert [t.name for t in fig.data] == ["q = k", "random"]
    for trace, scores in zip(fig.data, curves.values()):
        np.testing.assert_array_equal(np.asarray(trace.x), distances.numpy())
        np.testing.assert_array_equal(np.asarray(trace.y), scores.numpy())
    theta = 10000.0 ** (-np.arange(0, d_k, 2) / d_k)  # (d_k / 2,)
    by_hand = 2 * np.cos(np.arange(-20, 21)[:, None] * theta[None, :]).sum(axis=1)
    np.testing.assert_allclose(np.asarray(fig.data[0].y), by_hand, rtol=1e-5, atol=1e-5)
    assert len({t.line.dash for t in fig.data}) == 2  # coinciding curves stay distinguishable


def test_rope_distance_figure_refuses_mismatched_curves():
    with pytest.raises(ValueError, match="3 values for 5 distances"):
        rope_distance_figure(torch.arange(5), {"short": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match="empty"):
        rope_distance_figure(torch.arange(5), {})


def test_alibi_bias_figure_shows_each_heads_bias_with_the_future_masked():
    """Head h's z equals alibi_bias[h] where the key is not after the query, and is empty (drawn grey) above the
    diagonal; one shared colour scale from the steepest penalty to 0. Oracle by hand: bias = -m_h (i - j), with
    the paper's slopes for 4 heads 1/4, 1/16, 1/64, 1/256, written in the subplot titles."""
    slopes = alibi_slopes(4)
    positions = torch.arange(6)
    bias = alibi_bias(slopes, positions, positions)  # (4, 6, 6)
    fig = alibi_bias_figure(bias, slopes, causal=True)
    heads = [t for t in fig.data if t.type == "heatmap" and t.name.startswith("head")]
    masked = [t for t in fig.data if t.type == "heatmap" and t.name == "masked"]
    assert len(heads) == len(masked) == 4
    future = np.triu(np.ones((6, 6), bool), k=1)
    i, j = np.meshgrid(np.arange(6), np.arange(6), indexing="ij")
    for h, (trace, grey) in enumerate(zip(heads, masked)):
        z = np.asarray(trace.z, dtype=float)
        assert np.isnan(z[future]).all()
        np.testing.assert_allclose(z[~future], bias[h].numpy()[~future])
        np.testing.assert_allclose(z[~future], (-float(slopes[h]) * (i - j))[~future], rtol=1e-6)
        assert np.isnan(np.asarray(grey.z, dtype=float)[~future]).all() and not np.isnan(
            np.asarray(grey.z, dtype=float)[future]).any()
    assert [a.text for a in fig.layout.annotations] == [f"head {h}<br>m = 1/{4 ** (h + 1)}" for h in range(4)]
    assert fig.layout.coloraxis.cmax == 0
    assert fig.layout.coloraxis.cmin == pytest.approx(-0.25 * 5)  # head 0, the farthest allowed key


def test_alibi_bias_figure_without_the_mask_draws_the_whole_matrix():
    """An encoder's bias (both directions): every cell drawn, nothing grey, no legend entry for masking."""
    slopes = alibi_slopes(3)
    bias = alibi_bias(slopes, torch.arange(5), torch.arange(5))  # (3, 5, 5)
    fig = alibi_bias_figure(bias, slopes, causal=False)
    assert [t.name for t in fig.data] == ["head 0", "head 1", "head 2"]
    for h, trace in enumerate(fig.data):
        np.testing.assert_allclose(np.asarray(trace.z, dtype=float), bias[h].numpy())
    with pytest.raises(ValueError, match="2 slopes for 3 heads"):
        alibi_bias_figure(bias, slopes[:2])


def test_slope_text_writes_powers_of_two_as_fractions():
    """The paper's slopes are powers of two for 2^k heads (1/2 .. 1/256); the others keep three digits."""
    assert [slope_text(float(m)) for m in alibi_slopes(8)] == [f"1/{2 ** (h + 1)}" for h in range(8)]
    assert slope_text(2 ** -0.5) == "0.707"
    assert slope_text(0.3) == "0.3"
