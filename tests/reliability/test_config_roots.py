"""GET /config with duplicated or conflicting forwarding headers never answers another root to a later honest
request, and what inventing roots costs is bounded (server.config_cache; issue 37, item 3).

Regression: the answers were kept under the last copy of each root header (a dict of the request's headers) while
gradio computes the root from the first copy: one request with `X-Forwarded-Host: evil.example` followed by the
honest host made every later honest `GET /config` answer `root: http://evil.example` (also with X-Gradio-Server, and
X-Forwarded-Proto turning https into http). The oracle is gradio's own answer to the honest request with a query,
which it always builds. Loopback only; the budget's test drives the middleware over a stand-in app (counts, not
times)."""
from __future__ import annotations

import asyncio
import json
import socket

import httpx
import pytest

from limits import CONFIG_ROOTS
from server.config_cache import ConfigAnswers

from tests.app_server import serve_demo

# (header, the honest value, the forged first copy, headers both requests carry)
DUPLICATED = [
    ("X-Forwarded-Host", "school.example", "evil.example", {}),
    ("X-Gradio-Server", "http://school-server.example", "http://evil.example", {}),
    ("X-Forwarded-Proto", "https", "http", {"X-Forwarded-Host": "proto.example"}),
]


@pytest.fixture(scope="module")
def served():
    with serve_demo() as served:
        yield served


def _root(url: str, headers, **params) -> str:
    answer = httpx.get(url + "config", headers=headers, params=params, timeout=30)
    assert answer.status_code == 200, answer.text[:200]
    return answer.json()["root"]


@pytest.mark.parametrize("header, honest, forged, common", DUPLICATED, ids=[d[0] for d in DUPLICATED])
def test_a_duplicated_header_never_gives_a_later_honest_request_another_root(served, header, honest, forged,
                                                                            common):
    """Invariant: after a request carrying the header twice (the forged copy first, then the honest one), an honest
    request gets the root gradio builds for it (its answer to the same request with a query). Failed before with
    the forged root (http://evil.example, or http:// for https://)."""
    _, url = served
    expected = _root(url, {**common, header: honest}, page="none")  # a query: gradio builds it for this request
    assert "evil" not in expected and (header != "X-Forwarded-Proto" or expected.startswith("https://"))
    _root(url, [*common.items(), (header, forged), (header, honest)])
    for _ in range(2):
        assert _root(url, {**common, header: honest}) == expected


def test_a_comma_joined_header_is_the_root_gradio_reads(served):
    """Invariant: one X-Forwarded-Host carrying two hosts is answered for the first (gradio's reading), and the
    honest host alone after it gets its own root."""
    _, url = served
    assert _root(url, {"X-Forwarded-Host": "evil2.example, joined.example"}) == "http://evil2.example"
    assert _root(url, {"X-Forwarded-Host": "joined.example"}) == "http://joined.example"


def test_a_duplicated_host_never_gives_a_later_honest_request_another_root(served):
    """Invariant: two Host lines (sent over a raw socket: httpx sends one) are refused or answered for the first;
    either way the honest Host's next answer names the honest root."""
    _, url = served
    port = httpx.URL(url).port
    with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
        raw.sendall(b"GET /config HTTP/1.1\r\nHost: evil3.example\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n"
                    % port)
        while raw.recv(65536):
            pass
    assert _root(url, {}) == _root(url, {}, page="none") == f"http://127.0.0.1:{port}"


class _Gradio:
    """A stand-in for gradio's app: answers a config naming the request's first X-Forwarded-Host; counts builds."""

    def __init__(self):
        self.built = 0

    async def __call__(self, scope, receive, send):
        self.built += 1
        host = dict(scope["headers"]).get(b"x-forwarded-host", b"").decode()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": json.dumps({"root": host}).encode()})


def _get(answers: ConfigAnswers, host: str) -> tuple[int, bytes]:
    scope = {"type": "http", "method": "GET", "path": "/config", "query_string": b"", "scheme": "http",
             "server": ("127.0.0.1", 7860), "client": ("127.0.0.1", 50000), "root_path": "",
             "headers": [(b"host", b"127.0.0.1:7860"), (b"x-forwarded-host", host.encode())]}
    sent = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    asyncio.run(answers(scope, receive, send))
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


def test_an_address_inventing_roots_gets_its_budget_of_builds_a_minute_then_a_refusal_in_words():
    """Bound: one address (loopback) has CONFIG_ROOTS["per_address_per_minute"] new roots built a minute; the next
    invented root is refused with 429 and a sentence, builds nothing, while a root already kept is still answered;
    a minute later the address may build again. Failed before: every invented root was built (200 roots: 14 s of
    CPU)."""
    gradio, now = _Gradio(), [0.0]
    answers = ConfigAnswers(gradio, kept=4, roots=CONFIG_ROOTS)
    answers.budget.clock = lambda: now[0]
    budget = CONFIG_ROOTS["per_address_per_minute"]
    assert all(_get(answers, f"h{i}.example")[0] == 200 for i in range(budget))
    assert gradio.built == budget
    status, body = _get(answers, "one-more.example")
    assert status == 429 and "new root URLs" in json.loads(body)["detail"] and gradio.built == budget
    assert _get(answers, f"h{budget - 1}.example") == (200, json.dumps({"root": f"h{budget - 1}.example"}).encode())
    now[0] = 61.0
    assert _get(answers, "one-more.example")[0] == 200 and gradio.built == budget + 1
