"""A class behind one address (issue 39, item 6): a school's NAT is one address for 40 students pressing one demo at
once, and all of them get a place; one hostile address still cannot take other addresses' places.

The rule (limits.SHARED_GROUPS, server.fair_line.distinct_requests): in the lines whose identical requests share one
computation (store.record_cache.SingleFlight), an address's bound of waiting requests counts its distinct requests,
so a copy of one it has waiting always joins. Why a hostile address gains nothing by it: copies cost one computation
however many there are (tests/app/test_single_flight.py); its distinct requests are bounded as before; a browser
still holds at most its few; the running bounds are unchanged (an address runs all of a line's places but one); and
a full line still gives a newcomer of another address the place of the address holding the most, copies included.

Regression: 40 students pressing "Show attention" on one demo had 32 places and 8 refusals ("32 requests like this
one from your network are already waiting"; issue 39's table, and this test before the rule).

Deterministic, as tests/reliability/test_fair_lines.py: the line is paused while the requests join."""
from __future__ import annotations

import pytest

from limits import DEFAULT_ADDRESS_WAITING, DEFAULT_WAITING
from server.lines import client_of
from tests.reliability.test_fair_lines import (attention_data, fn_index, forwarded, join, new_session,  # noqa: F401
                                               paused, served, sessions_in)

SCHOOL, HOSTILE = "198.51.100.40", "203.0.113.66"
CLASS = 40


def holding(line, address: str) -> int:
    return sum(client_of(e)[0] == address for e in line.queue)


REDRAW = [None, "cross", 0, 1, "anti-diagonal", "weights", False, None, None]  # the record and page states: None


@pytest.mark.parametrize("api_name, data", [("attention", attention_data("attention")), ("draw_attention", REDRAW)])
def test_forty_students_behind_one_address_pressing_one_demo_all_get_a_place(served, api_name, data):
    """40 sessions of one address send the same Show attention (then the same redraw) while the line is paused:
    all 40 join (before: 32, and 8 refused with "from your network"); a student of another address who joins
    after them waits behind one of them, not forty."""
    demo, url, config = served
    index, group = fn_index(config, api_name), "attention" if api_name == "attention" else "draw"
    with paused(demo, url, config, group, api_name, data) as line:
        answers = [join(url, index, data, new_session(), SCHOOL) for _ in range(CLASS)]
        assert [a.status_code for a in answers] == [200] * CLASS, next(a.text for a in answers if a.status_code != 200)
        assert holding(line, SCHOOL) == CLASS > DEFAULT_ADDRESS_WAITING
        other = new_session()
        assert join(url, index, data, other, "192.0.2.40").status_code == 200
        assert sessions_in(line).index(other) == 1, sessions_in(line)


def test_a_hostile_address_sending_copies_cannot_take_other_addresses_places(served):
    """One address fills the line: its distinct requests stop at its bound (the next is refused), and copies of one
    of them, from invented browsers, fill the rest. A newcomer of another address still joins (the full line gives
    it the place of the hostile address's last served copy) and waits behind one hostile request; so does a
    second."""
    demo, url, config = served
    index = fn_index(config, "attention")
    with paused(demo, url, config, "attention", "attention", attention_data("warm")) as line:
        distinct = [join(url, index, attention_data(f"flood {i}"), new_session(), HOSTILE)
                    for i in range(DEFAULT_ADDRESS_WAITING + 1)]
        assert [a.status_code for a in distinct[:-1]] == [200] * DEFAULT_ADDRESS_WAITING
        assert distinct[-1].status_code == 422 and "from your network" in distinct[-1].text
        while len(line.queue) < DEFAULT_WAITING:
            assert join(url, index, attention_data("flood 0"), new_session(), HOSTILE).status_code == 200
        assert holding(line, HOSTILE) == DEFAULT_WAITING
        for n, address in enumerate(("192.0.2.41", "192.0.2.42"), start=1):
            newcomer = new_session()
            assert join(url, index, attention_data(f"honest {n}"), newcomer, address).status_code == 200
            assert len(line.queue) == DEFAULT_WAITING and holding(line, HOSTILE) == DEFAULT_WAITING - n
            assert sessions_in(line).index(newcomer) <= n, sessions_in(line)


def test_a_class_joining_one_line_is_told_its_places_once_each_and_truly(monkeypatch):
    """40 students of one address join one line, then a student of another address, whom fair order puts second:
    each join tells its place to the newcomer and to the requests behind it (whose place moved), each its true
    place (its index in the line), and nothing to those ahead (their place did not change); gradio tells every
    waiting request its place every limits.PLACES_EVERY_S besides. Before: every join told every waiting request
    its place, 820 messages for 40 joins (and gradio again at every start), 2,272 of the 2,432 messages a press of
    40 students cost (bench/class_load.py)."""
    from types import SimpleNamespace

    import gradio as gr
    from gradio.queueing import Event, Queue

    from server.lines import settle

    monkeypatch.setenv("ATTENTION_LAB_TRUST_FORWARDED", "1")
    with gr.Blocks() as demo:
        gr.Button().click(lambda: None, concurrency_id="attention", concurrency_limit=4)
    fn = next(iter(demo.fns.values()))
    queue = Queue(live_updates=False, concurrency_count=4, update_intervals=1, max_size=None, blocks=demo)
    queue.create_event_queue_for_fn(fn)
    line, told = queue.event_queue_per_concurrency_id["attention"], []
    monkeypatch.setattr(queue, "send_message", lambda event, message: told.append((event, message.rank)))

    def joins(session: str, address: str) -> list:
        request = SimpleNamespace(headers={"x-forwarded-for": address}, client=SimpleNamespace(host="127.0.0.1"))
        event = Event(session_hash=session, fn=fn, request=request, username=None)
        line.queue.append(event)
        told.clear()
        settle(queue, "attention", None, event._id)
        assert all(line.queue.index(e) == rank for e, rank in told), "a place told is not the request's place"
        return [e for e, _ in told]

    for i in range(CLASS):
        assert joins(f"student{i}", SCHOOL) == [line.queue[-1]]
    told_other = joins("other", "192.0.2.43")
    assert line.queue[1].session_hash == "other" and told_other == line.queue[1:]
