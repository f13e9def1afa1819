"""The network guard: under the plugin, a test that tries to reach a non-loopback address fails.

It wraps the standard socket entry points (``socket.getaddrinfo``, ``socket.create_connection``,
``socket.socket.connect`` and ``connect_ex``), which every client in the standard library's
socket model goes through, asyncio's included. It refuses before any packet leaves: the DNS
lookup of a non-loopback name is refused too, so the failure never reads like a DNS error.
What it refuses is recorded, and the plugin fails the test with it even when the code under
test caught the error.

Loopback (127.0.0.0/8, ::1, ``localhost``), the unspecified address, this machine's own host
name and unix sockets stay allowed, for local test servers. Not covered: raw UDP
(``sendto``), C extensions with their own sockets, and event loops that bypass Python's socket
module (uvloop's ``create_connection``).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from typing import Any

from ._docs import docs_ref

DOCS = docs_ref("docs/how-to/fake-upstream.md", "The network guard")


class NetworkBlockedError(ConnectionRefusedError):
    """A test tried to reach a non-loopback address; raised before anything was sent."""


class Guard:
    """One session's view: whether the running test may use the network, and what it tried."""

    def __init__(self) -> None:
        self.allow = True  # outside a test (collection, session hooks) nothing is checked
        self.blocked: list[str] = []

    def begin(self, *, allow_network: bool) -> None:
        self.allow = allow_network
        self.blocked.clear()

    def end(self) -> None:
        self.allow = True

    def take(self) -> list[str]:
        """What was refused since the last call, each place once, in order."""
        seen = list(dict.fromkeys(self.blocked))
        self.blocked.clear()
        return seen


_guards: list[Guard] = []  # one per configured session, innermost (pytester) last
_originals: dict[str, Any] = {}
_local_names: set[str] = set()


def install() -> Guard:
    """A guard for one session; the socket functions are wrapped while any guard exists."""
    if not _guards:
        _patch()
    guard = Guard()
    _guards.append(guard)
    return guard


def uninstall(guard: Guard) -> None:
    if guard in _guards:
        _guards.remove(guard)
    if not _guards:
        _unpatch()


def failure_message(places: list[str]) -> str:
    listed = ", ".join(places)
    first = places[0].rsplit(":", 1)[0].strip("[]")
    return (
        f"pytest-nucleo blocked a network connection to {listed}: tests do not reach the "
        "network. Fake the upstream with the fake_upstream fixture, e.g. "
        f"fake_upstream.get('https://{first}/...').respond(200, json=...); or, if the test "
        "really needs the network, mark it @pytest.mark.nucleo(allow_network=True). "
        f"See {DOCS}."
    )


def _is_local(host: object) -> bool:
    if host is None:
        return True  # getaddrinfo(None, port): the passive or loopback address
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    name = host.strip("[]").rstrip(".").lower()
    if not name or name == "localhost" or name.endswith(".localhost"):
        return True
    if not _local_names:
        _local_names.add(socket.gethostname().lower())
    if name in _local_names:
        return True
    try:
        ip = ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        return False  # a name to resolve: refused before the lookup goes out
    mapped = getattr(ip, "ipv4_mapped", None)
    if mapped is not None:
        ip = mapped
    return ip.is_loopback or ip.is_unspecified


def _check(host: object, port: object) -> None:
    if not _guards or _guards[-1].allow or _is_local(host):
        return
    shown = host.decode("ascii", "replace") if isinstance(host, bytes) else str(host)
    if ":" in shown:
        shown = f"[{shown}]"
    place = f"{shown}:{port}" if port not in (None, "", 0) else shown
    _guards[-1].blocked.append(place)
    raise NetworkBlockedError(failure_message([place]))


def _address(address: object) -> tuple[object, object] | None:
    """The host and port of an internet socket address; None for a unix socket's path."""
    if isinstance(address, tuple) and len(address) >= 2:
        return address[0], address[1]
    return None


def _patch() -> None:
    getaddrinfo: Callable[..., Any] = socket.getaddrinfo
    create_connection: Callable[..., Any] = socket.create_connection
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
        create_connection=create_connection,
        connect=connect,
        connect_ex=connect_ex,
    )

    def guarded_getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        _check(host, port)
        return _originals["getaddrinfo"](host, port, *args, **kwargs)

    def guarded_create_connection(address: Any, *args: Any, **kwargs: Any) -> Any:
        parts = _address(address)
        if parts is not None:
            _check(*parts)
        return _originals["create_connection"](address, *args, **kwargs)

    def guarded_connect(self: socket.socket, address: Any) -> Any:
        parts = _address(address)
        if parts is not None:
            _check(*parts)
        return _originals["connect"](self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> Any:
        parts = _address(address)
        if parts is not None:
            _check(*parts)
        return _originals["connect_ex"](self, address)

    socket.getaddrinfo = guarded_getaddrinfo
    socket.create_connection = guarded_create_connection
    socket.socket.connect = guarded_connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = guarded_connect_ex  # type: ignore[method-assign,assignment]


def _unpatch() -> None:
    if not _originals:
        return
    socket.getaddrinfo = _originals.pop("getaddrinfo")
    socket.create_connection = _originals.pop("create_connection")
    own = _originals.pop("own")
    for name in ("connect", "connect_ex"):
        original = _originals.pop(name)
        if own[name]:
            setattr(socket.socket, name, original)
        else:
            delattr(socket.socket, name)
