"""The Train tab's stream stays light, and a comparison can be stopped (issue 19), without a browser.

- a run sends at most TRAINING["updates_per_second"] updates a second, the samples and the attention only after an
  evaluation, and the trained model carries its last evaluation's metrics (the Model tab shows them);
- Stop during a comparison ends it with "stopped", the rows of the variants trained before, and every curve as far
  as it got;
- the comparison tables: at most 8 columns, human headers with units, no empty column, real headers when empty.
"""
from __future__ import annotations

import re
import time
import xml.etree.ElementTree as ET

import pandas as pd
import pytest

from limits import TRAINING
from store.user_models import UserModels
from tabs.train.comparison import run_comparison_session
from tabs.train.live_heatmap import LiveHeatmap
from tabs.train.request import TrainingRequest
from tabs.train.session import run_training_session
from tabs.train.stop_signal import StopSignal
from tests.chart_reader import pixel_tolerance, read_chart
from visualize.comparison_table import MAX_MAIN_COLUMNS, UNITS_NOTE, comparison_tables


def request(**kw):
    base = dict(source="task", task="reverse", text=None, upload=None, hub=None, layers=1, heads=4, d_model=32,
                lr=3e-3, steps=100, batch_size=16)
    return TrainingRequest(**{**base, **kw})


def test_updates_are_spaced_and_evaluations_are_sent_once():
    """Invariant of the throttle: between the first training update and the last (which ends the run) there are at
    most updates_per_second updates a second; samples and attention come only with an update after an evaluation,
    each evaluation's once; the last update says "finished" and the model has the last evaluation's exact match."""
    store, times, updates = UserModels(), [], []
    for update in run_training_session(request(), store, "k"):
        times.append(time.perf_counter())
        updates.append(update)
    streamed = len(updates) - 3  # updates after the first training update, the last left out
    assert streamed <= TRAINING["updates_per_second"] * (times[-2] - times[1]) + 1, (len(updates), times)
    evaluations = 100 // 25  # eval_every = max(25, steps // 30)
    with_attention = [u for u in updates if u.attention is not None]
    assert 1 <= len(with_attention) <= evaluations
    assert all((u.samples is None) == (u.attention is None) for u in updates[1:])
    last = updates[-1]
    assert last.done and "**Training finished**" in last.status
    _, _, info = store.get("k", last.name)
    assert 0.0 <= info["metrics"]["exact_match"] <= 1.0 and info["metrics"]["val_loss"] > 0
    assert f"exact match {info['metrics']['exact_match']:.0%}" in last.status
    # the chart's last points are the run's last step and evaluation, as the status line reports them
    chart = read_chart(last.curves)["curves"]
    dx, dy = pixel_tolerance(last.curves)
    _, dy_right = pixel_tolerance(last.curves, "right")
    number = {what: float(re.search(rf"{what} ([\d.]+)", last.status).group(1))
              for what in ("· loss", "validation loss", "exact match")}
    assert chart["train loss"]["x"][-1] == pytest.approx(last.total, abs=dx)
    assert chart["train loss"]["y"][-1] == pytest.approx(number["· loss"], abs=dy + 5e-4)
    assert chart["validation loss"]["y"][-1] == pytest.approx(number["validation loss"], abs=dy + 5e-4)
    assert chart["exact match (%)"]["y"][-1] == pytest.approx(number["exact match"], abs=dy_right + 0.5)
    assert len(chart["validation loss"]["x"]) == evaluations == len(chart["exact match (%)"]["x"])


def _title(svg: str) -> str:
    return ET.fromstring(svg).find("{http://www.w3.org/2000/svg}text[@class='title']").text


def test_the_live_map_keeps_its_head_across_evaluations():
    """Regression: the map switched head at every evaluation (0 -> 2 -> 3 -> 0). The first evaluation picks the
    sharpest head, later ones keep it; a head the user picks is kept too."""
    patterns = [u.attention for u in run_training_session(request(steps=300), UserModels(), "k")
                if u.attention is not None]
    assert len(patterns) >= 2
    live = LiveHeatmap()
    first = live.show(patterns[0], 25)
    head = live.head
    assert head == patterns[0].sharpest_head(layer=0)[1]
    for step, pattern in enumerate(patterns[1:], 2):
        assert _title(live.show(pattern, 25 * step)).endswith(f"head {head} (step {25 * step})")
    other = (head + 1) % 4
    live.choose(other)
    assert _title(live.show(patterns[0], 999)).endswith(f"head {other} (step 999)")
    assert _title(first).startswith("cross attention, last layer")


STEPS = 200  # per variant: long enough that Stop lands inside the second one


def _stopped_comparison(stop_when):
    control = StopSignal()
    updates = []
    for update in run_comparison_session(request(steps=STEPS, d_model=16), "kv-heads", control=control):
        updates.append(update)
        if stop_when(update[0]):
            control.set()
    return updates


