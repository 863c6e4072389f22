"""Fair lines: who is served next in a line of waiting requests, and whose place a newcomer may take when the line
is full (no gradio here: server.admission applies it to gradio's queue).

A client is an address and a browser: (address, browser). The address is what the request came from (its /64 for
IPv6, "" for loopback, where every local page shares the machine's one address); the browser is its session. Several
browsers behind one address (a class behind a school's NAT) are several clients that share that address's turn.

Served in turn, twice over (round robin by address, then by browser within an address), not first come: a request's
rank among its browser's is the browser's running requests plus the requests of that browser waiting before it;
ordered by that rank, the browsers of one address make the address's sequence; a request's rank there plus the
address's running requests orders the line. So a flooder's many requests wait behind everyone else's one, and a
client with requests running waits behind one with none.

A line starts a request only when its client has room (held_back): its browser runs fewer than a bound of the
line's requests and its address fewer than another (none for loopback, every local page's address). The rest wait
in their turn and start when one of their client's ends, so a free place goes to another client, and a flooder's
running requests are as bounded as its waiting ones.

An address's waiting requests are bounded; in a line whose identical requests share one computation (a class
pressing one demo), copies of a request the address already has waiting hold no more of its places
(distinct_requests): they cost one computation however many there are, and in a full line they are the first to
make room for other addresses, since make_room counts every request.

A full line takes a newcomer's request only when it is fairer so: when the newcomer's address holds at least two
fewer waiting requests than the address holding the most, the latter's request served last makes room (and is told
why); else, within the newcomer's address, the same between browsers. An address that invents browsers thus keeps
one turn per round, holds at most its address bound of a line, and gives its places up to addresses holding fewer.
"""
from __future__ import annotations

from collections import Counter
from typing import Callable, Hashable, Sequence, TypeVar

from limits import ADDRESS_SPARE, BROWSER_RUNNING, DEFAULT_BROWSER_RUNNING

Event = TypeVar("Event")
ClientOf = Callable[[object], "tuple[str, str]"]  # event -> (address, browser)


def fair_order(waiting: Sequence[Event], running: Sequence, client_of: ClientOf) -> list[Event]:
    """`waiting` in the order served: round robin by address, then by browser, each counting its running requests
    as turns already taken; ties go to the address (browser) that appears first in `waiting`, so the order is
    stable: fair_order of a fair order is itself."""
    ran = Counter(client_of(e) for e in running)
    ran_address = Counter(address for address, _ in ran.elements())
    by_address: dict[str, dict[Hashable, list]] = {}
    for event in waiting:
        address, browser = client_of(event)
        by_address.setdefault(address, {}).setdefault(browser, []).append(event)
    ranked = []
    for a_pos, (address, browsers) in enumerate(by_address.items()):
        inner = sorted(((ran[(address, browser)] + i, b_pos, i, event)
                        for b_pos, (browser, events) in enumerate(browsers.items()) for i, event in enumerate(events)),
                       key=lambda t: t[:3])
        ranked += [(ran_address[address] + j, a_pos, j, event) for j, (*_, event) in enumerate(inner)]
    ranked.sort(key=lambda t: t[:3])
    return [t[-1] for t in ranked]


def held_back(waiting: Sequence[Event], running: Sequence, client_of: ClientOf, browser_running: int,
              address_running: int | None) -> list[Event]:
    """The waiting requests that may not start now: their browser runs `browser_running` requests of the line
    already, or their address `address_running` (None: no address bound; loopback, address "", never has one)."""
    ran = Counter(client_of(e) for e in running)
    ran_address = Counter(address for address, _ in ran.elements())

    def full(client):
        address = client[0]
        return ran[client] >= browser_running or (
            address_running is not None and address != "" and ran_address[address] >= address_running)
    return [e for e in waiting if full(client_of(e))]


def running_bounds(group: str, places: int | None) -> tuple[int, int | None]:
    """(requests of one browser, of one address) that may run at once in `group`'s line of `places` (None: no
    limit): limits.BROWSER_RUNNING, and all places but ADDRESS_SPARE for a line of 3 or more (else no address
    bound: a line of 2 is not split)."""
    browser = BROWSER_RUNNING.get(group, DEFAULT_BROWSER_RUNNING)
    if places is None or places < 3:
        return browser, None
    return browser, max(1, places - ADDRESS_SPARE)


def held(waiting: Sequence, running: Sequence, client_of: ClientOf, client: tuple[str, str]) -> tuple[int, int]:
    """(requests of this browser, requests of its address) in the line, waiting and running."""
    clients = [client_of(e) for e in list(waiting) + list(running)]
    return clients.count(client), sum(1 for address, _ in clients if address == client[0])


def distinct_requests(waiting: Sequence[Event], client_of: ClientOf, request_of: Callable[[object], Hashable],
                      address: str) -> set:
    """The distinct requests (request_of: what was asked, by whom it does not say) `address` has in `waiting`:
    copies of one request counted once."""
    return {request_of(e) for e in waiting if client_of(e)[0] == address}


def make_room(waiting: Sequence[Event], client_of: ClientOf, newcomer: tuple[str, str]) -> Event | None:
    """The waiting request whose place a newcomer's request takes in a full line, or None (the newcomer is refused):
    the last served of the address holding the most, if the newcomer's holds at least two fewer; else the last
    served of the browser holding the most in the newcomer's address, if the newcomer's browser holds two fewer.
    `waiting` is in the order served (fair_order)."""
    clients = [client_of(e) for e in waiting]
    per_address = Counter(address for address, _ in clients)
    most = max(per_address.values(), default=0)
    if per_address[newcomer[0]] + 2 <= most:
        def takes(c): return per_address[c[0]] == most
    else:
        per_browser = Counter(c for c in clients if c[0] == newcomer[0])
        most = max(per_browser.values(), default=0)
        if per_browser[newcomer] + 2 > most:
            return None

        def takes(c): return c[0] == newcomer[0] and per_browser[c] == most
    return next((e for e, c in zip(reversed(waiting), reversed(clients)) if takes(c)), None)
