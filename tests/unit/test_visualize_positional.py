"""Positional-encoding figures show the table they are given, and the similarity is the table's Gram matrix."""
import numpy as np
import pytest
import torch

from transformer.embeddings import sinusoidal_table
from visualize import pe_matrix, pe_side_by_side, pe_similarity, pe_waves


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
