"""The app's front door (an ASGI middleware, passed to gradio's FastAPI app by app.launch): what every HTTP request
is checked for before gradio reads it.

- A body over `max_body` bytes is refused with 413 before it is read: by its Content-Length, or, for a body sent
  without one, as soon as more than that has arrived. (A queued call keeps its body in memory while it waits: a
  315-million-character text was accepted before.)
- `/file=<URL>` and `/proxy=<URL>` are refused with 403: gradio would fetch the URL itself. The app opens no
  outside socket for a client.
- After an upload (`/upload`), its size is reported to `on_upload` (the disk budget counts it).
"""
from __future__ import annotations

import json

TOO_LARGE = "the request is larger than this server accepts ({limit:,} bytes)"


async def _respond(send, status: int, message: str) -> None:
    body = json.dumps({"detail": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def fetches_a_url(path: str) -> bool:
    """Whether a request path asks gradio to fetch a URL (`.../file=http...`, `.../proxy=...`)."""
    lowered = path.lower()
    return "/proxy=" in lowered or any(f"/file={scheme}" in lowered for scheme in ("http:", "https:"))


class RequestGate:
    def __init__(self, app, max_body: int, on_upload=None):
        self.app, self.max_body, self.on_upload = app, max_body, on_upload

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if fetches_a_url(scope.get("path", "")):
            return await _respond(send, 403, "this server fetches no URL for a client")
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        if length is not None:
            try:
                declared = int(length)
            except ValueError:
                return await _respond(send, 400, "bad Content-Length")
            if declared > self.max_body:
                return await _respond(send, 413, TOO_LARGE.format(limit=self.max_body))
        elif scope.get("method") in ("POST", "PUT", "PATCH"):  # no length given: read it here, at most max_body
            receive, declared = await self._buffered(receive)
            if receive is None:
                return await _respond(send, 413, TOO_LARGE.format(limit=self.max_body))
        else:
            declared = 0
        await self.app(scope, receive, send)
        if self.on_upload is not None and scope.get("path", "").endswith("/upload"):
            self.on_upload(declared)

    async def _buffered(self, receive):
        """(a receive that replays the body, its size), or (None, size) once it passes max_body."""
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_body:
                return None, size
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return replay, size
