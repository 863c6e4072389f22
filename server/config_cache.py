"""The page's config, built once per root URL instead of once per request (an ASGI middleware beside
server.http_gate).

gradio answers `GET /config` (what every gradio_client `Client()` asks first) by deep-copying the config of the
whole page, rewriting every URL in it for the request's root and encoding it: ~200 ms of CPU each, on a thread
holding the GIL the event loop needs (5-8% of the server's samples under bench/hostile_load.py, most of it as the
classroom's 20 clients connect together), and a client could ask for it as often as it liked. The app's config does
not change once it runs and it has no login, so the answer depends only on the request's root: the answers of the
last `kept` roots are kept and sent again as they are. A request with a query (`deep_link`, `page`) or an answer
that sets a cookie is gradio's to answer each time.

The key is the root itself, computed by gradio's own `route_utils.get_root_url` from the same request and the same
arguments as its config route: whatever headers a request carries, duplicated or comma-joined (gradio reads the
first copy of Host, X-Forwarded-Host, X-Gradio-Server and X-Forwarded-Proto, and the first entry of each), the
answer kept under a root is the one gradio built for that root. (Keyed on the headers as a dict, the last copy of
each, one request with `X-Forwarded-Host: evil.example` then the honest host made every later honest answer name
evil.example: issue 37.)

What inventing roots costs is bounded: a root not kept is built by gradio one at a time; an address (store.clients:
loopback is one) may have CONFIG_ROOTS["per_address_per_minute"] new roots built a minute, and at most
CONFIG_ROOTS["waiting"] requests wait for the builder; past either, a 429 that says so (bench/config_roots.py
measures what 200 invented roots cost).
"""
from __future__ import annotations

import asyncio
import json
import time
from collections import OrderedDict, deque

from gradio import route_utils
from starlette.requests import Request

from store.clients import client_address

TOO_MANY_ROOTS = ("this address asked for {count} new root URLs (Host or forwarding headers) in the last minute; "
                  "the server builds at most {limit} a minute per address: try again in a minute")
TOO_MANY_WAITING = "{waiting} requests for a new root URL already wait for the server: try again in a few seconds"


def config_request(scope) -> bool:
    """Whether gradio's answer to `scope` is its page config with nothing of the request in it but the root."""
    return (scope["type"] == "http" and scope.get("method") == "GET" and not scope.get("query_string")
            and scope.get("path", "").rstrip("/").endswith("/config"))


def root_key(scope) -> tuple[str, str]:
    """(the root URL gradio's config route computes for this request, with gradio's own function and arguments;
    the request's path)."""
    app = scope.get("app")
    blocks = app.get_blocks() if hasattr(app, "get_blocks") else None
    root_path = (getattr(app, "root_path", "") or scope.get("root_path")
                 or getattr(blocks, "custom_mount_path", None))
    root = route_utils.get_root_url(request=Request(scope), route_path="/config", root_path=root_path)
    return root, scope.get("path", "").rstrip("/")


class RootBudget:
    """How many new roots each address had built in the last minute; `addresses` remembered, oldest out first."""

    def __init__(self, per_minute: int, addresses: int, clock=time.monotonic):
        self.per_minute, self.addresses, self.clock = per_minute, addresses, clock
        self.built: OrderedDict[str, deque] = OrderedDict()  # address -> times of its builds in the last minute

    def count(self, address: str) -> int:
        times, now = self.built.get(address, ()), self.clock()
        while times and now - times[0] >= 60:
            times.popleft()
        return len(times)

    def spend(self, address: str) -> None:
        self.built.setdefault(address, deque()).append(self.clock())
        self.built.move_to_end(address)
        while len(self.built) > self.addresses:
            self.built.popitem(last=False)


async def _refuse(send, message: str) -> None:
    body = json.dumps({"detail": message}).encode()
    await send({"type": "http.response.start", "status": 429,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"retry-after", b"60")]})
    await send({"type": "http.response.body", "body": body})


class ConfigAnswers:
    def __init__(self, app, kept: int, roots: dict):
        self.app, self.kept, self.waiting_bound = app, kept, roots["waiting"]
        self.answers: OrderedDict[tuple, tuple[list, bytes]] = OrderedDict()  # root -> (headers, body)
        self.building = asyncio.Lock()  # made on gradio's event loop, where every request runs
        self.budget = RootBudget(roots["per_address_per_minute"], roots["addresses"])
        self.waiting = 0

    async def __call__(self, scope, receive, send):
        if not config_request(scope):
            return await self.app(scope, receive, send)
        try:
            key = root_key(scope)
        except Exception:  # a root gradio cannot make a URL of: gradio's to answer (an error), nothing kept
            return await self.app(scope, receive, send)
        if key not in self.answers:
            address = client_address(Request(scope)) or ""
            if (count := self.budget.count(address)) >= self.budget.per_minute:
                return await _refuse(send, TOO_MANY_ROOTS.format(count=count, limit=self.budget.per_minute))
            if self.waiting >= self.waiting_bound:
                return await _refuse(send, TOO_MANY_WAITING.format(waiting=self.waiting))
            self.waiting += 1
            try:
                async with self.building:  # one built at a time; those waiting may find theirs made meanwhile
                    if key not in self.answers:
                        self.budget.spend(address)
                        return await self._build(key, scope, receive, send)
            finally:
                self.waiting -= 1
        self.answers.move_to_end(key)
        headers, body = self.answers[key]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def _build(self, key, scope, receive, send):
        """gradio's answer, passed on as it comes and kept if it is a whole 200 without a cookie."""
        start, chunks = {}, []

        async def keep(message):
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
            await send(message)

        await self.app(scope, receive, keep)
        headers = list(start.get("headers") or [])
        if start.get("status") == 200 and not any(name.lower() == b"set-cookie" for name, _ in headers):
            self.answers[key] = headers, b"".join(chunks)
            while len(self.answers) > self.kept:
                self.answers.popitem(last=False)
