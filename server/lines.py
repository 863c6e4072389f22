"""gradio's waiting lines made fair per client: server.fair_line's rules applied to gradio's queue.

gradio keeps one line per concurrency group and starts its first waiting request whenever the group has room; a
line here is kept in server.fair_line's order (round robin by address, then by browser, running requests counted
as turns taken), reordered when a request joins and again just before gradio picks one. Each request's place is
then sent (gradio's estimation message), so a waiting student sees where it stands.

Starting, per line (limits: BROWSER_RUNNING, ADDRESS_SPARE): when gradio picks a line's next request, the requests
whose browser (or address, not loopback) already runs its bound of the line are held back (fair_line.held_back), so
the place goes to another client's; they start when one of their client's ends (gradio polls its lines again).

Admission, per line (limits: QUEUE_WAITING, ADDRESS_WAITING, BROWSER_WAITING; trainings: one per browser,
waiting or running):
- a browser holding its bound is refused ("you already have ...");
- an address holding its bound is refused (an address that invents browsers holds at most that much of a line);
  in the lines of SHARED_GROUPS its bound counts distinct requests: a copy of one it has waiting always joins (a
  class pressing one demo; fair_line.distinct_requests);
- a full line takes the request only in the place of one of an address (or, within the newcomer's address, a
  browser) holding at least two more (fair_line.make_room); that request is ended with a message saying why.

Whether each training started in its turn is checked from outside: tests/turn_record.py records the training line
around these functions (joined, started, ended, whose, behind which runs) in the tests' and the benchmark's process,
and tests/turn_rule.py judges the record. Nothing here records: the server keeps no record of its own.

gradio 6.31's queue is private: every attribute used here is checked at start by server.compat.
"""
from __future__ import annotations

import hashlib
import json

import gradio as gr
from gradio import server_messages, utils as gradio_utils

from limits import (ADDRESS_WAITING, BROWSER_WAITING, DEFAULT_ADDRESS_WAITING, DEFAULT_BROWSER_WAITING,
                    DEFAULT_WAITING, QUEUE_WAITING, SHARED_GROUPS, TRAINING_GROUP)
from store.clients import client_address
from store.sessions import browser_key

from .fair_line import distinct_requests, fair_order, held, held_back, make_room, running_bounds

MADE_ROOM = ("your request made room in a full line for a client with fewer requests waiting (yours had the most): "
             "send it again in a minute")


class Refused(Exception):
    """A call refused before it is queued; `index` is the input it is about (its message shows there)."""

    def __init__(self, message: str, index: int = 0):
        super().__init__(message)
        self.index = index


def client_of(event) -> tuple[str, str]:
    """(address, browser) of a queued request: its address ('' for loopback) and its session; read once."""
    client = getattr(event, "fair_client", None)
    if client is None:
        client = event.fair_client = (client_address(event.request) or "", event.session_hash)
    return client


