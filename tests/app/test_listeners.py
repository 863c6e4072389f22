"""How the app's listeners are wired, read from the page's own config (what the browser is sent).

Gradio's page re-fires a whole trigger (every listener of it) when a put-off call of one "always_last" listener
ends, and puts off those still running, which do the same: two such listeners of one trigger can re-run each other
for as long as the page is open (widgets.ui.separately; tests/browser/test_classroom.py sees it in a browser). So a
trigger with several listeners must have none that is "always_last".
"""
from __future__ import annotations

import json

from collections import defaultdict

import pytest


@pytest.fixture(scope="module")
def config():
    import app

    return app.build_demo().get_config_file()


def shared_triggers(config) -> dict[str, list[str]]:
    """{trigger: [listener (api name or id) and its trigger_mode, ...]} for the triggers (a component's event, or
    the page's load) that have several listeners; `.then` steps are not triggers (the page fires each one alone)."""
    names = {c["id"]: c["props"].get("elem_id") or c["props"].get("label") or c["type"]
             for c in config["components"]}
    listeners = defaultdict(list)
    for dep in config["dependencies"]:
        for target, event in dep["targets"]:
            if event in ("then", "success", "failure"):
                continue
            listeners[f"{names.get(target, 'page')}#{target}.{event}"].append(
                (dep["api_name"] or dep["id"], dep["trigger_mode"]))
    return {trigger: found for trigger, found in listeners.items() if len(found) > 1}


def test_no_trigger_with_several_listeners_has_an_always_last_one(config):
    shared = shared_triggers(config)
    assert any(trigger.startswith("ckpt#") for trigger in shared), shared  # the check sees the shared triggers
    looping = {trigger: found for trigger, found in shared.items()
               if any(mode == "always_last" for _, mode in found)}
    assert not looping, f"listeners that can re-run each other forever (use widgets.ui.separately): {looping}"


LAYOUT = {"tabs", "tabitem", "column", "row", "accordion", "group", "form"}


def progress_targets(config) -> dict[str, list[tuple[str, str]]]:
    """{listener (api name or id): [(type, elem_id) of each component it gives a loading status]} for the listeners
    that call the server; as the page computes it (`show_progress_on`, else the outputs)."""
    kinds = {c["id"]: (c["type"], c["props"].get("elem_id") or "") for c in config["components"]}
    return {dep["api_name"] or str(dep["id"]): [kinds[i] for i in (dep["show_progress_on"]
                                                                  if dep["show_progress_on"] is not None
                                                                  else dep["outputs"])]
            for dep in config["dependencies"] if dep["backend_fn"]}


def test_only_a_progress_the_page_draws_gives_a_component_a_loading_status(config):
    """Invariant (issue 29 item 11): gradio's page finds, deep-copies and updates again every component that has held
    a loading status, and every component inside a layout block that held one, at each status update of every call
    from then on. So a listener whose progress is not drawn (hidden, or run at once) gives none, no layout block gets
    one (a demo's Tabs did: the whole app was copied about 50 times a click), and the figures a demo click redraws
    other than the heatmap that shows its progress get none (widgets.ui.progress_only_where_drawn)."""
    targets = progress_targets(config)
    dependencies = {dep["api_name"] or str(dep["id"]): dep for dep in config["dependencies"]}
    undrawn = {name: found for name, found in targets.items() if found and (
        dependencies[name]["show_progress"] == "hidden" or not dependencies[name]["queue"])}
    assert not undrawn, f"a loading status never drawn: {sorted(undrawn)}"
    assert "apply_demo" in targets and "compute_and_draw" in targets  # the check sees the demo's listeners
    layout = {name: found for name, found in targets.items() if any(kind in LAYOUT for kind, _ in found)}
    assert not layout, f"layout blocks given a loading status: {sorted(layout)}"
    held = {elem_id for found in targets.values() for _, elem_id in found}
    assert "att-one" in held  # the heatmap shows the progress of the attention it computes
    assert not held & {"att-grid", "att-overview", "att-beside-ours", "att-beside-marian", "pe-learned", "pe-matrix",
                       "model-parameters"}, held


