"""visualize.class_answers: the class's guesses drawn as a heatmap on the model's axes (issue 39, item 4)."""
from __future__ import annotations

import numpy as np

from visualize.attention import head_heatmap
from visualize.class_answers import guess_heatmap
from visualize.reading import heatmap_cells
from visualize.sizes import MIN_CELL_PX, MIN_LABEL_PX

ROWS, COLUMNS = ["<s>", "n", "o", "n"], ["n", "o", "n", "</s>", " "]


def test_each_cell_says_its_count_and_is_coloured_by_its_share_of_the_row():
    """A row asked: each cell's text is its count, its value the count over the row's answers (the attention's
    0..1 scale: a row of guesses sums to 1); rows not asked are blank (NaN, no text); a row asked that nobody
    answered is all 0."""
    fig = guess_heatmap(ROWS, COLUMNS, [(1, (2, 0, 1, 0, 1)), (3, (0, 0, 0, 0, 0))])
    cells = heatmap_cells(fig.to_json())
    np.testing.assert_allclose(cells.z[1], [0.5, 0, 0.25, 0, 0.25])
    np.testing.assert_array_equal(cells.z[3], np.zeros(5))
    assert np.isnan(cells.z[[0, 2]]).all()
    main = fig.data[0]
    assert [list(r) for r in main.text] == [[""] * 5, ["2", "0", "1", "0", "1"], [""] * 5, ["0"] * 5]
    written = [t for t in fig.data if t.name.startswith("cell text")]
    shown = [[next((t.text[i][j] for t in written if t.text[i][j]), "") for j in range(5)] for i in range(4)]
    assert shown == [list(r) for r in main.text]  # every count written on its cell, once
    assert "4 answers" in cells.title


def test_its_axes_are_the_models_heatmaps():
    """Same rows and columns, read as the viewer reads them, as the model's heatmap of the same tokens (markup
    and spaces shown as they are there), so the two can be read side by side."""
    guesses = heatmap_cells(guess_heatmap(ROWS, COLUMNS, [(0, (1, 0, 0, 0, 0))]).to_json())
    model = heatmap_cells(head_heatmap(np.full((4, 5), 0.2), ROWS, COLUMNS, "m", narrow=True).to_json())
    assert (guesses.rows, guesses.columns) == (model.rows, model.columns) == (ROWS, ["n", "o", "n", "</s>", "␣"])


def test_its_cells_and_labels_keep_their_least_size_on_a_phone():
    """Drawn for a phone's box: every cell at least MIN_CELL_PX, every label at least MIN_LABEL_PX, for a short
    and a long input (a long one is wider than the phone, which scrolls it)."""
    for n in (5, 40):
        tokens = [f"t{i}" for i in range(n)]
        fig = guess_heatmap(tokens, tokens, [(n - 1, tuple(range(n)))])
        assert fig.layout.meta["cell_px"] >= MIN_CELL_PX
        assert fig.layout.xaxis.tickfont.size >= MIN_LABEL_PX and fig.layout.yaxis.tickfont.size >= MIN_LABEL_PX
        assert fig.layout.xaxis.tickvals is not None  # every key has its label
