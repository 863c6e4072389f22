"""server.fair_line: the order a line serves its clients in, and whose place a newcomer takes in a full line.

Oracle: round robin written out by hand for small lines (each client's k-th request in round k, addresses in turn,
then browsers within an address), and the invariants it implies: a flooder's requests wait behind everyone else's
one; the order of a fair order is itself; a full line gives a place to a newcomer only from one holding two more;
a client running its bound of a line has its waiting requests held back, and nobody else's."""
from __future__ import annotations

from server.fair_line import fair_order, held, held_back, make_room, running_bounds


def names(events):
    return [e[2] for e in events]


def line(*specs):
    """Requests as (address, browser, name) in arrival order, from 'address/browser/name' strings."""
    return [tuple(s.split("/")) for s in specs]


def client(e):
    return e[0], e[1]


def test_a_flooders_requests_wait_behind_everyone_elses_one():
    waiting = line("a/f/f1", "a/f/f2", "a/f/f3", "a/f/f4", "b/h/h1", "c/g/g1")
    assert names(fair_order(waiting, [], client)) == ["f1", "h1", "g1", "f2", "f3", "f4"]


def test_browsers_behind_one_address_share_its_turn():
    """Five students behind one school address take one turn per round between them, as one address does."""
    waiting = line(*[f"school/s{i}/s{i}" for i in range(5)], "home/h/h1", "home/h/h2")
    assert names(fair_order(waiting, [], client)) == ["s0", "h1", "s1", "h2", "s2", "s3", "s4"]


def test_running_requests_count_as_turns_taken():
    """A client with two requests running waits behind one with none, at the address and the browser level."""
    waiting = line("a/f/f3", "b/h/h1")
    running = line("a/f/f1", "a/f/f2")
    assert names(fair_order(waiting, running, client)) == ["h1", "f3"]
    waiting = line("a/x/x2", "a/y/y1")
    assert names(fair_order(waiting, line("a/x/x1"), client)) == ["y1", "x2"]


def test_the_order_is_stable():
    waiting = line("a/f/f1", "b/h/h1", "a/f/f2", "a/g/g1", "c/k/k1", "b/h/h2")
    once = fair_order(waiting, line("b/h/h0"), client)
    assert fair_order(once, line("b/h/h0"), client) == once


def test_held_counts_browser_and_address_waiting_and_running():
    waiting, running = line("a/x/1", "a/y/2", "b/z/3"), line("a/x/4")
    assert held(waiting, running, client, ("a", "x")) == (2, 3)
    assert held(waiting, running, client, ("c", "w")) == (0, 0)


def test_a_full_line_gives_a_newcomer_the_place_of_the_address_holding_the_most():
    waiting = fair_order(line("a/f/f1", "a/g/g1", "a/f/f2", "b/h/h1"), [], client)
    assert make_room(waiting, client, ("c", "n"))[2] == "f2"  # a holds 3, c none: a's last served makes room
    assert make_room(waiting, client, ("b", "n"))[2] == "f2"  # b holds 1, a 3: still two more
    assert make_room(fair_order(line("a/f/f1", "a/g/g1", "b/h/h1"), [], client), client, ("b", "n")) is None
    even = line("a/f/f1", "b/h/h1", "c/g/g1")
    assert make_room(even, client, ("d", "n")) is None  # every address holds one: nobody gives way to a newcomer


def test_within_an_address_the_browser_holding_the_most_gives_way():
    waiting = line("a/f/f1", "a/f/f2", "a/f/f3", "a/s/s1")
    assert make_room(waiting, client, ("a", "t"))[2] == "f3"
    assert make_room(line("a/f/f1", "a/s/s1"), client, ("a", "t")) is None


def test_a_browser_running_its_bound_is_held_back_and_the_next_client_starts():
    """Regression (issue 30): a flooder running a request of the line waits for it to end before its next starts,
    and the place goes to the honest client behind it (before: nothing was held, the flooder's next started)."""
    running = line("a/f/f1")
    order = fair_order(line("a/f/f2", "a/f/f3", "a/h/h1"), running, client)
    held = held_back(order, running, client, browser_running=1, address_running=None)
    assert names(held) == ["f2", "f3"]
    assert names([e for e in order if e not in held])[0] == "h1"  # what gradio picks first
    assert held_back(order, running, client, browser_running=2, address_running=None) == []


def test_an_address_running_its_bound_is_held_back_but_loopback_never():
    """Browsers behind one address share its running bound (an address inventing browsers gets no more); every
    local page shares loopback's address "", which has none (only each browser's)."""
    running = line("school/s1/s1", "school/s2/s2", "school/s3/s3")
    waiting = line("school/s4/s4", "home/h/h1")
    assert names(held_back(waiting, running, client, 1, address_running=3)) == ["s4"]
    assert held_back(waiting, running, client, 1, address_running=4) == []
    local = [("", b, n) for _, b, n in running]
    assert held_back([("", "s4", "s4")], local, client, 1, address_running=3) == []
    assert names(held_back([("", "s1", "s1b")], local, client, 1, address_running=3)) == ["s1b"]


def test_the_running_bounds_of_each_line():
    """limits.BROWSER_RUNNING and ADDRESS_SPARE: Show attention's 4 places, 1 a browser and 3 an address; the
    redraws' 8, 4 and 7; a line of 2 (trainings) is not split between addresses."""
    assert running_bounds("attention", 4) == (1, 3)
    assert running_bounds("draw", 8) == (4, 7)
    assert running_bounds("train", 2) == (1, None)
    assert running_bounds("export", None) == (1, None)
