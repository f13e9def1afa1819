"""The names a running fake upstream answers: a host its routes name resolves, inside the
fake, to an address of ``FAKE_NETWORK`` that only the fake answers (see ``_guard``)."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence
from typing import Any, Protocol
from urllib.parse import urlsplit

from ._hosts import host_name, ip_of

FAKE_NETWORK = ipaddress.IPv4Network("100.64.0.0/10")
"""Where the fake's names resolve: the shared address space (RFC 6598), which no public host
has and Python's ``ipaddress`` calls neither private nor reserved, so a tool's check against
private addresses lets it through. Every connection to it is refused."""


class _Route(Protocol):
    url: str

    def describe(self) -> str: ...


class RouteTable(Protocol):
    """What the guard reads of a running fake upstream: its routes."""

    @property
    def routes(self) -> Sequence[_Route]: ...


running: list[RouteTable] = []  # the fake upstreams running now, latest last
_name_at: dict[str, str] = {}  # address -> the host name the fake gave it to
_addresses: dict[str, str] = {}  # host name -> its address


def fake_started(fake: RouteTable) -> None:
    """``fake``'s routed hosts resolve to the fake's addresses until :func:`fake_stopped`."""
    running.append(fake)


def fake_stopped(fake: RouteTable) -> None:
    if fake in running:
        running.remove(fake)


def fake_address(host: str) -> str:
    """The address of ``FAKE_NETWORK`` the fake gives ``host``: one per name, stable for the
    process, so that a tool that compares two lookups sees the same answer."""
    name = host_name(host)
    address = _addresses.get(name)
    if address is None:
        address = str(FAKE_NETWORK.network_address + 1 + len(_addresses))
        _addresses[name] = address
        _name_at[address] = name
    return address


def routes_for(host: str) -> list[str]:
    """The routes of the running fakes whose URL names ``host``, described."""
    name = host_name(host)
    return [
        route.describe()
        for fake in running
        for route in fake.routes
        if host_name(urlsplit(route.url).hostname or "") == name
    ]


def fake_name_of(host: object) -> str | None:
    """The host name the fake gave ``host`` to, when ``host`` is one of its addresses."""
    if not isinstance(host, str | bytes):
        return None
    ip = ip_of(host_name(host))
    if ip is None or ip not in FAKE_NETWORK:
        return None
    return _name_at.get(str(ip), "a host of a fake upstream")


def _port_number(port: object) -> int:
    """A getaddrinfo port (a number, a numeric string, a service name) as a number."""
    if isinstance(port, bytes):
        port = port.decode("ascii", "replace")
    if port is None or port == "":
        return 0
    if isinstance(port, int):
        return port
    text = str(port)
    if text.isdigit():
        return int(text)
    try:
        return socket.getservbyname(text, "tcp")  # the local services file: no network
    except OSError:
        raise socket.gaierror(socket.EAI_SERVICE, f"unknown service {text!r}") from None


def fake_addrinfo(
    host: object, address: str, port: object, family: int, kind: int, proto: int, flags: int
) -> list[tuple[Any, ...]]:
    """What ``getaddrinfo`` returns for a routed host: its fake address, for TCP."""
    number = _port_number(port)
    canonical = host_name(host) if flags & socket.AI_CANONNAME else ""
    stream = (socket.SocketKind.SOCK_STREAM, socket.IPPROTO_TCP)
    if kind not in (0, socket.SOCK_STREAM) or proto not in (0, socket.IPPROTO_TCP):
        raise socket.gaierror(
            socket.EAI_SOCKTYPE, "the fake upstream answers TCP only (its names resolve for it)"
        )
    if family == socket.AF_INET6:
        return [
            (socket.AddressFamily.AF_INET6, *stream, canonical, (f"::ffff:{address}", number, 0, 0))
        ]
    return [(socket.AddressFamily.AF_INET, *stream, canonical, (address, number))]
