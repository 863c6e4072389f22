"""The real app in a real browser (Debian's chromium through Playwright), offline: every request that is not to
127.0.0.1 is aborted. The tests share one page and run in file order, like one visitor going through the tabs.

Each tab is driven by the functions of `tests.browser.tour`, which also make the README screenshots.
"""
from __future__ import annotations

import re
import statistics

import pytest

from tests.browser import tour
from tests.browser.conftest import MEASURED

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def assert_screenshot(page, path):
    tour.screenshot(page, path)
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 10_000, f"{path} is not a real screenshot"


def test_the_guard_aborts_requests_outside_localhost(browser):
    """The route used on every page really aborts an outside request (and would record it)."""
    page, guard = tour.new_page(browser)
    try:
        outcome = page.evaluate("""() => fetch('http://example.com/probe').then(r => 'loaded ' + r.status,
                                                                               e => 'failed: ' + e)""")
    finally:
        page.close()
    assert outcome.startswith("failed"), outcome
    assert guard.blocked == ["http://example.com/probe"]
    assert guard.finished == []


def test_every_tab_shows_its_content(lab, tmp_path):
    page = lab.page
    for key, label in tour.TABS.items():
        content = tour.visit(page, key)
        assert content.is_visible(), f"{label}: {tour.MAIN_CONTENT[key]} not visible"
        selected = [t.strip() for t in page.locator("[role=tab][aria-selected=true]").all_text_contents()]
        assert selected == [label]
        # only the selected tab's content is shown
        others = [k for k in tour.TABS if k != key and k != "positional"]
        assert not any(page.locator(tour.MAIN_CONTENT[k]).first.is_visible() for k in others), key
        assert_screenshot(page, tmp_path / f"{key}.png")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{k}.png" for k in tour.TABS)


def test_positional_tab_draws_the_encoding(lab, tmp_path):
    seen = tour.tour_positional(lab.page)
    assert seen["plots"] == 4
    assert "Sinusoidal encoding, 100 positions x 128 dimensions" in seen["plot_titles"]
    assert "Dot product between positions" in seen["plot_titles"]
    assert_screenshot(lab.page, tmp_path / "positional.png")


def test_attention_heatmap_follows_the_layer_and_head_sliders(lab, tmp_path):
    seen = tour.tour_attention(lab.page)
    assert re.fullmatch(r"\w[\w ]* attention, layer \d+, head \d+", seen["initial_title"]), seen["initial_title"]
    layer_move, head_move = seen["redraws"][0], seen["redraws"][-1]
    assert layer_move["slider"] == "att-layer" and head_move["slider"] == "att-head"
    assert layer_move["value"] != int(re.search(r"layer (\d+)", seen["initial_title"]).group(1))
    assert f"layer {layer_move['value']}, " in layer_move["title"]
    assert head_move["title"].endswith(f"layer {layer_move['value']}, head {head_move['value']}")
    assert head_move["title"] != layer_move["title"] != seen["initial_title"]
    # the other two plots follow the layer as well
    assert any(t.endswith(f"all heads of layer {layer_move['value']}") for t in seen["plot_titles"])
    ms = [r["ms"] for r in seen["redraws"]]
    MEASURED["attention redraw (slider change -> new heatmap title)"] = (
        f"median {statistics.median(ms):.0f} ms of {len(ms)} ("
        + ", ".join(f"{r['slider'][4:]}={r['value']} {r['ms']:.0f} ms" for r in seen["redraws"]) + ")")
    print(f"attention redraw: {ms} ms")
    assert max(ms) < 20_000
    assert_screenshot(lab.page, tmp_path / "attention.png")


def test_generate_fills_the_output(lab, tmp_path):
    seen = tour.tour_generate(lab.page, "attention")
    assert seen["output_before"] == "", seen
    assert seen["output"].strip(), seen
    assert seen["notice"], seen
    assert any("looked" in t for t in seen["plot_titles"]), seen["plot_titles"]
    MEASURED["generate 'attention'"] = f"{seen['output']!r} in {seen['seconds']:.2f} s"
    print(f"generate: {seen['input']!r} -> {seen['output']!r} in {seen['seconds']:.2f} s")
    assert_screenshot(lab.page, tmp_path / "generate.png")


@pytest.fixture(scope="module")
def trained(lab) -> dict:
    """What the Train tab's tour saw (a run started, then stopped), made once for the tests that read it: each asks
    for it, so none depends on another having run first."""
    return tour.tour_train(lab.page)


def test_train_streams_curves_and_stops_into_a_checkpoint(lab, trained, tmp_path):
    seen = trained
    assert seen["first_points"] >= 1
    assert seen["points_before_stop"] > seen["first_points"], seen
    steps = [s for s in seen["statuses"] if re.match(r"step [\d,]+ / [\d,]+ · loss", s)]
    assert len(steps) >= 3, seen["statuses"]  # the first point, then at least two more changes
    stopped = [s for s in seen["statuses"] if s.startswith("Training stopped after")]
    assert stopped, seen["statuses"]
    assert seen["final_points"] >= seen["points_before_stop"]
    mine = [c for c in seen["checkpoints"] if c.startswith("my reverse")]
    assert mine, seen["checkpoints"]
    assert f"“{mine[-1]}” is now in the checkpoint list" in stopped[-1]
    MEASURED["train: Start click -> first curve point"] = f"{seen['first_point_ms']:.0f} ms"
    print(f"train: first curve point {seen['first_point_ms']:.0f} ms after Start; statuses {len(seen['statuses'])}")
    assert_screenshot(lab.page, tmp_path / "train.png")


def test_the_stop_reply_does_not_hide_the_final_status(trained):
    """Stop only signals the run (a toast); the run's own last update stays in the status box."""
    print("statuses after Stop:", trained["statuses"][-3:])
    assert trained["final_status"].startswith("Training stopped after"), trained["statuses"][-3:]


def test_model_tab_shows_the_parameter_summary(lab, tmp_path):
    seen = tour.tour_model(lab.page)
    assert re.match(r"reverse: encoder-decoder, [\d,]+ parameters", seen["summary"]), seen["summary"]
    assert "Parameters of reverse" in seen["plot_titles"]
    assert_screenshot(lab.page, tmp_path / "model.png")


def test_a_model_trained_in_the_page_can_be_selected(lab, trained):
    """The checkpoint the Train tab made joins the shared dropdown and the Model tab describes it."""
    page = lab.page
    name = next(c for c in tour.checkpoint_choices(page) if c.startswith("my reverse"))
    tour.select_checkpoint(page, name)
    tour.show_tab(page, "model")  # the summary is drawn once the tab is shown, not only after an earlier test
    page.wait_for_function("n => document.querySelector('#model-summary').textContent.includes(n + ':')", arg=name)
    summary = tour.tour_model(page)["summary"]
    assert "d_model 64" in summary, summary  # the "tiny" preset
    tour.select_checkpoint(page, "reverse")


def test_the_app_worked_offline(lab):
    """Run last: everything the page loaded came from 127.0.0.1; anything else was aborted."""
    guard = lab.guard
    outside = [u for u in guard.finished if not guard.is_local(u)]
    MEASURED["blocked hosts (requests not to 127.0.0.1)"] = ", ".join(guard.blocked_hosts) or "none"
    print(f"requests let through: {len(guard.allowed)}, blocked: {guard.blocked}")
    assert guard.allowed, "the route saw no request: the guard was not active"
    assert not outside, f"requests outside 127.0.0.1 got a response: {outside}"
    assert all(not guard.is_local(u) for u in guard.blocked)
