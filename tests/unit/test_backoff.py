"""server.backoff: a client refused again and again waits longer for each refusal, within its bounds.

Invariants against the rule written in the module (0, first, 2 first, ..., most), on a clock the test sets (no
sleeping except the last test's event loop, whose waits are checked as counts and order, not durations)."""
from __future__ import annotations

import asyncio

import pytest

from server.backoff import RefusalBackoff

RULE = dict(first=0.25, most=4.0, forget=30, clients=8, waiting=2, body_bytes=1024)


def test_each_refusal_in_a_row_waits_twice_the_last_up_to_most():
    backoff = RefusalBackoff(**RULE)
    assert [backoff.delay("", "flooder", now=t) for t in range(8)] == [0, 0.25, 0.5, 1, 2, 4, 4, 4]
    assert backoff.delay("", "honest", now=8) == 0  # another browser of the same (loopback) address: its own count


def test_an_accepted_request_or_a_quiet_spell_starts_the_count_again():
    backoff = RefusalBackoff(**RULE)
    for t in range(4):
        backoff.delay("", "b", now=t)
    backoff.admitted("", "b")
    assert backoff.delay("", "b", now=4) == 0 and backoff.delay("", "b", now=5) == 0.25
    assert backoff.delay("", "b", now=5 + RULE["forget"] + 1) == 0  # forgotten after `forget` s without a refusal


def test_an_address_inventing_browsers_is_backed_off_as_one_but_loopback_is_not():
    backoff = RefusalBackoff(**RULE)
    assert [backoff.delay("203.0.113.1", f"new{i}", now=i) for i in range(5)] == [0, 0.25, 0.5, 1, 2]
    assert [backoff.delay("", f"new{i}", now=i) for i in range(5)] == [0] * 5  # every local page's address
    backoff.admitted("203.0.113.1", "new9")  # a classmate's request accepted: the address's refusals still count
    assert backoff.delay("203.0.113.1", "classmate", now=6) == 4


def test_the_counts_kept_are_bounded_oldest_out():
    backoff = RefusalBackoff(**RULE)
    for i in range(100):
        backoff.delay("", f"b{i}", now=i)
    assert len(backoff.counts) == RULE["clients"]
    assert ("browser", "", "b99") in backoff.counts and ("browser", "", "b0") not in backoff.counts


@pytest.mark.parametrize("size, waits", [(100, True), (RULE["body_bytes"] + 1, False), (None, False)])
def test_a_refusal_waits_only_for_a_small_request_of_known_size(size, waits):
    backoff = RefusalBackoff(**{**RULE, "first": 0.01, "most": 0.01})

    async def twice():
        return [await backoff.refused("", "b", size) for _ in range(2)]

    assert asyncio.run(twice()) == [0.0, 0.01 if waits else 0.0]


def test_at_most_waiting_refusals_wait_at_once_and_others_are_answered_meanwhile():
    """Five refusals of one browser at once (its 2nd-5th in a row) while `waiting` = 2: two wait, three are answered
    at once; an unrelated coroutine finishes while they wait (the wait holds the event loop for no one)."""
    backoff = RefusalBackoff(**{**RULE, "first": 0.05, "most": 0.05})
    backoff.delay("", "b", now=0)
    done = []

    async def refused(i):
        waited = await backoff.refused("", "b", 10)
        done.append(("refused", i, waited))

    async def other():
        done.append(("other",))

    async def main():
        await asyncio.gather(*(refused(i) for i in range(5)), other())

    asyncio.run(main())
    waited = [d for d in done if d[0] == "refused" and d[2] > 0]
    assert len(waited) == RULE["waiting"] and backoff.waiting == 0
    assert done.index(("other",)) < done.index(waited[0])
