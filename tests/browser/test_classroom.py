"""A teacher's flows in a real browser: the heatmap always shows the head the controls name (no stale reply), every
one-click demo opens what it claims, and switching heads off changes the model's output."""
from __future__ import annotations

import math
import re

import pytest

from tests.browser import tour
from store.catalogue import CHECKPOINTS
from tests.browser.conftest import MEASURED
from transformer import load_checkpoint
from transformer.interpretability.probe import record_attention

TITLE = "() => (document.querySelector('#att-one .gtitle') || {}).textContent || ''"


def _settle(page, ms: int = 1500) -> str:
    """Wait until the one-head title has not changed for `ms` milliseconds (every reply has arrived); return it."""
    return page.evaluate("""async ([ms, timeout]) => {
        const title = () => (document.querySelector('#att-one .gtitle') || {}).textContent || '';
        let last = title(), since = performance.now(); const t0 = performance.now();
        while (performance.now() - since < ms && performance.now() - t0 < timeout) {
            await new Promise(r => setTimeout(r, 50));
            if (title() !== last) { last = title(); since = performance.now(); }
        }
        return last;
    }""", [ms, tour.TIMEOUT_MS])


def _set_both(page, layer: int, head: int) -> None:
    """Type into the layer and the head number boxes and press Enter in each, back to back, as a teacher would."""
    for elem, value in (("att-layer", layer), ("att-head", head)):
        box = page.locator(f"#{elem} input[type=number]")
        box.fill(str(value))
        box.press("Enter")


def _controls(page) -> tuple[tuple[int, int], tuple[int, int]]:
    """((layer, head) in the number boxes, (layer, head) of the sliders)."""
    def read(kind):
        return tuple(int(float(page.locator(f"#{e} input[type={kind}]").input_value())) for e in ("att-layer", "att-head"))
    return read("number"), read("range")


def _calls_during(page, ms: int) -> list[str]:
    """The calls (queue/join requests, as "fn_index trigger_id") the page makes in the next `ms` milliseconds."""
    calls = []

    def seen(request):
        if "/queue/join" in request.url:
            body = request.post_data_json or {}
            calls.append(f"{body.get('fn_index')} {body.get('trigger_id')}")
    page.on("request", seen)
    page.wait_for_timeout(ms)
    page.remove_listener("request", seen)
    return calls


def test_quick_layer_and_head_changes_never_leave_a_stale_heatmap(lab):
    """Regression: type 5 in Layer + Enter, then 5 in Head + Enter: the controls said 5/5 and the title said
    "layer 5, head 6" (3 of 4 tries), because a slow layer redraw overwrote a fast head redraw. And once the last
    reply is in, the page asks for nothing more: the heatmap, its caption and the two-input view had re-run each
    other about twice a second until the page was reloaded (widgets.ui.separately), which left the page and the server
    busy for every later test (the Train tab's Start did not react within a minute)."""
    page = lab.page
    tour.show_tab(page, "attention")
    tour.select_checkpoint(page, "shakespeare-char")
    page.wait_for_function(f"() => ({TITLE})().startsWith('decoder self attention')")
    for layer, head in ((5, 3), (2, 1), (4, 2), (0, 3)):  # shakespeare-char: 6 layers of 4 heads
        _set_both(page, layer, head)
        expected = f"layer {layer}, head {head}"
        page.wait_for_function(f"() => ({TITLE})().endsWith('{expected}')")  # the newest reply arrives...
        title = _settle(page, 2500)  # ...and no older one overwrites it afterwards
        boxes, sliders = _controls(page)
        assert boxes == sliders == (layer, head), (boxes, sliders, title)
        assert title.endswith(expected), (title, layer, head)
    calls = _calls_during(page, 5000)
    assert not calls, f"{len(calls)} calls in 5 s after the last reply: {calls}"


def _click_demo(page, label: str) -> None:
    tour.click_demo(page, label)
    page.locator("#demo-explain", has_text=label).wait_for()


def _opened_head(page, kind: str) -> tuple[int, int]:
    page.wait_for_function(f"() => ({TITLE})().startsWith('{kind} attention')")
    title = _settle(page)
    layer, head = (int(x) for x in re.search(r"layer (\d+), head (\d+)", title).groups())
    return layer, head


@pytest.mark.parametrize("label, ckpt, text, kind, score, at_least", [
    ("Reading backwards", "reverse", "attention", "cross", "anti-diagonal", 0.9),
    ("Previous-token head", "induction", None, "decoder self", "previous token", 0.8),
    ("Induction head", "induction", None, "decoder self", "induction", 0.8),
])
def test_attention_demo_opens_a_head_that_really_does_it(lab, label, ckpt, text, kind, score, at_least):
    """One click from any state: the demo opens a head whose score, recomputed here with the library on the same
    checkpoint and input, is at least `at_least`; the heatmap's weights are that head's."""
    from tabs.demos import DEMOS

    demo = next(d for d in DEMOS if d.label == label)
    if not (CHECKPOINTS / ckpt).is_dir():
        pytest.fail(f"the {ckpt} checkpoint is missing: the demo {label!r} cannot run")
    page = lab.page
    model, tok, _ = load_checkpoint(CHECKPOINTS / ckpt, device="cpu")
    pattern = record_attention(model, tok, text or demo.text).patterns[kind]
    best = divmod(int(pattern.scores()[score].argmax()), pattern.shape[1])
    _click_demo(page, label)
    assert page.get_by_role("tab", name="Attention", exact=True).get_attribute("aria-selected") == "true"
    expected = f"{kind} attention, layer {best[0]}, head {best[1]}"
    page.wait_for_function(f"() => ({TITLE})() === '{expected}'")  # the demo opens the best head...
    layer, head = _opened_head(page, kind)  # ...and stays there
    value = float(pattern.scores()[score][layer, head])
    MEASURED[f"demo {label!r}"] = f"opened {kind} {layer}.{head}, {score} {value:.2f}"
    assert value >= at_least, (label, layer, head, value)
    row = page.evaluate("() => Array.from(document.querySelector('#att-one .js-plotly-plot')._fullData[0].z.at(-1))")
    row = [0.0 if v is None or math.isnan(v) else v for v in row]
    expected = pattern.weights[layer, head, -1].tolist()
    assert all(abs(a - b) < 1e-4 for a, b in zip(row, expected))


