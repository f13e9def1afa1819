"""The names a running fake upstream answers: a host its routes name resolves, inside the
fake, to an address that only the fake answers (see ``_guard``), one address per name.

Where the addresses come from is a setting (``--nucleo-fake-addresses``, ini
``nucleo_fake_addresses``):

- ``public``, the default: :data:`PUBLIC_NETWORK`, 192.31.196.0/24. A tool that guards against
  server-side request forgery (it resolves the host and refuses what is not a public address,
  as the reference MCP fetch server does) must accept the fake's address, or its guard could
  only be tested switched off. Python's ``ipaddress`` calls this block ``is_global``, and the
  usual lists of non-public networks (the fetch server's among them) leave it out: it is
  AS112's (RFC 7535), anycast and globally routed, whose nodes answer the DNS queries that
  should never have left a private network with "no such name", and serve nothing else. It is
  safe to hand out for three reasons. Nothing is sent there: the lookup is answered here, and
  the guard refuses every connection to the block whatever the test may otherwise reach (its
  scope, ``allow_network``, the allowed hosts). Were a packet to escape the guard (a C
  extension's own socket, uvloop), it would meet a DNS sink, not a service that reads it. And
  the block's one assigned address, 192.31.196.1 (the sink's server), is never handed out.
- ``shared``: :data:`SHARED_NETWORK`, the shared address space of RFC 6598 (100.64.0.0/10),
  for a project whose tools must see an address that is not public. Python calls it neither
  private nor global; the fetch server's guard refuses it. On a machine in a carrier-grade NAT
  or a Tailscale network, real hosts have such addresses: the guard refuses them all the same.

A /24 holds 253 names (192.31.196.2 to .254). A process that looks up more names reuses the
address of the name looked up longest ago that no running fake routes, so an address names one
host at a time; only more than 253 hosts routed at once run out, with an error saying to
choose ``shared`` (four million addresses).
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Protocol
from urllib.parse import urlsplit

from ._hosts import host_name, ip_of

PUBLIC_NETWORK = ipaddress.IPv4Network("192.31.196.0/24")
"""Where the fake's names resolve by default (``public``): AS112's block (RFC 7535), globally
routed and ``is_global``, so a tool's check against non-public addresses lets it through. Every
connection to it is refused; 192.31.196.1, its DNS sink's server, is never handed out."""

SHARED_NETWORK = ipaddress.IPv4Network("100.64.0.0/10")
"""Where the fake's names resolve with ``shared``: the shared address space (RFC 6598), which a
tool's check against non-public addresses refuses. Every connection to it is refused."""

ADDRESS_CHOICES = ("public", "shared")
"""The values of ``--nucleo-fake-addresses``, the default first."""


class FakeAddressesExhausted(RuntimeError):
    """More hosts are routed at once than the chosen network has addresses for.

    Not an OSError on purpose: a tool's ``except OSError`` would read it as a DNS failure of
    the service, and the test could pass on a wrong answer."""


class _AddressBook:
    """The addresses of one network the fake gives names: each to one name at a time, the
    same for as long as the name keeps it."""

    def __init__(self, network: ipaddress.IPv4Network, first: int, last: int) -> None:
        self.network = network
        self.first, self.last = first, last
        self.unused = first  # the next address never handed out
        self.address_of: OrderedDict[str, str] = OrderedDict()  # looked up longest ago first
        self.name_at: dict[str, str] = {}

    @property
    def size(self) -> int:
        return self.last - self.first + 1

    def address(self, name: str, routed: Callable[[str], bool]) -> str:
        """``name``'s address; a new one, or the address of a name no running fake routes
        (``routed`` says which), when it has none."""
        address = self.address_of.get(name)
        if address is not None:
            self.address_of.move_to_end(name)
            return address
        if self.unused <= self.last:
            address = str(ipaddress.IPv4Address(self.unused))
            self.unused += 1
        else:
            address = self._reclaimed(name, routed)
        self.address_of[name] = address
        self.name_at[address] = name
        return address

    def _reclaimed(self, name: str, routed: Callable[[str], bool]) -> str:
        # A name no fake routes cannot resolve now, so nobody can be told its address again
        # while another name holds it.
        for old in self.address_of:
            if not routed(old):
                return self.address_of.pop(old)
        raise FakeAddressesExhausted(
            f"pytest-nucleo cannot resolve {name}: the running fake upstreams route more than "
            f"{self.size} host names at once, and the fake gives each one of the {self.size} "
            f"addresses of {self.network}. Route fewer hosts in one test, or set "
            "nucleo_fake_addresses = shared (the shared address space, 100.64.0.0/10, about "
            "four million addresses, which a tool that refuses non-public addresses refuses)"
        )


_BOOKS = {
    "public": _AddressBook(
        PUBLIC_NETWORK, int(PUBLIC_NETWORK.network_address) + 2, int(PUBLIC_NETWORK[-2])
    ),
    "shared": _AddressBook(
        SHARED_NETWORK, int(SHARED_NETWORK.network_address) + 1, int(SHARED_NETWORK[-2])
    ),
}
_choice = ["public"]  # the setting of the innermost configured session
_lock = threading.Lock()  # lookups come from asyncio's resolver threads too


def use_addresses(choice: str) -> str:
    """Resolve routed names to the addresses ``choice`` names (one of :data:`ADDRESS_CHOICES`)
    from now on; returns the previous choice, for a session to put back when it ends."""
    if choice not in _BOOKS:
        raise ValueError(
            f"the fake upstream's addresses are one of {', '.join(ADDRESS_CHOICES)}; got {choice!r}"
        )
    before, _choice[0] = _choice[0], choice
    return before


def fake_network() -> ipaddress.IPv4Network:
    """The network routed names resolve to now."""
    return _BOOKS[_choice[0]].network


class _Route(Protocol):
    url: str

    def describe(self) -> str: ...


class RouteTable(Protocol):
    """What the guard reads of a running fake upstream: its routes."""

    @property
    def routes(self) -> Sequence[_Route]: ...


running: list[RouteTable] = []  # the fake upstreams running now, latest last


def fake_started(fake: RouteTable) -> None:
    """``fake``'s routed hosts resolve to the fake's addresses until :func:`fake_stopped`."""
    running.append(fake)


def fake_stopped(fake: RouteTable) -> None:
    if fake in running:
        running.remove(fake)


def fake_address(host: str) -> str:
    """The address the fake gives ``host``, in the network of the setting: one per name, the
    same for as long as a running fake routes the name (a tool that compares two lookups sees
    the same answer), and never another routed name's."""
    name = host_name(host)
    with _lock:
        return _BOOKS[_choice[0]].address(name, lambda other: bool(routes_for(other)))


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
    """The host name the fake gave ``host`` to, when ``host`` is one of its addresses (or of
    the network it hands them out from now): a connection to it is refused, whatever else
    the test may reach."""
    if not isinstance(host, str | bytes):
        return None
    ip = ip_of(host_name(host))
    if not isinstance(ip, ipaddress.IPv4Address):
        return None
    with _lock:
        for book in _BOOKS.values():
            if ip in book.network and str(ip) in book.name_at:
                return book.name_at[str(ip)]
    return "a host of a fake upstream" if ip in fake_network() else None


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
