"""Every bad value gets a clear error, and before any computing: the cases the hostile-client probe of issue 18
(item 7) found answering with gradio's generic "raised an exception", or silently changed.

Regressions: layers=1.5 silently became 2 and trained; head importance with an unknown kind ran the whole
computation (up to 70 s) before failing generically; a non-list `labels` in ablation and a non-file `upload` in
train failed generically inside gradio."""
from __future__ import annotations

import pytest
from gradio_client.exceptions import AppError

GENERIC = "has not enabled verbose error reporting"


@pytest.fixture(scope="module")
def client(app_url):
    """A client of the app this test process serves (tests/conftest.py app_url): an app of the module's own gave
    no fresh state."""
    from tests.app_server import api_client

    return api_client(app_url)


def refused(client, api_name, *args) -> str:
    """The message of the refusal (an AppError from the handler or a ValidationError before queueing)."""
    with pytest.raises((AppError, ValueError)) as e:
        client.predict(*args, api_name=api_name)
    message = str(e.value)
    assert GENERIC not in message, f"{api_name}: generic error"
    return message


def test_a_fractional_layer_count_is_refused_not_rounded(client):
    message = refused(client, "/train", "task", "reverse", "", None, "", 1.5, 4, 32, 3e-3, 10, 8)
    assert "whole number" in message and "1.5" in message


def test_a_non_file_upload_is_refused_clearly(client):
    for upload in ("/etc/passwd", 42, ["a"], {"path": 5}):
        assert "uploaded file" in refused(client, "/train", "text", "reverse", "", upload, "", 1, 4, 32, 3e-3, 10, 8)


def test_non_list_heads_in_ablation_are_refused_clearly(client):
    client.predict("reverse", "attention", "", api_name="/attention")
    for labels in ("1.0", 7, {"a": 1}):
        assert "list" in refused(client, "/ablate", "cross", labels)


def test_head_importance_refuses_an_unknown_kind_before_computing(client, monkeypatch):
    """The refusal comes before any head is switched off: the computation (tabs.attention.inside, run by the app of
    this process) is never called. Was: answered within 5 s, which a loaded machine's round trip can pass."""
    from tabs.attention import inside

    computed = []
    monkeypatch.setattr(inside, "head_importance_stream", lambda *args: computed.append(args) or iter(()))
    client.predict("reverse", "attention", "", api_name="/attention")
    message = refused(client, "/head_importance", "no such kind")
    assert "kind must be one of" in message and computed == []