def request_key(fn_index, data) -> bytes:
    """What a call asks, whoever asks it: a digest of its function and its inputs (two calls with the same key are
    copies of one request)."""
    text = json.dumps([fn_index, data], sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def request_of(event) -> bytes:
    """request_key of a queued request; computed once."""
    key = getattr(event, "fair_request", None)
    if key is None:
        key = event.fair_request = request_key(event.fn._id, event.data.data if event.data is not None else None)
    return key


def running(queue, group: str) -> list:
    return [e for job in queue.active_jobs if job for e in job if e.concurrency_id == group]


ANOTHER_TAB = ("this browser already has a training queued or running in another tab (one training per browser): "
               "wait for it to end, or press Stop in the tab that started it")


def trainings_of_browser(queue, request) -> int:
    """The trainings, waiting or running, of the browser behind `request` in any of its tabs (sessions): by its key
    in the page's cookie (store.sessions.browser_key); a client without one (an API client) is its session, which
    `admit` counts already."""
    key = browser_key(request)
    if not key or key.startswith("session:"):
        return 0
    line = queue.event_queue_per_concurrency_id.get(TRAINING_GROUP)
    events = (line.queue if line is not None else []) + running(queue, TRAINING_GROUP)
    return sum(1 for e in events if browser_key(getattr(e, "request", None)) == key)


def admit(queue, group: str, session: str | None, request, asks: bytes | None = None):
    """Refuse a request that would hold more than its client's share of the line (Refused says why); else the
    waiting request it takes the place of in a full line, or None. `asks`: its request_key, if known (a copy of a
    request its address has waiting takes no more of the address's places in the lines of SHARED_GROUPS)."""
    line = queue.event_queue_per_concurrency_id.get(group)  # None before the group's first call (`refusal` asks then)
    waiting = line.queue if line is not None else []
    if not session:  # gradio would make each such request a browser of its own, outside every browser's bound
        raise Refused("a request must name its session (session_hash), as the page and gradio_client do")
    client = (client_address(request) or "", session)
    browser = held(waiting, running(queue, group) if group == TRAINING_GROUP else [], client_of, client)[0]
    if group == TRAINING_GROUP and browser >= BROWSER_WAITING[group]:
        raise Refused("you already have a training queued or running: wait for it to end, or press Stop")
    if group == TRAINING_GROUP and trainings_of_browser(queue, request) >= BROWSER_WAITING[group]:
        raise Refused(ANOTHER_TAB)
    if browser >= BROWSER_WAITING.get(group, DEFAULT_BROWSER_WAITING):
        raise Refused(f"you already have {browser} requests like this one waiting: wait for them to be answered")
    waiting_here, copy = held(waiting, [], client_of, client)[1], False
    if group in SHARED_GROUPS and asks is not None:
        distinct = distinct_requests(waiting, client_of, request_of, client[0])
        waiting_here, copy = len(distinct), asks in distinct
    if client[0] and not copy and waiting_here >= ADDRESS_WAITING.get(group, DEFAULT_ADDRESS_WAITING):
        raise Refused(f"{waiting_here} requests like this one from your network are already waiting: try again "
                      f"in a minute")
    if len(waiting) < QUEUE_WAITING.get(group, DEFAULT_WAITING):
        return None
    victim = make_room(waiting, client_of, client)
    if victim is None:
        raise Refused(f"{len(waiting)} requests like this one are already waiting: try again in a minute")
    return victim


def refusal(queue, group: str, request) -> str | None:
    """The words `admit` would refuse a call of `group` from `request`'s client with now, or None (it would join,
    perhaps in another's place). For a page that says a refusal where the call's inputs cannot show it (a run
    with no visible input, started by a demo button): it asks just before the call asks to join."""
    try:
        admit(queue, group, getattr(request, "session_hash", None), request)
    except Refused as refused:
        return str(refused)
    return None


def wait(queue, group: str) -> tuple[int, int] | None:
    """None when a call of `group` joining now would start at once (a place is free and nobody waits); else (the
    line's places, all taken, and how many requests wait already)."""
    line = queue.event_queue_per_concurrency_id.get(group)  # None before the group's first call: all places free
    if line is None or line.concurrency_limit is None:
        return None
    if line.current_concurrency < line.concurrency_limit and not line.queue:
        return None
    return line.concurrency_limit, len(line.queue)


def settle(queue, group: str, victim=None, joined=None) -> None:
    """After a request (gradio's event id `joined`) joined `group`'s line: end the request it took the place of
    (with MADE_ROOM), put the line in fair order and send their place to the requests whose place changed (from the
    newcomer's or the one that made room's on; those ahead keep theirs: fair_order of a fair order is itself, and
    gradio tells every waiting request its place every limits.PLACES_EVERY_S)."""
    line = queue.event_queue_per_concurrency_id[group]
    moved = len(line.queue)
    if victim is not None and victim in line.queue:
        moved = line.queue.index(victim)
        line.queue.remove(victim)
        queue.event_ids_to_events.pop(victim._id, None)
        payload = gradio_utils.error_payload(gr.Error(MADE_ROOM), True)
        queue.send_message(victim, server_messages.ProcessCompletedMessage(output=payload, title="Error",
                                                                           success=False))
    ran = running(queue, group)
    line.queue[:] = fair_order(line.queue, ran, client_of)
    ids = [e._id for e in line.queue]
    queue.broadcast_estimations(group, min(moved, ids.index(joined)) if joined in ids else 0)  # 0: all of them


def install(queue) -> None:
    """Just before gradio picks a line's first request (gradio's get_events, under the queue's delete_lock): put
    every line that can start one in fair_order with the requests running now, and hide from gradio the requests
    whose client runs its bound of the line (fair_line.held_back); they are back in their place, in order, as soon
    as gradio has picked. When every waiting request is held, gradio picks none and polls again."""
    pick = queue.get_events
    # group -> (its line's request ids in fair order and its running count, the ids held back): gradio polls every
    # millisecond while all are held back, so the rule runs again only when the line changes. Ids only (gradio's
    # Event._id, never reused): no request is kept alive here once it has left its line.
    seen: dict[str, tuple[tuple, frozenset]] = {}

    def fair_pick():
        shown = {}  # group -> (its line in fair order, the ids held back) while gradio picks
        for group, line in queue.event_queue_per_concurrency_id.items():
            if line.queue and (line.concurrency_limit is None or line.current_concurrency < line.concurrency_limit):
                now = (tuple(e._id for e in line.queue), line.current_concurrency)
                if group not in seen or seen[group][0] != now:
                    ran = running(queue, group)
                    line.queue[:] = fair_order(line.queue, ran, client_of)
                    held = held_back(line.queue, ran, client_of, *running_bounds(group, line.concurrency_limit))
                    seen[group] = (tuple(e._id for e in line.queue), line.current_concurrency), frozenset(
                        e._id for e in held)
                held = seen[group][1]
                if held:
                    shown[group] = list(line.queue), held
                    line.queue[:] = [e for e in line.queue if e._id not in held]
        try:
            picked = pick()
        finally:
            for group, (order, held) in shown.items():
                line = queue.event_queue_per_concurrency_id[group]
                left = held | {e._id for e in line.queue}  # all but what gradio picked
                line.queue[:] = [e for e in order if e._id in left]
        return picked

    queue.get_events = fair_pick
