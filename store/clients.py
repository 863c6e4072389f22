"""Who a client is, by address: the per-client training limit (server.admission) and fair eviction of trained models
(store.user_models) both count a request's client by the address this module reads. Loopback counts as no
address (every client of a local app shares it), and X-Forwarded-For is read only behind a trusted proxy."""
from __future__ import annotations

import ipaddress
import os


def trust_forwarded() -> bool:
    """Whether the X-Forwarded-For header names the client: on a Hugging Face Space (its proxy sets it), or when
    ATTENTION_LAB_TRUST_FORWARDED=1 says the app runs behind such a proxy. Elsewhere any client could forge it."""
    return bool(os.environ.get("SPACE_ID")) or os.environ.get("ATTENTION_LAB_TRUST_FORWARDED") == "1"


def proxy_hops() -> int:
    """How many proxies in front of the app append to X-Forwarded-For (ATTENTION_LAB_PROXY_HOPS, default 1)."""
    try:
        return max(1, int(os.environ.get("ATTENTION_LAB_PROXY_HOPS", "1")))
    except ValueError:
        return 1


def forwarded_client(values: list[str], hops: int) -> str:
    """The client's address in X-Forwarded-For (every header of that name, in order, joined): each proxy appends the
    address it received the request from, so with `hops` trusted proxies the client is the hops-th entry from the
    right. Entries to its left were written by the client and may be anything (a flooder would rotate them to pose
    as many clients), so they are never read. '' when the header has fewer entries."""
    entries = [e.strip() for value in values for e in value.split(",") if e.strip()]
    return entries[-hops] if len(entries) >= hops else ""


def client_address(request) -> str | None:
    """The address of the client behind a request, or None when it says nothing (loopback: every client of a
    local app shares it, so there the sessions alone tell clients apart). An IPv6 address counts as its /64, the
    block one subscriber gets: a client rotating addresses inside it is still one client."""
    if request is None:
        return None
    host = ""
    if trust_forwarded():
        headers = request.headers
        values = headers.getlist("x-forwarded-for") if hasattr(headers, "getlist") else \
            [headers.get("x-forwarded-for", "")]
        host = forwarded_client(values, proxy_hops())
    host = host or (request.client.host if request.client else "")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    if address.is_loopback:
        return None
    if address.version == 6 and address.ipv4_mapped is None:  # one subscriber's /64 holds 2^64 addresses
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return host
