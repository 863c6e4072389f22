"""RoPE, ALiBi and MLA in the real app, in Debian's chromium, offline (issue 12, item 3).

The Model tab's cache table lists MLA beside MHA / GQA / MQA with the bytes `cache_bytes_per_token` gives for the
checkpoint's MLA variant; the Positional encoding tab's RoPE and ALiBi sections, closed at first, draw their figures
for the selected checkpoint's d_k and number of heads, follow their controls, and follow a change of checkpoint.
The tests share one page and run in file order.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from tests.browser import tour
from transformer import TransformerConfig
from transformer.generate import cache_bytes_per_token

CHECKPOINTS = Path(__file__).resolve().parents[2] / "checkpoints"

# JS: the cells of every body row of a gr.Dataframe (gradio 6 draws them as div gridcells), as text.


def shipped_config(name: str) -> TransformerConfig:
    return TransformerConfig.from_dict(json.loads((CHECKPOINTS / name / "config.json").read_text())["model"])


def title(page, plot_id: str) -> str:
    return (page.locator(f"#{plot_id} .gtitle").text_content() or "").strip()


def wait_for_title(page, plot_id: str, expected: str) -> None:
    """Until the figure's title is `expected` (a figure redrawn for new values changes its title)."""
    page.wait_for_function("([id, t]) => ((document.querySelector(`#${id} .gtitle`) || {}).textContent || '')"
                           ".trim() === t", arg=[plot_id, expected])


def alibi_heads(page) -> list[tuple[int, str]]:
    """(head, slope text) of every subplot title of the ALiBi figure ("head 0" over "m = 1/4")."""
    texts = page.locator("#pe-alibi .annotation-text").all_text_contents()
    return [(int(h), m) for h, m in (re.fullmatch(r"head (\d+)\s*m = (\S+)", t.strip()).groups() for t in texts)]


def test_model_tab_lists_mla_with_the_librarys_bytes(lab):
    """The cache table of the default checkpoint (reverse) has its MHA / GQA / MQA rows and an MLA row labelled with
    its latent size, whose bytes per token are cache_bytes_per_token of the MLA variant (latent 4 d_k, by hand:
    layers x 4 d_k x 4 bytes); "this model" marks MHA, the checkpoint's own attention."""
    page = lab.page
    seen = tour.tour_model(lab.page)
    assert seen["summary"].startswith("reverse:"), seen["summary"]
    rows = tour.table_rows(page, "model-cache", at_least=4)
    cfg = shipped_config("reverse")
    mla = TransformerConfig.from_dict({**cfg.to_dict(), "attention": "mla", "n_kv_heads": None,
                                       "kv_latent_dim": None})
    assert [r[0] for r in rows] == [f"MHA ({cfg.n_heads} kv heads)", f"GQA ({cfg.n_heads // 2} kv heads)",
                                    "MQA (1 kv heads)", f"MLA (latent {4 * cfg.d_k})"], rows
    assert int(rows[-1][1]) == cache_bytes_per_token(mla) == cfg.n_decoder_layers * 4 * cfg.d_k * 4
    assert int(rows[0][1]) == 2 * cfg.n_decoder_layers * cfg.n_heads * cfg.d_k * 4
    assert [r[-1] for r in rows] == ["yes", "", "", ""]
    headers = [h.strip() for h in page.locator("#model-cache thead th").all_inner_texts()]
    assert "cache bytes / token" in headers, headers


def test_rope_and_alibi_sections_draw_for_the_checkpoints_sizes(lab):
    """Closed at first (nothing drawn); opened, RoPE draws the angles of the checkpoint's d_k (d_k / 2 pairs) on a
    mod-2π colour bar and two score-against-distance curves, and ALiBi one heatmap per head of the checkpoint,
    titled with the paper's slopes (4 heads: 1/4, 1/16, 1/64, 1/256)."""
    page = lab.page
    cfg = shipped_config("reverse")
    tour.visit(page, "positional")
    assert page.locator("#pe-rope-angles .js-plotly-plot").count() == 0
    assert page.locator("#pe-alibi .js-plotly-plot").count() == 0
    page.locator("#pe-rope-section > button").first.click()
    wait_for_title(page, "pe-rope-angles", f"RoPE angles, 100 positions x {cfg.d_k // 2} pairs")
    wait_for_title(page, "pe-rope-distance", f"Rotated q·k against distance, d_k {cfg.d_k}")
    assert "angle mod 2π" in page.locator("#pe-rope-angles .cbtitle").text_content()
    assert page.locator("#pe-rope-distance .legendtext").all_text_contents() == ["q = k = (1, …, 1)",
                                                                                 "random q and k"]
    assert "reverse" in page.locator("#pe-rope-note").text_content()
    page.locator("#pe-alibi-section > button").first.click()
    wait_for_title(page, "pe-alibi", f"ALiBi bias, {cfg.n_heads} heads, 12 positions")
    assert alibi_heads(page) == [(h, f"1/{4 ** (h + 1)}") for h in range(4)] and cfg.n_heads == 4
    assert "grey = masked (a future key)" in page.locator("#pe-alibi .legendtext").all_text_contents()


def test_the_controls_and_the_checkpoint_redraw_them(lab):
    """The Heads slider redraws ALiBi (8 heads: slopes 1/2 .. 1/256); choosing another checkpoint (induction: d_k
    16, 4 heads) sets both sections' controls to its sizes and redraws them."""
    page = lab.page
    tour.set_slider(page, "pe-alibi-heads", 8)
    wait_for_title(page, "pe-alibi", "ALiBi bias, 8 heads, 12 positions")
    assert alibi_heads(page) == [(h, f"1/{2 ** (h + 1)}") for h in range(8)]
    other = shipped_config("induction")
    assert (other.d_k, other.n_heads) != (shipped_config("reverse").d_k, 8)
    tour.select_checkpoint(page, "induction")
    wait_for_title(page, "pe-rope-angles", f"RoPE angles, 100 positions x {other.d_k // 2} pairs")
    wait_for_title(page, "pe-rope-distance", f"Rotated q·k against distance, d_k {other.d_k}")
    wait_for_title(page, "pe-alibi", f"ALiBi bias, {other.n_heads} heads, 12 positions")
    assert [h for h, _ in alibi_heads(page)] == list(range(other.n_heads))
    page.wait_for_function("() => document.querySelector('#pe-rope-note').textContent.includes('induction')")
    tour.select_checkpoint(page, "reverse")


def test_it_all_worked_offline(lab):
    """Run last: every response the page got came from 127.0.0.1, and it got it through the guard: the route saw
    requests, and every finished web request is one the guard let through (on a machine that is offline anyway,
    no outside response could arrive whatever the guard did: this is what shows the guard was in the path)."""
    guard = lab.guard
    assert guard.allowed, "the route saw no request: the guard was not active"
    web = [u for u in guard.finished if u.startswith(("http:", "https:", "ws:", "wss:"))]
    assert web and set(web) <= set(guard.allowed), sorted(set(web) - set(guard.allowed))[:5]
    assert not [u for u in guard.finished if not guard.is_local(u)]
