"""How the app's listeners are wired, read from the page's own config (what the browser is sent).

Gradio's page re-fires a whole trigger (every listener of it) when a put-off call of one "always_last" listener
ends, and puts off those still running, which do the same: two such listeners of one trigger can re-run each other
for as long as the page is open (widgets.ui.separately; tests/browser/test_classroom.py sees it in a browser). So a
trigger with several listeners must have none that is "always_last".
"""
from __future__ import annotations

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
