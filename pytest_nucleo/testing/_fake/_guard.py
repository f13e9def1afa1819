"""The network guard: under the plugin, a guarded test that tries to reach a non-loopback
address fails, with a message saying what was blocked, by which library, and whether a fake
route for that host exists (worded by ``_refusal``).

It wraps the standard socket entry points (``socket.getaddrinfo``, ``gethostbyname``,
``gethostbyname_ex``, ``socket.create_connection``, ``socket.socket.connect`` and
``connect_ex``), which every client in the standard library's socket model goes through,
asyncio's included. It refuses before any packet leaves: the DNS lookup of a non-loopback name
is refused too. What it refuses is recorded, and the plugin fails the test with it even when
the code under test caught the error.

While a fake upstream runs, the lookup of a host one of its routes names succeeds: it resolves
to an address of the network the session chose (``_names.fake_network()``), which only the
fake answers, so a tool that checks the address before calling (against private networks,
say) still reaches the fake through its faked client. A connection to such an address is
refused always, guarded test or not: the address only the fake answers, and a client that
connects to it is one the fake does not answer.

Loopback (127.0.0.0/8, ::1, ``localhost``), the unspecified address, this machine's own host
name, unix sockets and the allowed hosts (``_hosts``) stay allowed. Not covered: raw UDP
(``sendto``), C extensions with their own sockets (grpc's core, pycurl's libcurl), and event
loops that bypass Python's socket module (uvloop's ``create_connection``).

A refusal names the clients the fake answers, each backend's (``_backends.faked_clients``): the
standard library's http.client, urllib3 (from version 2 on) and httplib2 included, so botocore
and google-api-python-client, which call them, are answered by the fake and never reach the
guard.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from . import _names
from ._hosts import AllowList, host_name, ip_of
from ._names import (
    fake_address,
    fake_addrinfo,
    fake_name_of,
    fake_started,
    fake_stopped,
    routes_for,
)
from ._refusal import Caller, Tried, find_caller, refusal_message

__all__ = [
    "AllowList",
    "Blocked",
    "Guard",
    "NetworkBlockedError",
    "failure_message",
    "fake_started",
    "fake_stopped",
    "install",
    "routes_for",
    "uninstall",
]


class NetworkBlockedError(ConnectionRefusedError):
    """A test tried to reach a non-loopback address; raised before anything was sent."""


@dataclass(frozen=True)
class Blocked:
    """One refusal: what was tried (a DNS lookup or a connection), where, by whom, and the
    whole message the test fails with."""

    place: str
    message: str


class Guard:
    """One session's view: whether the running test is guarded, what it may still reach, and
    what it tried."""

    def __init__(self, *, allow_hosts: Iterable[str] = ()) -> None:
        self.allow = True  # outside a test (collection, session hooks) nothing is checked
        self.while_faking = False  # guarded only while a fake upstream runs
        self.allowed = AllowList(allow_hosts)  # the session's (--nucleo-allow-hosts)
        self.test_allowed = AllowList(())  # the running test's (its marker's allow_hosts)
        self.blocked: list[Blocked] = []

    def begin(
        self,
        *,
        allow_network: bool,
        while_faking: bool = False,
        allow_hosts: Iterable[str] = (),
    ) -> None:
        """Start a test: guarded (``allow_network=False``), guarded only while a fake upstream
        runs (``while_faking=True``), or not at all; ``allow_hosts`` adds to the session's
        allowed hosts for this test."""
        self.allow = allow_network
        self.while_faking = while_faking and not allow_network
        self.test_allowed = AllowList(allow_hosts)
        self.blocked.clear()

    def end(self) -> None:
        self.allow = True
        self.while_faking = False
        self.test_allowed = AllowList(())

    def allows(self, name: str) -> bool:
        return self.allowed.allows(name) or self.test_allowed.allows(name)

    def note(self, host: object, addresses: Iterable[object]) -> None:
        """After a lookup let through: the addresses of an allowed name are allowed too."""
        found = list(addresses)
        for allowed in (self.allowed, self.test_allowed):
            if allowed:
                allowed.note(host, found)

    def guarding(self) -> bool:
        if self.while_faking:
            return bool(_names.running)
        return not self.allow

    def take(self) -> list[Blocked]:
        """What was refused since the last call, each place once, in order."""
        seen: dict[str, Blocked] = {}
        for blocked in self.blocked:
            seen.setdefault(blocked.place, blocked)
        self.blocked.clear()
        return list(seen.values())


_guards: list[Guard] = []  # one per configured session, innermost (pytester) last
_originals: dict[str, Any] = {}
_local_names: set[str] = set()


def install(*, allow_hosts: Iterable[str] = ()) -> Guard:
    """A guard for one session; the socket functions are wrapped while any guard exists."""
    guard = Guard(allow_hosts=allow_hosts)  # (first: a bad entry leaves nothing patched)
    if not _guards:
        _patch()
    _guards.append(guard)
    return guard


def uninstall(guard: Guard) -> None:
    if guard in _guards:
        _guards.remove(guard)
    if not _guards:
        _unpatch()


def _faked_clients() -> list[str]:
    """The clients the fake answers (read when a refusal is worded: the backends' module
    imports httpx and respx, which the plugin's import must not)."""
    from ._backends import faked_clients

    return faked_clients()


def _refusal(kind: str, host: str, port: object, *, by: Caller, name: str | None = None) -> Blocked:
    """The refusal of a lookup (``kind="lookup"``) or connection of ``host``; ``name`` is the
    host the fake gave ``host`` (an address of the chosen network) to."""
    tried = Tried(kind, host, port)
    message = refusal_message(
        tried,
        by,
        routes=routes_for(name if name is not None else host),
        fake_routes=[r.describe() for fake in _names.running for r in fake.routes]
        if _names.running
        else None,
        faked_clients=_faked_clients(),
        fake_name=name,
    )
    return Blocked(tried.place, message)


def failure_message(blocked: list[Blocked]) -> str:
    """The test's failure: the first refusal whole, then the places of the others."""
    message = blocked[0].message
    if len(blocked) > 1:
        others = ", ".join(b.place for b in blocked[1:])
        message += f"\nIt also blocked: {others}."
    return message


# -- the checks ----------------------------------------------------------------------------


def _is_local(host: object) -> bool:
    if host is None:
        return True  # getaddrinfo(None, port): the passive or loopback address
    if not isinstance(host, str | bytes):
        return False
    name = host_name(host)
    if not name or name == "localhost" or name.endswith(".localhost"):
        return True
    if not _local_names:
        _local_names.add(socket.gethostname().lower())
    if name in _local_names:
        return True
    ip = ip_of(name)
    if ip is None:
        return False  # a name to resolve: refused before the lookup goes out
    return ip.is_loopback or ip.is_unspecified


def _refuse(blocked: Blocked) -> None:
    if _guards:
        _guards[-1].blocked.append(blocked)
    raise NetworkBlockedError(blocked.message)


def _check_connect(host: object, port: object) -> None:
    name = host_name(host)
    fake_name = fake_name_of(host)
    # An address only the fake answers: refused whatever the test may reach.
    if fake_name is not None:
        _refuse(_refusal("connect", name, port, by=find_caller(2), name=fake_name))
    if not _guards or not _guards[-1].guarding() or _is_local(host):
        return
    if _guards[-1].allows(name):
        return
    _refuse(_refusal("connect", name, port, by=find_caller(2)))


def _resolve(host: object, port: object) -> str | None:
    """The fake's address for ``host`` when a running fake routes it; else check the lookup
    (refused in a guarded test unless local or allowed) and return None."""
    # Only a name beyond this machine: an address resolves to itself, and a local name stays
    # local (a route for localhost answers through the faked client all the same).
    name = host_name(host)
    if (
        _names.running
        and isinstance(host, str | bytes)
        and ip_of(name) is None
        and not _is_local(host)
        and routes_for(name)
    ):
        return fake_address(name)
    if not _guards or not _guards[-1].guarding() or _is_local(host):
        return None
    if _guards[-1].allows(name):
        return None
    _refuse(_refusal("lookup", name, port, by=find_caller(2)))
    return None  # pragma: no cover - _refuse raises


def _note(host: object, addresses: Iterable[object]) -> None:
    if _guards and (_guards[-1].allowed or _guards[-1].test_allowed):
        _guards[-1].note(host, addresses)


def _address(address: object) -> tuple[object, object] | None:
    """The host and port of an internet socket address; None for a unix socket's path."""
    if isinstance(address, tuple) and len(address) >= 2:
        return address[0], address[1]
    return None


def _patch() -> None:
    getaddrinfo: Callable[..., Any] = socket.getaddrinfo
    connect = socket.socket.connect
    connect_ex = socket.socket.connect_ex
    # connect and connect_ex live on the C base class: remember whether the Python class had
    # its own, so unpatching restores exactly what was there.
    # The wrappers look the originals up when called, so a test of the guard can put a fake
    # below it and see that nothing reached the real function.
    own = {name: name in vars(socket.socket) for name in ("connect", "connect_ex")}
    _originals.update(
        own=own,
        getaddrinfo=getaddrinfo,
        gethostbyname=socket.gethostbyname,
        gethostbyname_ex=socket.gethostbyname_ex,
        create_connection=socket.create_connection,
        connect=connect,
        connect_ex=connect_ex,
    )

    def guarded_getaddrinfo(
        host: Any, port: Any, family: int = 0, type: int = 0, proto: int = 0, flags: int = 0
    ) -> Any:
        fake = _resolve(host, port)
        if fake is not None:
            return fake_addrinfo(host, fake, port, family, type, proto, flags)
        found = _originals["getaddrinfo"](host, port, family, type, proto, flags)
        _note(host, (info[4][0] for info in found))
        return found

    def guarded_gethostbyname(host: Any) -> Any:
        fake = _resolve(host, None)
        if fake is not None:
            return fake
        found = _originals["gethostbyname"](host)
        _note(host, [found])
        return found

    def guarded_gethostbyname_ex(host: Any) -> Any:
        fake = _resolve(host, None)
        if fake is not None:
            return (host_name(host), [], [fake])
        found = _originals["gethostbyname_ex"](host)
        _note(host, found[2])
        return found

    def guarded_create_connection(address: Any, *args: Any, **kwargs: Any) -> Any:
        parts = _address(address)
        if parts is not None:
            # A name is looked up first (create_connection calls getaddrinfo), an address
            # connected to: check each as what it is.
            if ip_of(host_name(parts[0])) is None and isinstance(parts[0], str | bytes):
                _resolve(*parts)
            else:
                _check_connect(*parts)
        return _originals["create_connection"](address, *args, **kwargs)

    def guarded_connect(self: socket.socket, address: Any) -> Any:
        parts = _address(address)
        if parts is not None:
            _check_connect(*parts)
        return _originals["connect"](self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> Any:
        parts = _address(address)
        if parts is not None:
            _check_connect(*parts)
        return _originals["connect_ex"](self, address)

    socket.getaddrinfo = guarded_getaddrinfo
    socket.gethostbyname = guarded_gethostbyname
    socket.gethostbyname_ex = guarded_gethostbyname_ex
    socket.create_connection = guarded_create_connection
    socket.socket.connect = guarded_connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = guarded_connect_ex  # type: ignore[method-assign,assignment]


def _unpatch() -> None:
    if not _originals:
        return
    socket.getaddrinfo = _originals.pop("getaddrinfo")
    socket.gethostbyname = _originals.pop("gethostbyname")
    socket.gethostbyname_ex = _originals.pop("gethostbyname_ex")
    socket.create_connection = _originals.pop("create_connection")
    own = _originals.pop("own")
    for name in ("connect", "connect_ex"):
        original = _originals.pop(name)
        if own[name]:
            setattr(socket.socket, name, original)
        else:
            delattr(socket.socket, name)
