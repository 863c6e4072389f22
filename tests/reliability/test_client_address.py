"""Which client a request comes from (store.clients.client_address): the per-client training limit and fair
eviction key on it, so a client must not be able to pose as many by writing its own X-Forwarded-For."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from starlette.datastructures import Headers

from store.clients import client_address, forwarded_client


def request(peer: str, *forwarded: str):
    raw = [(b"x-forwarded-for", value.encode()) for value in forwarded]
    return SimpleNamespace(headers=Headers(raw=raw), client=SimpleNamespace(host=peer))


def test_behind_one_proxy_the_client_is_the_last_entry_not_the_first(monkeypatch):
    """Regression: the first entry was read, which the client writes itself: a flooder sending
    'X-Forwarded-For: <random>' looked like a new client each time. The proxy appends the address it saw last."""
    monkeypatch.setenv("SPACE_ID", "someone/attention-lab")
    monkeypatch.delenv("ATTENTION_LAB_PROXY_HOPS", raising=False)
    assert client_address(request("10.0.0.2", "203.0.113.7")) == "203.0.113.7"
    forged = [client_address(request("10.0.0.2", f"198.51.100.{i}, 203.0.113.7")) for i in range(5)]
    assert forged == ["203.0.113.7"] * 5


def test_several_headers_are_one_list_and_hops_count_from_the_right(monkeypatch):
    """Invariant: repeated X-Forwarded-For headers read as one list in order; with two trusted proxies the client
    is the second entry from the right."""
    assert forwarded_client(["1.1.1.1, 2.2.2.2", "3.3.3.3"], 1) == "3.3.3.3"
    assert forwarded_client(["1.1.1.1, 2.2.2.2", "3.3.3.3"], 2) == "2.2.2.2"
    assert forwarded_client(["3.3.3.3"], 2) == ""
    monkeypatch.setenv("ATTENTION_LAB_TRUST_FORWARDED", "1")
    monkeypatch.setenv("ATTENTION_LAB_PROXY_HOPS", "2")
    assert client_address(request("10.0.0.2", "9.9.9.9, 198.51.100.4", "10.0.0.1")) == "198.51.100.4"


@pytest.mark.parametrize("forwarded", ["203.0.113.7", "not an address"])
def test_without_a_trusted_proxy_the_header_is_ignored(monkeypatch, forwarded):
    """Invariant: off a Space and without ATTENTION_LAB_TRUST_FORWARDED the header is anyone's text: the socket's
    peer counts, and a loopback peer means 'no address' (the sessions tell local clients apart)."""
    monkeypatch.delenv("SPACE_ID", raising=False)
    monkeypatch.delenv("ATTENTION_LAB_TRUST_FORWARDED", raising=False)
    assert client_address(request("127.0.0.1", forwarded)) is None
    assert client_address(request("192.0.2.5", forwarded)) == "192.0.2.5"


def test_an_ipv6_client_is_its_slash_64(monkeypatch):
    """A subscriber gets a /64 (2^64 addresses): a flooder rotating addresses inside it is one client (issue 30:
    '10 addresses suffice, cheap with IPv6'). IPv4 and IPv4-mapped addresses stay as they are."""
    monkeypatch.setenv("ATTENTION_LAB_TRUST_FORWARDED", "1")
    one = {client_address(request("127.0.0.1", f"2001:db8:1:2::{i:x}")) for i in range(1, 50)}
    assert one == {"2001:db8:1:2::/64"}
    assert client_address(request("127.0.0.1", "2001:db8:1:3::1")) == "2001:db8:1:3::/64"
    assert client_address(request("127.0.0.1", "198.51.100.7")) == "198.51.100.7"
