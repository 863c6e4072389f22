"""The SVG attention map (visualize.heatmap_svg): every cell's hover names its query, key and weight as given, its
colour is the attention scale's at that weight, masked cells are grey, tokens are escaped."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from visualize.heatmap_svg import attention_colour, head_heatmap_svg
from visualize.style import MASKED_COLOR

SVG = "{http://www.w3.org/2000/svg}"


def _cells(svg: str) -> dict:
    return {(int(r.get("data-q")), int(r.get("data-k"))): r for r in ET.fromstring(svg).iter(f"{SVG}rect")
            if r.get("class") == "cell"}


def test_every_cell_is_its_weight_on_the_attention_scale():
    """Oracle: one cell per (query, key); its hover's weight is the weight (to 3 decimals), its fill the scale's
    colour there; the masked (causal) cells are grey and say so."""
    rng = np.random.default_rng(1)
    w = np.tril(rng.random((6, 6)))
    w /= w.sum(1, keepdims=True)
    mask = np.tril(np.ones((6, 6), bool))
    svg = head_heatmap_svg(w, list("abcdef"), list("abcdef"), title="decoder self", mask=mask)
    cells = _cells(svg)
    assert sorted(cells) == [(i, j) for i in range(6) for j in range(6)]
    for (i, j), rect in cells.items():
        hover = rect.find(f"{SVG}title").text
        assert hover.startswith(f"query {i} '{'abcdef'[i]}' · key {j} '{'abcdef'[j]}': ")
        if mask[i, j]:
            assert float(re.search(r": ([\d.]+)$", hover).group(1)) == pytest.approx(w[i, j], abs=5e-4)
            assert rect.get("fill") == attention_colour(w[i, j])
        else:
            assert rect.get("fill") == MASKED_COLOR and "masked" in hover
    assert attention_colour(0) == "rgb(255,255,255)" and attention_colour(1) == "rgb(8,48,107)"
    # darker for more weight: the colour's brightness falls monotonically along the scale
    brightness = [sum(int(v) for v in attention_colour(x)[4:-1].split(",")) for x in np.linspace(0, 1, 21)]
    assert all(a >= b for a, b in zip(brightness, brightness[1:]))


def test_tokens_are_escaped_and_whitespace_shown():
    svg = head_heatmap_svg(np.full((2, 3), 1 / 3), ["<s>", " "], ["${x}", "&", "</s>"], title="<b>t</b>")
    root = ET.fromstring(svg)
    labels = [t.text for t in root.iter(f"{SVG}text") if (t.get("class") or "").endswith("-label")]
    assert labels == ["<s>", "␣", "${x}", "&", "</s>"]
    assert "<b>" not in svg and "${" not in svg and "<s>" not in svg


def test_an_empty_map_says_its_message_and_a_bad_shape_is_refused():
    svg = head_heatmap_svg(np.zeros((0, 0)), [], [], message="Attention appears at step 50")
    assert _cells(svg) == {} and "Attention appears at step 50" in svg
    with pytest.raises(ValueError, match="2 queries x 3 keys"):
        head_heatmap_svg(np.zeros((2, 3)), ["a"], ["a", "b", "c"])
