"""Demo clicks in a real browser: no figure that contradicts the demo's explanation is ever on screen.

Regression (issue 19): after a demo click the previous demo's head stayed on screen under the new demo's caption for
1-6 s ("Reading backwards" after "The causal mask" showed a causal triangle titled "decoder self attention" until
4.5 s). The page is sampled every 100 ms while the demos are clicked in the order a class would see them.
"""
from __future__ import annotations

import pytest

from tests.browser import tour
from tests.browser.conftest import MEASURED

# Every 100 ms: the bold label the demo caption starts with, and the one-head heatmap's title ('' when blank).
_SAMPLE = """() => {
    window.__samples = [];
    const read = () => {
        const caption = document.querySelector('#demo-explain strong');
        const title = document.querySelector('#att-one .gtitle');
        window.__samples.push({ms: performance.now(), caption: caption ? caption.textContent : '',
                               title: title ? title.textContent : ''});
    };
    read();
    window.__sampler = setInterval(read, 100);
}"""
ORDER = ["The causal mask", "Reading backwards", "Previous-token head", "Induction head", "Attention forming",
         "The causal mask"]


def _expected_title(demo) -> str:
    """The title of the head the demo opens: the best head on its score (tabs.attention.page.focus_head) of the record
    the Attention tab computes for its checkpoint and input."""
    from tabs.attention.page import focus_head
    from tabs.attention.record import _shipped_record

    kind, layer, head = focus_head(_shipped_record(demo.ckpt, demo.text, ""), (demo.kind, demo.score))
    return f"{kind} attention, layer {layer}, head {head}"


def test_no_demo_click_shows_a_head_its_caption_does_not_name(lab):
    """After each click, in ORDER: while the caption names demo D, the heatmap is blank or shows exactly D's head
    (kind, layer and head), and D's head is drawn within the timeout."""
    from tabs.demos import available_demos

    demos = {d.label: d for d in available_demos()}
    missing = [label for label in ORDER if label not in demos]
    if missing:
        pytest.fail(f"demos missing from the row (their checkpoints are not here?): {missing}")
    page = lab.page
    # the page's own first heatmap (computed at its load) is drawn before the first click: under load its reply came
    # after the first demo click and drew the load's head under the demo's caption (the full suite at load 16)
    tour.visit(page, "attention")
    page.evaluate(_SAMPLE)
    try:
        for i, label in enumerate(ORDER, 1):
            demo = demos[label]
            tour.click_demo(page, label)
            clicked = page.evaluate("() => performance.now()")
            page.locator("#demo-explain", has_text=label).wait_for()
            if demo.kind:
                expected = _expected_title(demo)
                page.wait_for_function("t => (document.querySelector('#att-one .gtitle') || {}).textContent === t",
                                       arg=expected)
                drawn = page.evaluate("() => performance.now()")
                page.wait_for_timeout(1500)  # any late reply would land now
                samples = [s for s in page.evaluate("() => window.__samples")
                           if s["ms"] >= clicked and s["caption"].rstrip(".") == label]
                wrong = [s for s in samples if s["title"] not in ("", expected)]
                blank = sum(s["title"] == "" for s in samples)
                MEASURED[f"demo click {i} {label!r}"] = (f"{len(samples)} samples at 100 ms: {blank} blank, "
                                                     f"{len(samples) - blank - len(wrong)} the demo's head, "
                                                     f"{len(wrong)} another; drawn {drawn - clicked:.0f} ms after "
                                                     f"the click")
                assert not wrong, (f"under the caption {label!r} the heatmap showed "
                                   f"{sorted({s['title'] for s in wrong})} (expected blank or {expected!r})")
            else:
                page.wait_for_timeout(1000)
    finally:
        page.evaluate("() => clearInterval(window.__sampler)")