def test_one_call_sets_all_that_follows_the_checkpoint():
    """Issue 29 item 11: a change of checkpoint (a demo's too) costs one server call for everything the tabs set from
    it (widgets.ui.Followers; before: four listeners, four calls): the header's and the Attention tab's lines, the
    Generate tab's decoding and line, the RoPE and ALiBi sizes and notes. Oracle: each tab's own function, called
    alone, gives the same values."""
    import app
    from tabs.about import about
    from tabs.generate import decoding_for
    from tabs.positional import checkpoint_sizes

    follows = [fn for fn in app.build_demo().fns.values() if getattr(fn.fn, "__name__", "") == "follow"]
    assert len(follows) == 1, follows
    elem_ids = [output.elem_id for output in follows[0].outputs]
    ckpt = "translate-en-es"
    assert len(follows[0].inputs) == 2  # the checkpoint, and whether a link's generation is being opened
    answer = follows[0].fn(None, ckpt, False)  # {component: value} (the request first: widgets.ui.Followers)
    assert set(answer) == set(follows[0].outputs)
    found = {output.elem_id: value for output, value in answer.items()}
    assert len(found) == len(elem_ids) == 8, elem_ids
    decoding = decoding_for(ckpt)
    assert found["ckpt-about"] == found["att-about"] == about(ckpt) == decoding.about == found["gen-about"]
    assert "Bible" in found["ckpt-about"]
    strategy = follows[0].outputs[elem_ids.index("gen-about") - 1]  # the decoding radio, added with its line
    assert strategy.label == "Decoding" and answer[strategy]["value"] == "beam" == decoding.strategy["value"]
    linked = follows[0].fn(None, ckpt, True)  # a link's generation keeps its own decoding
    assert "value" not in linked[strategy] and decoding_for(ckpt, True).strategy == linked[strategy]
    sizes = checkpoint_sizes(ckpt)
    assert (found["pe-rope-dk"], found["pe-alibi-heads"], found["pe-rope-note"], found["pe-alibi-note"]) == (
        sizes.d_k, sizes.n_heads, sizes.rope_note, sizes.alibi_note)


def test_no_step_run_in_the_page_throws_to_stop_a_listener(config):
    """Issue 29 item 11: a step run in the page that throws costs a status update of every component that ever held a
    loading status (gradio's page counts it as a failed call): the gates of closed sections threw, 8 of a demo
    click's 37 status passes. Invariant: no listener's js throws, and the sections are still gated: each gate counts
    in the page, while its section is open or its tab shown, the count its listener follows (widgets.ui.separately).
    Failed before: the gates of the Q·K, rollout, lens, two-inputs, patching, RoPE, ALiBi and Model sections threw."""
    gates = [dep["js"] for dep in config["dependencies"] if dep.get("js") and not dep["backend_fn"] and (
        "label-wrap.open" in dep["js"] or "checkVisibility" in dep["js"]) and dep["outputs"] == dep["inputs"]]
    assert len(gates) >= 8, gates
    assert not [code for code in gates if "throw" in code], gates
    assert all("[]" in code for code in gates), gates  # while closed, nothing changes


def test_a_page_opened_without_a_link_stops_before_the_links_generation_without_throwing():
    """Issue 29 item 11, the step left: the page's load went on to the link's generation (tabs.attention.link) through a
    step in the page that threw when the page was not opened by a link to a generation, so every page load cost a
    failed call's status pass. Invariant: no step run in the page throws, in the whole app; the link's generation
    follows a gate after the load (widgets.ui.gate): a step in the page, run after the load, that reads the link's
    flag and counts, and the generation's listener follows the count's change. Failed before: that step threw."""
    import app

    demo = app.build_demo()
    config = demo.get_config_file()
    deps = config["dependencies"]
    on_load = {dep["id"] for dep in deps if any(event == "load" for _, event in dep["targets"])}
    grown = True
    while grown:  # every step that follows the load, step by step
        after = {dep["id"] for dep in deps if dep.get("trigger_after") in on_load}
        grown, on_load = not after <= on_load, on_load | after
    assert len(on_load) >= 3, on_load
    assert not [dep["js"] for dep in deps if dep["id"] in on_load and dep.get("js") and "throw" in dep["js"]]
    # the one step that throws on purpose stops a refused training's call (tabs.train.scripts.SHOW_NOTICE): only when
    # the notice says the run was refused, never on a page load
    from tabs.train.notices import REFUSED
    from tabs.train.scripts import SHOW_NOTICE
    throwing = [dep["js"] for dep in deps if dep.get("js") and "throw" in dep["js"]]
    assert all(code == SHOW_NOTICE for code in throwing) and json.dumps(REFUSED) in SHOW_NOTICE, throwing
    load = next(i for i, fn in demo.fns.items() if getattr(fn.fn, "__name__", "") == "opened_by_link")
    generation = next(fn for fn in demo.fns.values() if getattr(fn.fn, "__name__", "") == "generate_linked")
    flag = generation.inputs[0]._id  # the link's flag (tabs.generate: `linked`)
    [(count, event)] = config["dependencies"][generation._id]["targets"]
    assert event == "change"
    [step] = [dep for dep in config["dependencies"] if dep["trigger_after"] == load and dep["outputs"] == [count]]
    assert step["js"] and not step["backend_fn"] and step["inputs"] == [count, flag], step
    assert "[]" in step["js"] and "given" in step["js"]  # without the flag the count stays as it is
