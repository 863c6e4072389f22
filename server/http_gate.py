"""The app's front door (an ASGI middleware, passed to gradio's FastAPI app by app.launch): what every HTTP request
is checked for before gradio reads it.

- A body over `max_body` bytes is refused with 413 before it is read: by its Content-Length, or, for a body sent
  without one, as soon as more than that has arrived. (A queued call keeps its body in memory while it waits: a
  315-million-character text was accepted before.)
- `/file=<URL>` and `/proxy=<URL>` are refused with 403: gradio would fetch the URL itself. The app opens no
  outside socket for a client.
- A session id that does not look like gradio's own is refused with 400, wherever a request names one (a JSON
  body's `session_hash`, the `session_hash` query parameter, `/heartbeat/<id>`): gradio's page makes its ids with
  `Math.random().toString(36).substring(2)` (about 11 base-36 characters), gradio_client with uuid4; gradio took
  any string (100,000 characters, `../../x`, right-to-left marks) and kept it, and an empty one gave HTTP 500.
- A JSON body's `fn_index` must name one of the app's functions (`functions`): a huge one or -1 gave HTTP 500 from
  a KeyError inside gradio.
- A query (what follows "?") over `max_query` characters is refused with 414 in words: a link to a view is opened
  through the page's query, which the page's calls repeat, and past 65,536 characters gradio failed with HTTP 500
  (httpx.InvalidURL) where it reads the request's URL.
- A large body waits for room in `bodies` (server.body_budget: the bytes of large bodies read and parsed at once)
  before it is read, and is refused with 503 in words when none comes in time.
- After an upload (`/upload`), its size is reported to `on_upload` (the disk budget counts it).
- A file gradio would serve (`.../file=<path>`, `.../file/<path>`) is served only if `may_read(path, scope)` says
  so (store.exports: an export only to the browser that made it); else 404, as for a file that does not exist.
"""
from __future__ import annotations

import json
import re
from urllib.parse import parse_qs

from server.body_budget import BUSY

TOO_LARGE = "the request is larger than this server accepts ({limit:,} bytes)"
SESSION_ID = re.compile(r"[0-9a-z]{1,32}|[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}")  # the page's, gradio_client's
BAD_SESSION = ("the session id must look like gradio's own (1 to 32 lowercase letters and digits, as the page makes "
               "them, or a UUID, as gradio_client does); got {got}")
NO_FUNCTION = "no function {index} in this app: its functions are numbered 0 to {last}"
LONG_QUERY = ("this link is {length:,} characters long after its '?'; the app opens links of at most {limit:,} "
              "(the links it makes have at most {made:,}): open the app's address without what follows the '?', or "
              "copy a new link from the app")


def session_refusal(session) -> str | None:
    """Why a session id a request names is refused, or None (no id at all is gradio's to answer)."""
    if session is None or (isinstance(session, str) and SESSION_ID.fullmatch(session)):
        return None
    if not isinstance(session, str):
        return BAD_SESSION.format(got=f"a {type(session).__name__}")
    return BAD_SESSION.format(got=ascii(session[:24]) + ("..." if len(session) > 24 else "") if session
                              else "an empty one")


def function_refusal(index, functions) -> str | None:
    """Why a JSON body's fn_index is refused, or None."""
    if index is None or functions is None or (type(index) is int and index in functions):
        return None
    return NO_FUNCTION.format(index=str(index)[:24], last=max(functions, default=-1))


def named_sessions(scope) -> list:
    """The session ids a request names outside its body: the query parameter and /heartbeat/<id>."""
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    named = list(query.get("session_hash", []))
    path = scope.get("path", "")
    if "/heartbeat/" in path:
        named.append(path.rsplit("/heartbeat/", 1)[1])
    return named


def body_refusal(body: bytes, functions) -> str | None:
    """Why a JSON body is refused: its session id or its function index (a body that is not a JSON object is
    gradio's to answer)."""
    try:
        call = json.loads(body)
    except ValueError:
        return None
    if not isinstance(call, dict):
        return None
    return session_refusal(call.get("session_hash")) or function_refusal(call.get("fn_index"), functions)


