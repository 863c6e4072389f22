"""The page's config is built once per root, not once per request (server.config_cache).

Regression (issue 30, honest Show attention's p95 under the hostile load): gradio deep-copied and rewrote the
config of the whole page for every `GET /config` (every gradio_client `Client()` asks it first; ~200 ms of CPU,
5-8% of the server's samples under bench/hostile_load.py), and a client could ask as often as it liked.
Invariants, not timings: the configs gradio builds for 5 Clients and 5 more GETs (1; before: 10), each answer
equal to gradio's own for that root (the oracle: gradio's answer to the same request with a query, which it always
builds), another root's answer naming that root, and the roots kept bounded. Loopback only."""
from __future__ import annotations

import httpx
import pytest
from gradio import route_utils

from limits import CONFIGS_KEPT

from tests.app_server import api_client, serve_demo


@pytest.fixture(scope="module")
def served():
    with serve_demo() as served:
        yield served


@pytest.fixture
def builds(monkeypatch):
    """The roots gradio built a config for (its route rewrites every config it builds for the request's root)."""
    roots, update = [], route_utils.update_root_in_config

    def counted(config, root):
        roots.append(root)
        return update(config, root)

    monkeypatch.setattr(route_utils, "update_root_in_config", counted)
    return roots


def test_clients_and_gets_of_one_root_share_one_config(served, builds):
    _, url = served
    for _ in range(5):
        api_client(url)
    answers = [httpx.get(url + "config", timeout=30) for _ in range(5)]
    built = len(builds)
    assert built <= 1, f"gradio built the page's config {built} times for one root"
    own = httpx.get(url + "config", params={"page": "none"}, timeout=30)  # a query: gradio builds it
    assert len(builds) == built + 1 and all(a.status_code == 200 for a in answers + [own])
    assert all(a.json() == own.json() for a in answers)


def test_another_root_gets_its_own_config_and_the_roots_kept_are_bounded(served, builds):
    _, url = served
    hosts = [f"school{i}.example" for i in range(CONFIGS_KEPT + 2)]
    for host in hosts + hosts[:1]:
        answer = httpx.get(url + "config", headers={"X-Forwarded-Host": host}, timeout=30)
        assert answer.json()["root"] == f"http://{host}", answer.json()["root"]
    assert builds == [f"http://{host}" for host in hosts + hosts[:1]], \
        f"{len(builds)} built for {len(hosts) + 1} GETs: the first root was kept beyond {CONFIGS_KEPT}"
    httpx.get(url + "config", headers={"X-Forwarded-Host": hosts[-1]}, timeout=30)
    assert len(builds) == len(hosts) + 1, "the newest root was not kept"
