"""The page's config, built once per root URL instead of once per request (an ASGI middleware beside
server.http_gate).

gradio answers `GET /config` (what every gradio_client `Client()` asks first) by deep-copying the config of the
whole page, rewriting every URL in it for the request's root and encoding it: ~200 ms of CPU each, on a thread
holding the GIL the event loop needs (5-8% of the server's samples under bench/hostile_load.py, most of it as the
classroom's 20 clients connect together), and a client could ask for it as often as it liked. The app's config does
not change once it runs and it has no login, so the answer depends only on the request's root (its Host, gradio's
X-Forwarded-Host, X-Gradio-Server and X-Forwarded-Proto headers, the scheme and root path): the answers of the last
`kept` roots are kept and sent again as they are. A root not kept is built by gradio, one at a time (a client that
invents a Host header with every request holds at most one thread building configs, and waits its turn for it).
A request with a query (`deep_link`, `page`) or an answer that sets a cookie is gradio's to answer each time.
"""
from __future__ import annotations

import asyncio
from collections import OrderedDict

ROOT_HEADERS = (b"host", b"x-forwarded-host", b"x-gradio-server", b"x-forwarded-proto")  # gradio's get_root_url


def config_request(scope) -> bool:
    """Whether gradio's answer to `scope` is its page config with nothing of the request in it but the root."""
    return (scope["type"] == "http" and scope.get("method") == "GET" and not scope.get("query_string")
            and scope.get("path", "").rstrip("/").endswith("/config"))


def root_key(scope) -> tuple:
    """What gradio's root URL for a request is made of."""
    headers = dict(scope.get("headers") or [])
    return (scope.get("scheme"), scope.get("root_path", ""), scope.get("path", "").rstrip("/"),
            *(headers.get(name) for name in ROOT_HEADERS))


class ConfigAnswers:
    def __init__(self, app, kept: int):
        self.app, self.kept = app, kept
        self.answers: OrderedDict[tuple, tuple[list, bytes]] = OrderedDict()  # root -> (headers, body)
        self.building = asyncio.Lock()  # made on gradio's event loop, where every request runs

    async def __call__(self, scope, receive, send):
        if not config_request(scope):
            return await self.app(scope, receive, send)
        key = root_key(scope)
        if key not in self.answers:
            async with self.building:  # one config built at a time; those waiting may find theirs made meanwhile
                if key not in self.answers:
                    return await self._build(key, scope, receive, send)
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
