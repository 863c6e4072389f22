"""What the server checks about a call before it does any work for it, so that one client cannot fill the queue,
make the server call out, or hold memory with what it sends.

Checked when a call asks to join the queue, before it is queued (a refusal is a validation error: gradio_client
raises it as a ValidationError with the message, the page shows it on the call's inputs):
- a text longer than its Textbox's `max_length` (the limit the page itself enforces);
- a file reference that is a URL (see below);
- a group of events (concurrency_id) with QUEUE_WAITING of its calls already waiting: every group waits in its own
  line, so a flood of one endpoint never fills another's (gradio's own `max_size` counts every endpoint together,
  and a full queue refused Stop and every heatmap);
- a training (group "train") from a client that has TRAININGS_PER_CLIENT of them queued or running: a client is
  a session, and also an address when the request carries one that is not loopback (`store.clients.client_address`).

Checked before gradio prepares any call's inputs, queued or not: a FileData whose path is a URL. gradio would
download it (resolving the host first) for any component, even a Textbox; the app opens no outside socket for a
client (tests/reliability/test_no_outside_sockets.py).
"""
from __future__ import annotations

import inspect

import gradio as gr

from limits import DEFAULT_WAITING, QUEUE_WAITING, TRAINING_GROUP, TRAININGS_PER_CLIENT
from store.clients import client_address

class Refused(Exception):
    """A call refused before it is queued; `index` is the input it is about (its message shows there)."""

    def __init__(self, message: str, index: int = 0):
        super().__init__(message)
        self.index = index


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


def check_values(fn, data: list) -> None:
    """Texts within their Textbox's max_length; a file input holds an uploaded file's reference or nothing; a
    checkbox group, a list (gradio fails on anything else with a generic error)."""
    for i, (block, value) in enumerate(zip(fn.inputs, data)):
        label = getattr(block, "label", None) or type(block).__name__
        limit = getattr(block, "max_length", None) if isinstance(block, gr.Textbox) else None
        if limit and isinstance(value, str) and len(value) > limit:
            raise Refused(f"{label}: {len(value):,} characters; the limit is {limit:,}", i)
        if isinstance(block, gr.File) and value is not None and not (
                isinstance(value, dict) and isinstance(value.get("path"), str)):
            raise Refused(f"{label}: expected an uploaded file, got {str(value)[:40]!r}", i)
        if isinstance(block, gr.CheckboxGroup) and value is not None and not isinstance(value, list):
            raise Refused(f"{label}: expected a list of the choices, got {str(value)[:40]!r}", i)


def waiting_and_running(queue, group: str) -> list:
    waiting = list(queue.event_queue_per_concurrency_id[group].queue) \
        if group in queue.event_queue_per_concurrency_id else []
    running = [e for job in queue.active_jobs if job for e in job if e.concurrency_id == group]
    return waiting + running


def check_queue(queue, fn, session_hash: str | None, request) -> None:
    group = fn.concurrency_id
    if group in queue.event_queue_per_concurrency_id:
        waiting = len(queue.event_queue_per_concurrency_id[group].queue)
        if waiting >= QUEUE_WAITING.get(group, DEFAULT_WAITING):
            raise Refused(f"{waiting} requests like this one are already waiting: try again in a minute")
    if group != TRAINING_GROUP:
        return
    address = client_address(request)
    mine = [e for e in waiting_and_running(queue, group)
            if e.session_hash == session_hash or (address is not None and client_address(e.request) == address)]
    if len(mine) >= TRAININGS_PER_CLIENT:
        raise Refused("you already have a training queued or running: wait for it to end, or press Stop")


def validation_errors(fn, refusal: Refused) -> list[dict]:
    """The 422 body gradio sends for a failed validator: one entry per input (named as the handler names it), the
    refusal's message on its input."""
    names = list(fn.input_parameter_names or inspect.signature(fn.fn).parameters) if fn.fn else []
    return [{"__type__": "validate", "is_valid": i != refusal.index,
             "parameter_name": names[i] if i < len(names) else f"parameter_{i}",
             "message": str(refusal) if i == refusal.index else ""} for i in range(max(1, len(fn.inputs)))]


def install(demo: gr.Blocks) -> None:
    """Put the checks in front of `demo`'s queue (after `demo.queue()`; server.compat checks that gradio still
    calls Queue.push)."""
    queue, push = demo._queue, demo._queue.push

    async def admitted_push(body, request, username):
        fn = demo.fns.get(body.fn_index) if body.fn_index is not None else None
        if fn is not None:
            try:
                check_no_urls(body.data)
                check_values(fn, body.data or [])
                check_queue(queue, fn, body.session_hash, request)
            except Refused as refusal:
                return False, validation_errors(fn, refusal), "validator_error"
        return await push(body=body, request=request, username=username)

    queue.push = admitted_push


def refusing_urls(prepare):
    """gradio's input preparation (Blocks.preprocess_data) that first refuses a file reference whose path is a URL,
    before gradio would fetch it; server.guard decides where it goes among the other wraps."""
    async def checked_preprocess(block_fn, inputs, *args, **kwargs):
        try:
            check_no_urls(inputs)
        except Refused as refusal:
            raise gr.Error(str(refusal)) from None
        return await prepare(block_fn, inputs, *args, **kwargs)

    return checked_preprocess