def test_causal_mask_demo_draws_the_future_as_masked(lab):
    """The causal-mask demo: decoder self-attention whose cells above the diagonal are in the grey "masked" layer
    (not white weights), and exactly those."""
    page = lab.page
    _click_demo(page, "The causal mask")
    _opened_head(page, "decoder self")
    data = page.evaluate("""() => document.querySelector('#att-one .js-plotly-plot')._fullData
        .map(t => ({name: t.name, z: t.z ? Array.from(t.z, row => Array.from(row)) : null}))""")
    masked = next(t for t in data if t["name"] == "masked")["z"]
    n = len(masked)
    assert n > 10
    for t in range(n):
        for s in range(n):
            drawn = masked[t][s] is not None and not math.isnan(masked[t][s])
            assert drawn == (s > t), (t, s)


def test_positional_and_training_demos_open_their_tab(lab):
    page = lab.page
    _click_demo(page, "Sinusoid waves")
    tour.visible_panel(page).locator(".gtitle", has_text="Chosen dimensions").wait_for()
    _click_demo(page, "Attention forming")
    assert page.get_by_role("tab", name="Train", exact=True).get_attribute("aria-selected") == "true"
    assert "reverse" in page.locator("#train-task input").input_value()


def test_switching_heads_off_changes_the_reverse_models_output(lab):
    """Ablation in the page: with the reverse model's anti-diagonal cross heads off, its output is no longer the
    input reversed."""
    page = lab.page
    _click_demo(page, "Reading backwards")
    _opened_head(page, "cross")
    panel = tour.visible_panel(page)
    panel.get_by_text("Switch heads off").click()
    for label in ("1.0", "1.2", "1.3"):
        page.locator("#att-ablate-heads label", has_text=re.compile(rf"^\s*{re.escape(label)}\s*$")).click()
    page.locator("#att-ablate").click()
    page.wait_for_function("() => document.querySelector('#att-ablation').innerText.includes('1.3 off')")
    text = page.locator("#att-ablation").inner_text()
    on, off = text.split("all on", 1)[1].split("1.3 off", 1)
    assert "noitnetta" in on and "noitnetta" not in off, text


def test_start_is_disabled_while_training_and_the_model_survives_a_reload(lab):
    """Regression: two trainings of one session got the same name and one model was lost. Start is disabled while
    a run is going; the model then joins the list, and stays there after the page is reloaded (the browser's
    key is kept in its local storage, the model on the server)."""
    page = lab.page
    tour.show_tab(page, "train")
    page.locator("#train-start").click()
    page.wait_for_function("() => document.querySelector('#train-start').disabled")
    page.wait_for_function("() => document.querySelector('#train-status').innerText.includes('step')",
                           timeout=tour.TRAINING_MS)
    # force: while the status streams, the page below keeps changing height, and on a loaded machine Playwright's
    # "stable" check (same box two frames in a row) can wait forever for a button that a person clicks at once
    page.locator("#train-stop").click(force=True)
    page.wait_for_function("() => !document.querySelector('#train-start').disabled")
    page.wait_for_function("() => document.querySelector('#train-status').innerText.includes('is now in the "
                           "checkpoint list')")
    status = page.locator("#train-status").inner_text()
    name = re.search(r"“(my reverse model #\d+)”", status).group(1)
    assert name in tour.checkpoint_choices(page)
    page.reload()
    tour.open_app(page, lab.url)
    for _ in range(60):  # the page's load event restores the list from the server
        if name in tour.checkpoint_choices(page):
            break
        page.wait_for_timeout(1000)
    assert name in tour.checkpoint_choices(page)


def test_a_refused_prompt_leaves_nothing_of_the_previous_run(lab):
    """Regression: an error (here an empty prompt) left the previous run's output, table and plots on screen, as
    if they were the answer to the new prompt."""
    page = lab.page
    tour.select_checkpoint(page, "reverse")
    seen = tour.tour_generate(page, "attention")
    assert seen["output"] == "noitnetta"
    page.locator("#gen-prompt textarea").fill("   ")
    page.locator("#gen-go").click()
    page.locator(".toast-body", has_text="empty").first.wait_for()
    assert page.locator("#gen-output textarea").input_value() == ""
    assert "Done" not in page.locator("#gen-notice").inner_text()  # (gradio marks a failed event's outputs "Error")
    assert not tour.visible_panel(page).locator(".gtitle", has_text="looked").count()