def test_stop_during_a_comparison_keeps_the_finished_rows_and_the_partial_curves():
    """Stop while GQA trains: the status says stopped, the table has MHA's row only, the plot keeps MHA's whole
    curve and GQA's partial one; no exception reaches the page."""
    def gqa_started(figure):
        return len(read_chart(figure)["curves"]["GQA (2 kv heads)"]["x"]) > 0

    updates = _stopped_comparison(gqa_started)
    figure, status, table, details = updates[-1]
    assert "**Comparison stopped** during GQA (2 kv heads)" in status and "the 1 variant" in status
    assert list(table["Variant"]) == ["MHA (4 kv heads)"] and list(details["KV heads"]) == [4]
    curves = {name: c["x"] for name, c in read_chart(figure)["curves"].items()}
    dx, _ = pixel_tolerance(figure)
    steps = details["Steps"].iloc[0]  # MHA's steps: STEPS, or fewer if its time ran out on a busy machine
    assert curves["MHA (4 kv heads)"][-1] == pytest.approx(steps, abs=dx)
    assert 0 < len(curves["GQA (2 kv heads)"]) and curves["GQA (2 kv heads)"][-1] < STEPS - dx
    assert "MQA (1 kv heads)" not in curves and read_chart(figure)["legend"] == list(curves), \
        "after Stop the legend names only the variants with a curve (issue 29, item 10)"


def test_stop_before_any_variant_finished_says_there_is_no_table():
    updates = _stopped_comparison(lambda figure: any(len(c["x"]) for c in read_chart(figure)["curves"].values()))
    figure, status, table, details = updates[-1]
    assert "no variant had finished" in status and table.empty and "Variant" in table.columns


ROW = dict(variant="MHA (4 kv heads)", n_heads=4, n_kv_heads=4, parameters=1000, kv_cache_bytes_per_token=256,
           decode_tokens_per_sec=812.3, steps=10, train_seconds=1.23, final_train_loss=1.5, val_loss=1.6,
           exact_match=0.046875, nats_per_char=None, attention="mha", pos_encoding="sinusoidal",
           train_tokens_per_sec=5000.0, mean_attended_distance=1.234)


@pytest.mark.parametrize("row, absent", [(ROW, "Nats/char"),
                                         ({**ROW, "exact_match": None, "nats_per_char": 1.9}, "Exact %")])
def test_comparison_table_has_short_headers_percent_and_no_empty_column(row, absent):
    """Regression: raw headers (kv_cache_bytes_per_token), 16 columns, exact match as 0.046875, an empty
    nats_per_char column for a task; then headers with their units that made the table 1,511 px wide in a
    1,216 px box at 1280 (issue 29, item 10). Every header is at most 12 characters of words, its unit said in
    UNITS_NOTE; exact match is in percent."""
    main, details = comparison_tables([row])
    assert len(main.columns) <= MAX_MAIN_COLUMNS and absent not in main.columns
    assert all(not h.islower() or " " in h for h in main.columns), "no raw field names"
    assert not any("_" in h for h in list(main.columns) + list(details.columns))
    assert max(len(h) for h in main.columns) <= 12, list(main.columns)
    assert all(f"{h}:" in UNITS_NOTE for h in main.columns if h != "Variant"), "each header explained"
    if row["exact_match"] is not None:
        assert main["Exact %"][0] == 4.7
    assert main["KV cache"][0] == "256" and details["Positions"][0] == "sinusoidal"
    assert not main.isna().all().any(), "no empty column"


def test_counts_have_thousands_separators():
    """Oracle: Python's "{:,}" format. Regression (issue 29, item 10): 1234567 parameters were written 1234567."""
    main, details = comparison_tables([{**ROW, "parameters": 1234567, "kv_cache_bytes_per_token": 4096,
                                        "decode_tokens_per_sec": 12345.6, "train_tokens_per_sec": 54321.2}])
    assert main["Parameters"][0] == "1,234,567" and main["KV cache"][0] == "4,096"
    assert main["Decode tok/s"][0] == "12,346" and details["Training (tokens/s)"][0] == "54,321"


def test_an_empty_comparison_table_has_its_headers():
    """Regression: before any comparison the table showed gradio's placeholder headers "1 2 3"."""
    main, details = comparison_tables([])
    assert isinstance(main, pd.DataFrame) and main.empty and main.columns[0] == "Variant"
    assert "KV cache" in main.columns and "KV heads" in details.columns


def test_a_validation_loss_climbing_back_is_called_overfitting():
    """Regression (issue 19): overfitting on pasted text got no hint. A validation loss 5 % above its best is."""
    from tabs.train.session import overfitting

    assert overfitting([2.0, 1.5, 1.6]) and overfitting([3.0, 1.2, 1.3, 1.4])
    assert not overfitting([2.0, 1.5, 1.55]) and not overfitting([2.0, 1.5, 1.4]) and not overfitting([1.0, 2.0])


def test_a_task_run_is_never_called_overfitting():
    """Regression (issue 19, noticed on "Attention forming"): the status of a reverse run said the model was
    memorising its text when its validation loss went 0.001 -> 0.002. A task draws fresh examples every step: the
    note is for text runs only."""
    from tabs.train.session import _History, _status
    from transformer.train import EvalEvent, StepEvent

    step = StepEvent(300, 0.01, 1e-3, 1000.0, 10.0, 1.0)
    evaluation = EvalEvent(300, 0.002, 10.0, 1.0, 1.0, [], None)
    for task, noted in ((True, False), (False, True)):
        history = _History(task=task)
        history.val_losses = [2.0, 0.001, 0.002]
        assert ("memorising" in _status(step, evaluation, 3000, history)) is noted