async def _respond(send, status: int, message: str) -> None:
    body = json.dumps({"detail": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


NO_FILE = "no such file for this browser"
FILE_ROUTES = ("/file=", "/file/")  # gradio's file routes (and the deprecated one), wherever its prefix puts them


def served_paths(path: str) -> list[str]:
    """Every path a request for `path` might have gradio serve: what follows each file route's marker in it (more
    than gradio reads, never less), at every place the marker starts. Found with str.find, so a request costs the
    front door its markers, not a Python step per character of its path (a 16 KiB path, the most uvicorn's h11
    reads, cost 2.6 ms of the event loop that way)."""
    found = []
    for marker in FILE_ROUTES:
        at = path.find(marker)
        while at != -1:
            found.append(path[at + len(marker):])
            at = path.find(marker, at + 1)
    return found


def fetches_a_url(path: str) -> bool:
    """Whether a request path asks gradio to fetch a URL (`.../file=http...`, `.../proxy=...`)."""
    lowered = path.lower()
    return "/proxy=" in lowered or any(f"/file={scheme}" in lowered for scheme in ("http:", "https:"))


class RequestGate:
    def __init__(self, app, max_body: int, on_upload=None, functions=None, max_query: int | None = None,
                 made_links: int | None = None, may_read=None, bodies=None):
        self.app, self.max_body, self.on_upload, self.may_read = app, max_body, on_upload, may_read
        self.bodies = bodies  # a server.body_budget.BodyBudget, or None: no bound
        self.max_query, self.made_links = max_query, made_links if made_links is not None else max_query
        self.functions = frozenset(functions) if functions is not None else None

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if fetches_a_url(scope.get("path", "")):
            return await _respond(send, 403, "this server fetches no URL for a client")
        query = scope.get("query_string", b"")
        if self.max_query is not None and len(query) > self.max_query:
            return await _respond(send, 414, LONG_QUERY.format(length=len(query), limit=self.max_query,
                                                              made=self.made_links))
        if self.may_read is not None and not all(self.may_read(p, scope) for p in served_paths(scope.get("path", ""))):
            return await _respond(send, 404, NO_FILE)
        for session in named_sessions(scope):
            if (why := session_refusal(session)) is not None:
                return await _respond(send, 400, why)
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        if length is not None:
            try:
                declared = int(length)
            except ValueError:
                return await _respond(send, 400, "bad Content-Length")
            if declared > self.max_body:
                return await _respond(send, 413, TOO_LARGE.format(limit=self.max_body))
        share = 0
        if self.bodies is not None and (length is not None or scope.get("method") in ("POST", "PUT", "PATCH")):
            share = self.bodies.share(declared if length is not None else self.max_body)
            if not await self.bodies.take(share):
                return await _respond(send, 503, BUSY)
        try:
            await self._pass(scope, receive, send, headers, length)
        finally:
            if share:
                self.bodies.give(share)

    async def _pass(self, scope, receive, send, headers, length):
        """The checks that read the body, then the app (and the upload's size reported)."""
        declared = int(length) if length is not None else 0
        if length is None and scope.get("method") in ("POST", "PUT", "PATCH"):  # read here, at most max_body
            receive, declared = await self._buffered(receive)
            if receive is None:
                return await _respond(send, 413, TOO_LARGE.format(limit=self.max_body))
        if scope.get("method") == "POST" and b"json" in headers.get(b"content-type", b"").lower():
            receive, body = await self._buffered(receive, with_body=True)
            if receive is None:
                return await _respond(send, 413, TOO_LARGE.format(limit=self.max_body))
            if (why := body_refusal(body, self.functions)) is not None:
                return await _respond(send, 400, why)
            del body  # the replay holds it until the app reads it, then nothing does
        await self.app(scope, receive, send)
        if self.on_upload is not None and scope.get("path", "").endswith("/upload"):
            self.on_upload(declared)

    async def _buffered(self, receive, with_body: bool = False):
        """(a receive that replays the body, its size or with_body the body), or (None, size) once it passes
        max_body."""
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
        held = [body]  # handed on once, then dropped: a finished request's chain of receives outlives its call

        async def replay():
            if held:
                return {"type": "http.request", "body": held.pop(), "more_body": False}
            return await receive()

        return replay, (body if with_body else size)
