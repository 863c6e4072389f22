"""tabs.figure_export: a figure's HTML file is written into the bounded export folder, once per figure."""
from __future__ import annotations

import plotly.graph_objects as go
import pytest
from gradio.components.plot import PlotData

from checks import UserError
from store.exports import ExportFolder
from tabs import figure_export


@pytest.fixture
def small_folder(tmp_path, monkeypatch):
    folder = ExportFolder(max_exports=3, parent=tmp_path)
    monkeypatch.setattr(figure_export, "EXPORTS", folder)
    return folder


def _plot(i: int) -> PlotData:
    return PlotData(type="plotly", plot=go.Figure(go.Heatmap(z=[[i, 1], [2, 3]])).to_json())


def test_the_export_folder_stays_bounded_and_one_figure_is_one_file(small_folder):
    """Invariant: after 8 different figures the folder holds the last 3 (max_exports), no more; the same figure
    asked twice is the same file, not a second copy."""
    paths = [figure_export.figure_html(_plot(i), "attention-head").file for i in range(8)]
    folders = [p for p in small_folder.root.iterdir() if p.is_dir()]
    assert len(folders) == 3 and len(set(paths)) == 8
    saved = figure_export.figure_html(_plot(7), "attention-head")
    again, said = saved.file, saved.said
    assert again == paths[-1] and len([p for p in small_folder.root.iterdir() if p.is_dir()]) == 3
    assert said.startswith("attention-head.html") and small_folder.size_bytes() < 3 * 6_000_000


def test_no_figure_is_refused_in_words(small_folder):
    """Refusal: a section that has drawn nothing yet says so, and writes nothing."""
    with pytest.raises(UserError, match="No figure here yet"):
        figure_export.figure_html(None, "attention-head")
    assert small_folder.root is None
