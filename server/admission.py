"""What the server checks about a call before it does any work for it, so that one client cannot fill the queue,
make the server call out, or hold memory with what it sends.

Checked when a call asks to join the queue, before it is queued (a refusal is a validation error: gradio_client
raises it as a ValidationError with the message, the page shows it on the call's inputs):
- a text longer than its Textbox's `max_length` (the limit the page itself enforces);
- a file reference that is a URL (see below);
- more than its client's share of its line (server.lines): every group of events (concurrency_id) waits in a line
  of its own, so a flood of one endpoint never fills another's (gradio's own `max_size` counts every endpoint
  together, and a full queue refused Stop and every heatmap), and each line serves its clients in turn (a client
  is an address and a browser session: server.fair_line).
A client refused its share of a line again and again waits longer for each refusal (server.backoff), so it cannot
spin on the server (a refused value is answered at once: a page corrects it).

Checked before gradio prepares any call's inputs, queued or not: a FileData whose path is a URL. gradio would
download it (resolving the host first) for any component, even a Textbox; the app opens no outside socket for a
client (tests/reliability/test_no_outside_sockets.py).
"""
from __future__ import annotations

import inspect

import gradio as gr

from checks import UserError, check_characters
from limits import REFUSAL_BACKOFF, SHARED_GROUPS
from store.clients import client_address
from widgets import errors

from . import lines
from .backoff import RefusalBackoff
from .lines import Refused

BACKOFF = RefusalBackoff(**REFUSAL_BACKOFF)  # one per process: a client's refusals in a row, in every line


def url_files(value) -> list[str]:
    """The URL paths of any file-like reference ({"path": ...}) inside a call's input: gradio treats such a dict
    with a FileData "meta" as a file, and downloads a path that is a URL (its "url" it never fetches). Walked
    without recursion, so a deeply nested value cannot exhaust the stack."""
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            path = item.get("path")
            if isinstance(path, str) and path.strip().lower().startswith(("http://", "https://")):
                found.append(path[:80])
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return found


def check_no_urls(inputs) -> None:
    for value in inputs or []:
        if url_files(value):
            raise Refused("a file must be uploaded, not named by a URL: this server fetches nothing for a client")


def label_of(block) -> str:
    """How a message names an input: its label as the page shows it, else its kind of component."""
    return getattr(block, "label", None) or type(block).__name__


def texts_in(value) -> list[str]:
    """Every string inside a call's input (a list's, a dict's), walked without recursion."""
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return found


def check_characters_of(inputs, data: list) -> None:
    """Every text of every input is made of characters: a lone UTF-16 surrogate is refused naming its input
    (checks.check_characters), before a tokenizer fails on it with a traceback."""
    for i, (block, value) in enumerate(zip(inputs, data or [])):
        for text in texts_in(value):
            try:
                check_characters(text, label_of(block))
            except UserError as e:
                raise Refused(str(e), i) from None


def check_values(fn, data: list) -> None:
    """Texts within their Textbox's max_length and made of characters; a file input holds an uploaded file's
    reference or nothing; a checkbox group, a list (gradio fails on anything else with a generic error)."""
    check_characters_of(fn.inputs, data)
    for i, (block, value) in enumerate(zip(fn.inputs, data)):
        label = label_of(block)
        limit = getattr(block, "max_length", None) if isinstance(block, gr.Textbox) else None
        if limit and isinstance(value, str) and len(value) > limit:
            raise Refused(f"{label}: {len(value):,} characters; the limit is {limit:,}", i)
        if isinstance(block, gr.File) and value is not None and not (
                isinstance(value, dict) and isinstance(value.get("path"), str)):
            raise Refused(f"{label}: expected an uploaded file, got {str(value)[:40]!r}", i)
        if isinstance(block, gr.CheckboxGroup) and value is not None and not isinstance(value, list):
            raise Refused(f"{label}: expected a list of the choices, got {str(value)[:40]!r}", i)


def validation_errors(fn, refusal: Refused) -> list[dict]:
    """The 422 body gradio sends for a failed validator: one entry per input (named as the handler names it), the
    refusal's message on its input."""
    names = list(fn.input_parameter_names or inspect.signature(fn.fn).parameters) if fn.fn else []
    return [{"__type__": "validate", "is_valid": i != refusal.index,
             "parameter_name": names[i] if i < len(names) else f"parameter_{i}",
             "message": str(refusal) if i == refusal.index else ""} for i in range(max(1, len(fn.inputs)))]


def body_bytes(request) -> int | None:
    """The size a request declared (Content-Length; server.http_gate refused a false one), or None."""
    length = request.headers.get("content-length") if request is not None else None
    return int(length) if length is not None and length.isdigit() else None


def install(demo: gr.Blocks) -> None:
    """Put the checks in front of `demo`'s queue, and its lines in fair order (after `demo.queue()`; server.compat
    checks that gradio still calls Queue.push and Queue.get_events)."""
    queue, push = demo._queue, demo._queue.push

    async def admitted_push(body, request, username):
        fn = demo.fns.get(body.fn_index) if body.fn_index is not None else None
        if fn is None:  # server.http_gate answers an unknown fn_index first; a call from inside the process
            return False, f"no function {str(body.fn_index)[:40]} in this app", "error"
        queue.create_event_queue_for_fn(fn)
        address, line = client_address(request) or "", None
        try:
            check_no_urls(body.data)
            check_values(fn, body.data or [])
            line = fn.concurrency_id  # what follows is the line's refusal: its client has its share
            asks = lines.request_key(body.fn_index, body.data) if line in SHARED_GROUPS else None
            room = lines.admit(queue, line, body.session_hash, request, asks)
        except Refused as refusal:
            if line is not None:
                await BACKOFF.refused(address, body.session_hash or "", body_bytes(request))
            return False, validation_errors(fn, refusal), "validator_error"
        answer = await push(body=body, request=request, username=username)
        if answer[0]:
            BACKOFF.admitted(address, body.session_hash or "")
            lines.settle(queue, fn.concurrency_id, room, answer[1])
        return answer

    queue.push = admitted_push
    lines.install(queue)


def door(demo: gr.Blocks):
    """door(group, request) -> (refusal, wait): what `demo`'s queue would answer a call of `group` from that request
    now: the refusal in words or None (server.lines.refusal), and when it would join but not start at once, (the
    line's places, all taken, requests already waiting) (server.lines.wait), else None. app.py hands it to the Train
    tab, which says both in the page before its run asks to join: gradio shows a refusal only on the call's inputs
    (a demo's Watch has none to show it on), and a waiting run only as "queue: 1/1" on its status line."""
    return lambda group, request: (lines.refusal(demo._queue, group, request), lines.wait(demo._queue, group))


def refusing_urls(prepare):
    """gradio's input preparation (Blocks.preprocess_data) that first refuses a file reference whose path is a URL,
    before gradio would fetch it; server.guard decides where it goes among the other wraps."""
    async def checked_preprocess(block_fn, inputs, *args, **kwargs):
        try:
            check_no_urls(inputs)
            check_characters_of(block_fn.inputs, inputs)  # calls that skip the queue's door too
        except Refused as refusal:
            raise errors.refusal(str(refusal)) from None
        return await prepare(block_fn, inputs, *args, **kwargs)

    return checked_preprocess
